#pragma once
/// \file invalid_key.hpp
/// A value the scene layer refuses, with the key that gave it, so that the
/// scene parser can name the key and its place in the file
/// (docs/scene-format.md) while library callers get a std::invalid_argument.

#include <stdexcept>
#include <string>

namespace dem {

/// std::invalid_argument whose what() is "KEY: WHAT"; key() and problem()
/// give the two parts.
class InvalidKey : public std::invalid_argument {
 public:
  InvalidKey(std::string key, const std::string& problem)
      : std::invalid_argument(key + ": " + problem), key_(std::move(key)), problem_(problem) {}
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  std::string key_;
  std::string problem_;
};

}  // namespace dem
