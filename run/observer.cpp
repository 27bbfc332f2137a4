#include "run/observer.hpp"

#include <algorithm>
#include <iostream>

namespace dem {

RunContext::RunContext(Simulation& s, RunPlan& p, std::ostream& l)
    : sim(s),
      plan(p),
      log(l),
      domain(p.domain),
      whole(p.domain != nullptr ? p.domain->reference() : s),
      out(p.output_dir),
      files(!p.output_dir.empty()),
      writes(files && (domain == nullptr || domain->rank() == 0)),
      fresh(files && !p.resume),
      particles(domain != nullptr ? domain->particle_count() : s.particles().size()),
      first_step(s.step_count()),
      step(first_step),
      frame_times(p.frame_times),
      energy_rows(p.energy_rows) {}

const EnergyReport& RunContext::energy() {
  if (!report_ || report_step_ != step) {
    report_ = sim.energy_report();
    report_step_ = step;
  }
  return *report_;
}

double RunContext::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
}

void RunContext::end_progress_line() {
  if (progress_line) std::cout << "\n" << std::flush;
  progress_line = false;
}

Trigger Trigger::every(std::uint64_t n) {
  Trigger t;
  if (n > 0) {
    t.kind_ = Kind::every;
    t.every_ = n;
  }
  return t;
}

Trigger Trigger::at_steps(std::vector<std::uint64_t> steps) {
  Trigger t;
  t.kind_ = Kind::steps;
  std::sort(steps.begin(), steps.end());
  t.steps_ = std::move(steps);
  return t;
}

Trigger Trigger::at_times(std::vector<double> times) {
  Trigger t;
  t.kind_ = Kind::times;
  std::sort(times.begin(), times.end());
  t.times_ = std::move(times);
  return t;
}

bool Trigger::scheduled(const RunContext& ctx) const {
  if (ctx.at_start) return false;
  switch (kind_) {
    case Kind::never:
      return false;
    case Kind::every:
      return ctx.step % every_ == 0;
    case Kind::steps:
      return std::binary_search(steps_.begin(), steps_.end(), ctx.step);
    case Kind::times: {
      // The step ending at t covers (t - h, t]; a little slack for the
      // rounding of t.
      const double t = ctx.sim.time(), h = ctx.sim.time_step(), slack = 1e-9 * h;
      const auto it = std::upper_bound(times_.begin(), times_.end(), t - h + slack);
      return it != times_.end() && *it <= t + slack;
    }
  }
  return false;
}

bool Trigger::operator()(const RunContext& ctx) const {
  if (ctx.at_start) return start_;
  if (not_last_ && ctx.last) return false;
  return scheduled(ctx) || (last_ && ctx.last);
}

void ObserverList::open(RunContext& ctx) {
  for (auto& o : observers_) o->open(ctx);
}

void ObserverList::start(RunContext& ctx) {
  for (auto& o : observers_) o->start(ctx);
  ctx.started = std::chrono::steady_clock::now();
}

void ObserverList::begin(RunContext& ctx) {
  ctx.at_start = true;
  for (auto& o : observers_) o->collect(ctx);
  if (ctx.fresh) notify(ctx);
  ctx.at_start = false;
}

void ObserverList::stepped(RunContext& ctx) {
  ctx.step = ctx.sim.step_count();
  ctx.last = !ctx.plan.open_end && ctx.step == ctx.plan.end_step;
  for (auto& o : observers_) o->collect(ctx);
  // New parts, if due, once this step's failures (the bonds the new parts
  // leave out) and solver counts are taken from the old ones.
  if (ctx.domain != nullptr) ctx.domain->after_step();
  notify(ctx);
}

void ObserverList::notify(RunContext& ctx) {
  for (auto& o : observers_) {
    if (ctx.stop) return;
    if (o->trigger()(ctx)) o->after_step(ctx);
  }
}

void ObserverList::last_step(RunContext& ctx) {
  ctx.last = true;
  for (auto& o : observers_) {
    if (ctx.stop) return;
    const Trigger& t = o->trigger();
    if (t(ctx) && !t.scheduled(ctx)) o->after_step(ctx);
  }
}

void ObserverList::interrupt(RunContext& ctx) {
  for (auto& o : observers_) o->interrupt(ctx);
}

void ObserverList::finish(RunContext& ctx) {
  for (auto& o : observers_) o->finish(ctx);
}

void ObserverList::fail(RunContext& ctx) {
  for (auto it = observers_.rbegin(); it != observers_.rend(); ++it) (*it)->fail(ctx);
}

}  // namespace dem
