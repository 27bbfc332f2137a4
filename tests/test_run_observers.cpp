// The run loop's observers (run/observer.hpp, run/observers.hpp): when a
// Trigger fires, the order in which an ObserverList tells its observers, and
// a caller that steps the Simulation itself with the standard observers
// writing the same files as run_to_end().

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "app_support.hpp"
#include "run/observers.hpp"
#include "run/run_loop.hpp"
#include "scene/scene_builder.hpp"

using namespace dem;
namespace fs = std::filesystem;

namespace {

std::string ring_scene() {
  return R"([run]
integrator = "rrp25"
time_step = 2e-3
steps = 40
[output]
energy_every = 7
vtk_every = 10
checkpoint_every = 15
[[particles]]
source = "ring_torus"
count = 20
speed = 3.0
gap = 0.0
[bonds]
bending = 10.0
axial = 200.0
shear = 200.0
[contact]
stiffness = 2100.0
skin_fraction = 0.2
[[wall]]
point = [0, 0, 0]
normal = [1, 0, 0]
stiffness = 2100.0
)";
}

Simulation simulation_of(const std::string& text) {
  BuiltScene b = build_scene(parse_scene_text(text, "ring.toml", "."));
  Scene& s = b.scene;
  ForceField field(s.particles, std::move(s.bonds), s.contact, std::move(s.walls), s.gravity);
  return Simulation(std::move(s.particles), std::move(field), b.map, b.time_step);
}

RunPlan plan_of(const fs::path& out, const std::string& text) {
  const SceneSpec spec = parse_scene_text(text, "ring.toml", ".");
  RunPlan plan;
  plan.output_dir = out;
  plan.end_step = 40;
  plan.output = spec.output;
  plan.scene_path = "ring.toml";
  plan.scene_text = text;
  plan.progress = false;
  return plan;
}

fs::path folder(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("dem_test_run_observers_" + std::to_string(::getpid())) / name;
  fs::remove_all(p);
  return p;
}

/// Records the hooks it is told of, by name and step, into a shared list.
class Recorder : public RunObserver {
 public:
  Recorder(std::string name, Trigger t, std::vector<std::string>& seen)
      : RunObserver(std::move(t)), name_(std::move(name)), seen_(seen) {}
  void start(RunContext&) override { seen_.push_back(name_ + " start"); }
  void after_step(RunContext& ctx) override {
    seen_.push_back(name_ + " " + (ctx.at_start ? "first" : std::to_string(ctx.step)));
  }
  void finish(RunContext& ctx) override { seen_.push_back(name_ + " finish " + std::to_string(ctx.step)); }
  void fail(RunContext&) override { seen_.push_back(name_ + " fail"); }

 private:
  std::string name_;
  std::vector<std::string>& seen_;
};

/// Steps `sim` to plan.end_step telling `list`, as a caller of the
/// observers without run_to_end() does.
void drive(Simulation& sim, RunContext& ctx, ObserverList& list) {
  list.start(ctx);
  list.begin(ctx);
  while (ctx.step < ctx.plan.end_step && !ctx.stop) {
    sim.step();
    list.stepped(ctx);
  }
  list.finish(ctx);
}

}  // namespace

TEST(Trigger, FiresOnItsScheduleAtTheStartAndTheLastStep) {
  Simulation sim = simulation_of(ring_scene());
  RunPlan plan = plan_of({}, ring_scene());
  plan.end_step = 12;
  RunContext ctx(sim, plan, std::cerr);
  const auto fired = [&](const Trigger& t) {
    std::string steps = t(ctx) ? "start" : "";
    ctx.at_start = false;
    for (std::uint64_t k = 1; k <= 12; ++k) {
      ctx.step = k;
      ctx.last = k == 12;
      if (!t(ctx)) continue;
      if (!steps.empty()) steps += ',';
      steps += std::to_string(k);
    }
    ctx.at_start = true;
    return steps;
  };
  ctx.at_start = true;
  EXPECT_EQ(fired(Trigger()), "");
  EXPECT_EQ(fired(Trigger::every(0).or_at_last()), "12");
  EXPECT_EQ(fired(Trigger::every(5)), "5,10");
  EXPECT_EQ(fired(Trigger::every(5).or_at_start().or_at_last()), "start,5,10,12");
  EXPECT_EQ(fired(Trigger::every(4).but_not_last()), "4,8");
  EXPECT_EQ(fired(Trigger::always()), "1,2,3,4,5,6,7,8,9,10,11,12");
  EXPECT_EQ(fired(Trigger::at_steps({9, 2, 30})), "2,9");
}

