#pragma once
/// \file wall_motion.hpp
/// How plane walls move (docs/model.md §11.8; [[wall]] velocity,
/// servo_stress, docs/scene-format.md): at rest, at a prescribed velocity,
/// or along their normal under the servo that holds a normal stress
/// (PFC's and YADE's servo-controlled wall):
///
///     F_n = -F_wall . n                   (the compressive normal force the
///                                          particles exert, force)
///     v_n = clamp(g (P A - F_n), -v_max, v_max)
///     x_w(t) = x_w(t - h) + h v_n n
///
/// with P the target stress (Pa), A the area it acts on (m^2), g the gain
/// (m/(N s)) and F_n from the loads of the last force evaluation summed
/// over all MPI ranks: the wall moves towards the particles (along n) while
/// the force is below P A and away while it is above. A wall at a
/// prescribed velocity v is at x_w(t) = x_w(0) + v t.
///
/// WallMotions holds the settings and the motion state of a provider's
/// walls (WallProvider, WallContactProvider), its checkpoint block and the
/// loads' descriptive fields (core/force_provider.hpp BoundaryLoad). The
/// providers own the walls themselves (Wall::point, Wall::velocity are the
/// current ones).

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "contact/contact_potential.hpp"
#include "core/byte_stream.hpp"
#include "core/force_provider.hpp"

namespace dem {

/// The motion settings of one plane wall (SI units).
struct WallMotion {
  enum class Kind : std::uint8_t { fixed = 0, velocity = 1, servo = 2 };
  /// Its name in walls.csv; empty: "wall<k>" (k: its index among the scene's walls).
  std::string name;
  Kind kind = Kind::fixed;
  Vec3 velocity = Vec3::Zero();  ///< prescribed translation (Kind::velocity), length/time
  double servo_stress = 0.0;     ///< P (Pa), >= 0 (Kind::servo)
  double servo_area = 0.0;       ///< A (m^2), > 0
  double servo_gain = 0.0;       ///< g (m/(N s)), > 0
  double servo_max_speed = 0.0;  ///< v_max (m/s), > 0
};

/// The reason `m` is not a valid motion, or empty (a velocity that is not
/// finite; a servo with a negative or non-finite stress, or an area, gain
/// or maximum speed that is not finite and > 0).
std::string wall_motion_problem(const WallMotion& m);

/// A wall provider whose walls can be given motions (WallProvider,
/// WallContactProvider): how a scene sets them up without naming the law.
class MovableWalls {
 public:
  virtual ~MovableWalls() = default;
  /// One motion per wall, from t = 0 at the walls' present points. Throws
  /// std::invalid_argument naming the wall for a bad motion.
  virtual void set_motions(std::vector<WallMotion> motions) = 0;
};

/// The settings and motion state of a provider's plane walls.
class WallMotions {
 public:
  /// All walls at rest, named "wall<k>".
  explicit WallMotions(std::size_t walls = 0);
  /// One motion per wall of `walls` (their points are the origins of the
  /// motion: t = 0). Throws std::invalid_argument naming the wall for a
  /// count that differs from the walls', a bad motion
  /// (wall_motion_problem) or two walls of one name.
  WallMotions(std::span<const Wall> walls, std::vector<WallMotion> motions);

  /// Sets each wall's Wall::velocity to the one it starts with (its
  /// prescribed velocity; zero for the others): the velocity of the step
  /// that "led" to t = 0.
  void set_initial_velocities(std::span<Wall> walls) const;

  std::size_t size() const { return motions_.size(); }
  const WallMotion& motion(std::size_t w) const { return motions_.at(w); }
  /// walls.csv name of wall w.
  const std::string& name(std::size_t w) const { return motions_.at(w).name; }
  /// True if some wall moves (a prescribed velocity or a servo).
  bool moves() const;
  /// Displacement of wall w along its normal since t = 0 (length).
  double displacement(std::size_t w) const { return displacement_.at(w); }

  /// Moves `walls` (Wall::point, Wall::velocity) to time t, a step h after
  /// the last configuration; `loads` (one per wall, reduced over the ranks:
  /// the servo's input) get the velocity each wall moves with. Returns the
  /// largest distance a wall moved.
  double advance(std::span<Wall> walls, double t, double h, std::span<BoundaryLoad> loads);
  /// The fields of a BoundaryLoad other than its sums, for wall w as it is.
  void describe(std::span<const Wall> walls, std::size_t w, BoundaryLoad& load) const;

  /// True if a checkpoint must keep these motions (some wall moves or has
  /// a name of its own); otherwise save() need not be called and a section
  /// without the block loads as walls at rest with default names.
  bool worth_saving() const;
  /// The block: u32 byte length of what follows, then per wall: name,
  /// u8 kind, vec3 velocity, f64 stress, area, gain, maximum speed,
  /// vec3 origin, f64 displacement, vec3 current velocity.
  void save(ByteWriter& w, std::span<const Wall> walls) const;
  /// The block save() wrote, for these walls (their velocities are set);
  /// throws StateError if it does not fit them.
  static WallMotions load(ByteReader& r, std::span<Wall> walls);

 private:
  std::vector<WallMotion> motions_;
  std::vector<Vec3> origin_;          ///< the walls' points at t = 0
  std::vector<double> displacement_;  ///< along each normal since t = 0
};

}  // namespace dem
