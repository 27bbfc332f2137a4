#pragma once
/// \file scene_run.hpp
/// The plan of a run of a scene file, and of a run continued from a
/// checkpoint, as `dem run` and `dem restart` make them before their
/// command-line options change them; the Python module (python/) makes its
/// runs with the same functions.

#include <cstdint>
#include <string>

#include "io/checkpoint.hpp"
#include "run/run_plan.hpp"
#include "scene/scene_builder.hpp"
#include "scene/scene_spec.hpp"

namespace dem {

/// The plan of `dem run` for the scene `spec` built into `built`: to the
/// scene's end step (built.steps), with its [output] intervals and [run]
/// energy limits, the scene's path and text kept for checkpoints, into
/// "output". Nothing is checked here (build_scene did).
RunPlan scene_run_plan(const SceneSpec& spec, const BuiltScene& built, const std::string& scene_path,
                       const std::string& scene_text);

/// The plan of a run continued from checkpoint `c` before any option
/// changes it: the output intervals, implicit energy rise and end step of
/// the scene text it keeps (the end on the checkpoint's clock,
/// checkpoint_step_at()), or, for a run without a scene file (dem_torus),
/// the intervals it keeps and `end_without_scene`; its scene path and text
/// and its drift limits; into "output". Its output folder and bookkeeping
/// are for plan_restart_output() (run/output_folder.hpp) to set. Throws
/// SceneError if the kept scene text does not parse.
RunPlan checkpoint_run_plan(const CheckpointState& c, std::uint64_t end_without_scene);

}  // namespace dem