TEST(Trigger, AtTimesFiresAtTheFirstStepAtOrPastEachTime) {
  Simulation sim = simulation_of(ring_scene());
  RunPlan plan = plan_of({}, ring_scene());
  plan.end_step = 10;
  RunContext ctx(sim, plan, std::cerr);
  const double h = sim.time_step();
  const Trigger t = Trigger::at_times({2.5 * h, 4 * h, 4.2 * h, 100 * h});
  std::vector<std::uint64_t> steps;
  while (sim.step_count() < 10) {
    sim.step();
    ctx.step = sim.step_count();
    if (t(ctx)) steps.push_back(ctx.step);
  }
  EXPECT_EQ(steps, (std::vector<std::uint64_t>{3, 4, 5}));
}

TEST(ObserverList, TellsInOrderStopsAtAStopAndFailsInReverse) {
  Simulation sim = simulation_of(ring_scene());
  RunPlan plan = plan_of({}, ring_scene());
  plan.end_step = 4;
  RunContext ctx(sim, plan, std::cerr);
  std::vector<std::string> seen;
  ObserverList list;
  list.add(std::make_unique<Recorder>("a", Trigger::every(2).or_at_last(), seen));
  list.add(std::make_unique<Recorder>("b", Trigger::always(), seen));
  drive(sim, ctx, list);
  list.fail(ctx);
  EXPECT_EQ(seen, (std::vector<std::string>{"a start", "b start", "b 1", "a 2", "b 2", "b 3", "a 4", "b 4",
                                            "a finish 4", "b finish 4", "b fail", "a fail"}));
  // Without an output folder a run is not fresh: nothing at the start.
  EXPECT_FALSE(ctx.fresh);
}

TEST(ObserverList, AnObserverThatStopsTheRunHidesTheStepFromThoseAfterIt) {
  Simulation sim = simulation_of(ring_scene());
  RunPlan plan = plan_of({}, ring_scene());
  plan.end_step = 10;
  RunContext ctx(sim, plan, std::cerr);
  std::vector<std::string> seen;
  struct Stopper : RunObserver {
    Stopper() : RunObserver(Trigger::at_steps({3})) {}
    void after_step(RunContext& c) override { c.stop = true; }
  };
  ObserverList list;
  list.add(std::make_unique<Stopper>());
  list.add(std::make_unique<Recorder>("r", Trigger::always(), seen));
  list.start(ctx);
  list.begin(ctx);
  while (ctx.step < plan.end_step && !ctx.stop) {
    sim.step();
    list.stepped(ctx);
  }
  EXPECT_EQ(ctx.step, 3u);
  EXPECT_EQ(seen, (std::vector<std::string>{"r start", "r 1", "r 2"}));
}

// A caller that steps the Simulation itself, with the standard observers
// and one of its own, writes what run_to_end() writes.
TEST(StandardObservers, ACallerSteppingItselfWritesWhatRunToEndWrites) {
  const std::string text = ring_scene();
  const fs::path by_loop = folder("by_loop"), by_caller = folder("by_caller");
  {
    Simulation sim = simulation_of(text);
    std::ostringstream log;
    ASSERT_EQ(run_to_end(sim, plan_of(by_loop, text), log), kExitOk) << log.str();
  }
  std::vector<std::string> seen;
  {
    Simulation sim = simulation_of(text);
    RunPlan plan = plan_of(by_caller, text);
    std::ostringstream log;
    RunContext ctx(sim, plan, log);
    StandardObservers run(ctx);
    run.list.add(std::make_unique<Recorder>("mine", Trigger::every(15).or_at_start(), seen));
    run.open(ctx);
    drive(sim, ctx, run.list);
    EXPECT_EQ(ctx.energy_rows, 6u);  // steps 0, 7, ..., 35 (and 40, off the schedule)
    EXPECT_EQ(ctx.frame_times.size(), 5u);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"mine start", "mine first", "mine 15", "mine 30", "mine finish 40"}));
  for (const char* name : {"energy.csv", "particles.pvd", "bonds.pvd", "particles_000004.vtp", "bonds_000002.vtp"})
    EXPECT_EQ(dem::testing::read_file_text(by_caller / name), dem::testing::read_file_text(by_loop / name)) << name;
  EXPECT_TRUE(fs::exists(by_caller / kCheckpointFile));
  EXPECT_TRUE(fs::exists(by_caller / kRunIdFile));
}
