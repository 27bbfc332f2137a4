#include "engine/fracture_events.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

namespace dem {

EventVerdict judge_trial_step(std::span<const double> start, std::span<const double> end, double dt,
                              double tolerance, Collective& collective) {
  if (start.size() != end.size())
    throw std::invalid_argument("judge_trial_step: the stress ratios at the start and end of a step differ in count");
  // Serial: max and min are exact and order-free, and the loop is cheap
  // beside the Newton iterations of the step it judges.
  const double limit = 1.0 + tolerance, target = 1.0 + 0.5 * tolerance;
  double largest = 0.0, earliest = 1.0;
  for (std::size_t k = 0; k < end.size(); ++k) {
    largest = std::max(largest, end[k]);
    if (!(end[k] > limit)) continue;
    // The secant through (0, start) and (1, end) meets the target at f; a
    // ratio at or above the target at the start (not left after fracture)
    // asks for the shortest retry.
    const double f = start[k] < target ? (target - start[k]) / (end[k] - start[k]) : 0.0;
    earliest = std::min(earliest, f);
  }
  std::array<double, 2> both{largest, -earliest};
  collective.max(both);
  EventVerdict v;
  v.largest_ratio = both[0];
  v.accept = !(v.largest_ratio > limit);
  if (!v.accept) v.retry_step = dt * std::clamp(-both[1], 1e-3, 1.0 - 1e-3);
  return v;
}

}  // namespace dem
