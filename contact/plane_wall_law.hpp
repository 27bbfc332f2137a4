#pragma once
/// \file plane_wall_law.hpp
/// The contract of a stateless plane-wall law: a potential of one particle
/// against one rigid plane wall that depends on the particle's position and
/// radius only (no history, no velocity). WallProvider (wall_provider.hpp)
/// evaluates any such law; the laws with contact history use
/// WallContactProvider (wall_contact_provider.hpp) instead.
///
/// A law is a struct with three static functions (units as in Wall):
///   ContactTerms terms(const Vec3& x, double r, const Wall& w);  // force on the particle, energy
///   double curvature(double gap, double r, const Wall& w);      // U''(g) >= 0 for gap < r
///   double normal_force(double overlap, double r, const Wall& w); // |F| at r - g = overlap > 0
/// wrapped once by PlaneWallLawOf<Law>, which holds the batch loops, so that
/// WallProvider makes one virtual call per batch and none per particle.
/// Each law's instance is named by a checkpoint byte (`code`, stored in the
/// "walls" section) and listed in its contact law's registry entry
/// (ContactLawEntry::plane_walls, contact/contact_laws.hpp).

#include <cstddef>
#include <cstdint>
#include <span>

#include "contact/contact_potential.hpp"
#include "core/particle_store.hpp"

namespace dem {

class PlaneWallLaw {
 public:
  virtual ~PlaneWallLaw() = default;
  /// The byte that names this law in a checkpoint's "walls" section.
  virtual std::uint8_t code() const = 0;
  /// "Hertz", "penalty": for messages.
  virtual const char* name() const = 0;
  /// iBDEM's friction filter (docs/model.md §11.1) applies at these walls.
  virtual bool has_filter() const = 0;
  /// force[i] += F_i of every wall in order, i in [begin, end).
  virtual void add_forces(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<const Wall> walls,
                          std::span<Vec3> force) const = 0;
  /// diag[i] += U''(g) n nᵀ of every wall particle i touches.
  virtual void add_hessians(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<const Wall> walls,
                            std::span<Mat6> diag) const = 0;
  /// F_i of wall w alone on particle i (the same bits add_forces adds).
  virtual Vec3 force(const ParticleStore& s, std::size_t i, const Wall& w) const = 0;
  /// U of particle i against every wall, summed in wall order.
  virtual double energy(const ParticleStore& s, std::size_t i, std::span<const Wall> walls) const = 0;
  /// The normal force magnitude at overlap r - g > 0, for the filter.
  virtual double normal_force(double overlap, double r, const Wall& w) const = 0;
  /// F_i and U of one sphere (centre x, radius r) against one wall (the
  /// local walls of a mesh's contacts, contact/mesh_contact_provider.hpp).
  virtual ContactTerms terms(const Vec3& x, double r, const Wall& w) const = 0;
};

/// The batch loops of PlaneWallLaw over a law's inline static functions.
template <class Law>
class PlaneWallLawOf final : public PlaneWallLaw {
 public:
  PlaneWallLawOf(std::uint8_t code, const char* name, bool filter) : code_(code), name_(name), filter_(filter) {}
  std::uint8_t code() const override { return code_; }
  const char* name() const override { return name_; }
  bool has_filter() const override { return filter_; }
  void add_forces(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<const Wall> walls,
                  std::span<Vec3> force) const override {
    for (std::size_t i = begin; i < end; ++i)
      for (const Wall& w : walls) force[i] += Law::terms(s.position[i], s.radius[i], w).force_i;
  }
  void add_hessians(const ParticleStore& s, std::size_t begin, std::size_t end, std::span<const Wall> walls,
                    std::span<Mat6> diag) const override {
    for (std::size_t i = begin; i < end; ++i)
      for (const Wall& w : walls) {
        const double r = s.radius[i], gap = (s.position[i] - w.point).dot(w.normal);
        if (!(gap < r)) continue;
        diag[i].template block<3, 3>(0, 0) += Law::curvature(gap, r, w) * (w.normal * w.normal.transpose());
      }
  }
  Vec3 force(const ParticleStore& s, std::size_t i, const Wall& w) const override {
    return Law::terms(s.position[i], s.radius[i], w).force_i;
  }
  double energy(const ParticleStore& s, std::size_t i, std::span<const Wall> walls) const override {
    double u = 0.0;
    for (const Wall& w : walls) u += Law::terms(s.position[i], s.radius[i], w).energy;
    return u;
  }
  double normal_force(double overlap, double r, const Wall& w) const override {
    return Law::normal_force(overlap, r, w);
  }
  ContactTerms terms(const Vec3& x, double r, const Wall& w) const override { return Law::terms(x, r, w); }

 private:
  std::uint8_t code_;
  const char* name_;
  bool filter_;
};

/// Section 4's Hertz-type wall (contact/hertz_law.cpp), code 0.
const PlaneWallLaw& hertz_plane_wall();
/// iBDEM's penalty wall (contact/penalty_law.cpp), code 1.
const PlaneWallLaw& penalty_plane_wall();

}  // namespace dem
