#include "run/run_loop.hpp"

#include "run/run_session.hpp"

namespace dem {

int run_to_end(Simulation& sim, const RunPlan& plan, std::ostream& log, RunSummary* summary) {
  RunSession run(sim, plan, log);  // throws before any step for a folder that cannot be used
  run.start();
  try {
    run.begin();
    while (!run.done()) {
      sim.step();
      run.stepped();
    }
    if (run.stopped()) {
      run.interrupt();
      return kExitInterrupted;
    }
    run.finish();
  } catch (const std::exception& e) {
    return run.fail(e);
  }
  if (summary != nullptr) *summary = run.summary();
  if (!run.context().files) return kExitOk;  // a benchmark reports for itself
  run.write_summary();
  return kExitOk;
}

}  // namespace dem
