#include "run/run_plan.hpp"

#include "scene/scene_builder.hpp"

namespace dem {

double checkpoint_time_at(const CheckpointState& c, std::uint64_t step) {
  return c.time_origin + static_cast<double>(step - c.step_origin) * c.time_step;
}

std::uint64_t step_at_time(double t, double time_origin, std::uint64_t step_origin, double h) {
  const double left = t - time_origin;
  return step_origin + (left > 0.0 ? steps_to_time(left, h) : 0);
}

std::uint64_t checkpoint_step_at(const CheckpointState& c, double t) {
  return step_at_time(t, c.time_origin, c.step_origin, c.time_step);
}

std::uint64_t last_scheduled_row(std::uint64_t step, std::uint64_t energy_every) {
  const bool scheduled = energy_every > 0 && step % energy_every == 0;
  return scheduled || step == 0 ? step : step - 1;
}

void take_run_bookkeeping(const CheckpointState& c, RunPlan& plan) {
  plan.run_id = c.run_id;
  plan.energy_check = c.energy_check;
  plan.energy_limits.max_drift = c.max_energy_drift;
  plan.energy_limits.warn_drift = c.warn_energy_drift;
  plan.frame_times = c.frame_times;
  plan.energy_rows = c.energy_rows;
}

CheckpointState checkpoint_of(const Simulation& sim, const RunPlan& plan,
                              const std::vector<double>& frame_times, std::uint64_t energy_rows) {
  CheckpointState c = capture_simulation(sim);
  add_run_bookkeeping(c, plan, frame_times, energy_rows);
  return c;
}

void add_run_bookkeeping(CheckpointState& c, const RunPlan& plan, const std::vector<double>& frame_times,
                         std::uint64_t energy_rows) {
  c.scene_path = plan.scene_path;
  c.scene_text = plan.scene_text;
  c.frame_times = frame_times;
  c.energy_rows = energy_rows;
  c.vtk_every = plan.output.vtk_every;
  c.energy_every = plan.output.energy_every;
  c.checkpoint_every = plan.output.checkpoint_every;
  c.end_step = plan.end_step;
  c.run_id = plan.run_id;
  c.energy_check = plan.energy_check;
  c.max_energy_drift = plan.energy_limits.max_drift;
  c.warn_energy_drift = plan.energy_limits.warn_drift;
}

}  // namespace dem
