#pragma once
/// \file stage_times.hpp
/// Wall-clock seconds per stage of the time step (integrator passes, the
/// rebuild phase, each provider's evaluation, the gather, fracture), summed
/// over the steps while a StageTimes is attached (Simulation::set_stage_times;
/// `dem_bench --profile` prints the table). Costs one branch per stage when
/// none is attached. Stages keep the order of their first appearance.

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace dem {

class StageTimes {
 public:
  /// Adds `seconds` to `stage` (a new stage goes last).
  void add(const std::string& stage, double seconds) {
    for (auto& s : stages_)
      if (s.first == stage) {
        s.second += seconds;
        return;
      }
    stages_.emplace_back(stage, seconds);
  }
  const std::vector<std::pair<std::string, double>>& stages() const { return stages_; }
  double total() const {
    double t = 0.0;
    for (const auto& s : stages_) t += s.second;
    return t;
  }
  void clear() { stages_.clear(); }

 private:
  std::vector<std::pair<std::string, double>> stages_;
};

/// Times one stage from construction to destruction into `times` (nothing
/// when `times` is null).
class StageClock {
 public:
  StageClock(StageTimes* times, const char* stage) : times_(times), stage_(stage) {
    if (times_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  StageClock(StageTimes* times, std::string stage) : times_(times), name_(std::move(stage)) {
    if (times_ != nullptr) start_ = std::chrono::steady_clock::now();
  }
  ~StageClock() {
    if (times_ == nullptr) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    times_->add(stage_ != nullptr ? std::string(stage_) : name_, s);
  }
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;

 private:
  StageTimes* times_;
  const char* stage_ = nullptr;
  std::string name_;
  std::chrono::steady_clock::time_point start_{};
};

}  // namespace dem
