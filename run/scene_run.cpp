#include "run/scene_run.hpp"

#include <filesystem>

#include "run/output_folder.hpp"

namespace dem {

RunPlan scene_run_plan(const SceneSpec& spec, const BuiltScene& built, const std::string& scene_path,
                       const std::string& scene_text) {
  RunPlan plan;
  plan.output_dir = "output";
  plan.end_step = built.steps;
  plan.output = built.output;
  plan.scene_path = scene_path;
  plan.scene_text = scene_text;
  plan.energy_limits.max_drift = spec.run.max_energy_drift;
  plan.energy_limits.warn_drift = spec.run.warn_energy_drift;
  plan.energy_limits.implicit_rise = spec.run.implicit_energy_rise;
  if (!built.packing_json.empty()) plan.scene_files.emplace_back(kPackingReportFile, built.packing_json);
  return plan;
}

RunPlan checkpoint_run_plan(const CheckpointState& c, std::uint64_t end_without_scene) {
  RunPlan plan;
  plan.output_dir = "output";
  plan.scene_path = c.scene_path;
  plan.scene_text = c.scene_text;
  plan.energy_limits.max_drift = c.max_energy_drift;
  plan.energy_limits.warn_drift = c.warn_energy_drift;
  plan.energy_limits.implicit_rise = kDefaultImplicitEnergyRise;
  if (c.scene_text.empty()) {
    plan.output.vtk_every = c.vtk_every;
    plan.output.energy_every = c.energy_every;
    plan.output.checkpoint_every = c.checkpoint_every;
    plan.end_step = end_without_scene;
    return plan;
  }
  const SceneSpec spec =
      parse_scene_text(c.scene_text, c.scene_path, std::filesystem::path(c.scene_path).parent_path());
  plan.output = spec.output;
  plan.energy_limits.implicit_rise = spec.run.implicit_energy_rise;
  plan.end_step = spec.run.end_time ? checkpoint_step_at(c, *spec.run.end_time) : end_step_of(spec.run, c.time_step);
  return plan;
}

}  // namespace dem
