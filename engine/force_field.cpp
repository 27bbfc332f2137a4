#include "engine/force_field.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "bonds/bond_potential.hpp"
#include "engine/parallel.hpp"
#include "engine/reorder.hpp"

namespace dem {

namespace {

void require_nonnegative(double v, const std::string& what) {
  if (!(std::isfinite(v) && v >= 0.0))
    throw std::invalid_argument(what + " must be finite and >= 0, got " + std::to_string(v));
}

/// Q = R R0^T, the rotation of a particle since its reference attitude
/// (R itself when every reference attitude is the identity, as in the
/// generated scenes: the product would only multiply by 1).
inline Quat relative_attitude(const ParticleStore& s, std::size_t i, bool identity_reference) {
  if (identity_reference) return s.attitude[i];
  return s.attitude[i] * s.reference_attitude[i].conjugate();
}

bool all_identity(const std::vector<Quat>& q) {
  for (const Quat& a : q)
    if (!(a.w() == 1.0 && a.x() == 0.0 && a.y() == 0.0 && a.z() == 0.0)) return false;
  return true;
}

}  // namespace

ForceField::ForceField(const ParticleStore& particles, BondList bonds, ContactSettings contact,
                       std::vector<Wall> walls, Vec3 gravity)
    : bonds_(std::move(bonds)),
      contact_(contact),
      walls_(std::move(walls)),
      gravity_(gravity),
      search_((require_nonnegative(contact.skin, "contact skin"), contact.skin)) {
  require_nonnegative(contact_.stiffness, "contact stiffness K^pp");
  if (!gravity_.allFinite()) throw std::invalid_argument("gravity is not finite");
  for (std::size_t w = 0; w < walls_.size(); ++w) {
    const std::string name = "wall " + std::to_string(w);
    require_nonnegative(walls_[w].stiffness, name + " stiffness K^pw");
    if (!walls_[w].point.allFinite()) throw std::invalid_argument(name + ": point is not finite");
    if (!(std::abs(walls_[w].normal.norm() - 1.0) < 1e-12))
      throw std::invalid_argument(name + ": normal must be a unit vector");
  }
  const std::size_t n = particles.size();
  for (std::size_t b = 0; b < bonds_.size(); ++b)
    if (bonds_.first[b] >= n || bonds_.second[b] >= n)
      throw std::invalid_argument("bond " + std::to_string(b) + " refers to a particle outside the " +
                                  std::to_string(n) + " particles");
  index_bonds(n);
  bond_force_.resize(bonds_.size());
  bond_moment_.resize(bonds_.size());
  identity_reference_ = all_identity(particles.reference_attitude);
}

void ForceField::restore_neighbour_list(const ParticleStore& s, std::span<const Vec3> build_positions,
                                        std::size_t rebuild_count) {
  if (build_positions.size() != s.size())
    throw std::invalid_argument("restore_neighbour_list: " + std::to_string(build_positions.size()) +
                                " build positions for " + std::to_string(s.size()) + " particles");
  search_.restore(build_positions, s.radius, rebuild_count);
}

void ForceField::index_bonds(std::size_t n) {
  // Compressed rows of bonds per particle, ascending bond index.
  bond_offsets_.assign(n + 1, 0);
  for (std::size_t b = 0; b < bonds_.size(); ++b) {
    ++bond_offsets_[bonds_.first[b] + 1];
    ++bond_offsets_[bonds_.second[b] + 1];
  }
  for (std::size_t i = 0; i < n; ++i) bond_offsets_[i + 1] += bond_offsets_[i];
  bond_entries_.resize(bond_offsets_[n]);
  std::vector<std::uint32_t> fill(bond_offsets_.begin(), bond_offsets_.end() - 1);
  for (std::size_t b = 0; b < bonds_.size(); ++b) {
    bond_entries_[fill[bonds_.first[b]]++] = static_cast<std::uint32_t>(2 * b);
    bond_entries_[fill[bonds_.second[b]]++] = static_cast<std::uint32_t>(2 * b + 1);
  }
}

void ForceField::reorder(ParticleStore& s) {
  const std::vector<std::uint32_t> order = morton_order(s.position);
  bool sorted = true;
  for (std::size_t k = 0; k < order.size() && sorted; ++k) sorted = order[k] == k;
  if (sorted) return;
  std::vector<std::uint32_t> inverse(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) inverse[order[k]] = static_cast<std::uint32_t>(k);
  permute_particles(s, order);
  renumber_and_sort_bonds(bonds_, inverse);
  index_bonds(s.size());
}

void ForceField::compute(ParticleStore& s) {
  const std::size_t n = s.size();
  if (search_.rebuild_due(s.position, s.radius)) {
    if (contact_.reorder_on_rebuild) reorder(s);
    search_.rebuild(s.position, s.radius);
  }
  const NeighbourList& list = search_.list();

  parallel_for_ranges(bonds_.size(), [&](std::size_t begin, std::size_t end) {
    for (std::size_t b = begin; b < end; ++b) {
      const std::uint32_t i = bonds_.first[b], j = bonds_.second[b];
      const BondStiffness& k = bonds_.stiffness(b);
      const BondTerms t = bond_all(s.position[i], s.position[j], relative_attitude(s, i, identity_reference_),
                                   relative_attitude(s, j, identity_reference_), bonds_.rest_length[b],
                                   bonds_.rest_direction[b], k.bending, k.axial, k.shear);
      bond_force_[b] = t.force_i;
      bond_moment_[b] = t.moment_i;
    }
  });

  const double kpp = contact_.stiffness;
  const bool has_gravity = gravity_ != Vec3::Zero();
  // Scenes without bonds keep one force per contact pair (24 B a pair),
  // computed once; bonded scenes, where memory per particle is what limits
  // size, evaluate each contact from both sides in the gather instead.
  const bool pair_scratch = bonds_.empty() && kpp > 0.0;
  if (pair_scratch) {
    pair_force_.resize(list.pair_count());
    parallel_for_ranges(list.pair_count(), [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k < end; ++k) {
        const std::uint32_t i = list.owner[k], j = list.partner[k];
        pair_force_[k] = contact_force(s.position[i], s.position[j], s.radius[i], s.radius[j], kpp);
      }
    });
  }
  parallel_for_ranges(n, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const Vec3 x = s.position[i];
      const double r = s.radius[i];
      Vec3 f = Vec3::Zero();
      Vec3 tau = Vec3::Zero();
      for (std::uint32_t e = bond_offsets_[i]; e < bond_offsets_[i + 1]; ++e) {
        const std::uint32_t entry = bond_entries_[e];
        const std::uint32_t b = entry >> 1;
        if ((entry & 1u) == 0) {
          f += bond_force_[b];
          tau += bond_moment_[b];
        } else {
          const Vec3 arm = s.position[bonds_.first[b]] - x;  // x_i - x_j
          f -= bond_force_[b];
          tau -= bond_moment_[b] + arm.cross(bond_force_[b]);
        }
      }
      if (pair_scratch) {
        for (std::uint32_t k = list.offsets[i]; k < list.offsets[i + 1]; ++k) f += pair_force_[k];
        for (std::uint32_t e = list.incoming_offsets[i]; e < list.incoming_offsets[i + 1]; ++e)
          f -= pair_force_[list.incoming_pairs[e]];
      } else if (kpp > 0.0) {
        for (std::uint32_t k = list.offsets[i]; k < list.offsets[i + 1]; ++k) {
          const std::uint32_t j = list.partner[k];
          f += contact_force(x, s.position[j], r, s.radius[j], kpp);
        }
        for (std::uint32_t e = list.incoming_offsets[i]; e < list.incoming_offsets[i + 1]; ++e) {
          const std::uint32_t o = list.owner[list.incoming_pairs[e]];
          f -= contact_force(s.position[o], x, s.radius[o], r, kpp);
        }
      }
      for (const Wall& w : walls_) f += wall_contact(x, r, w).force_i;
      if (has_gravity) f += s.mass[i] * gravity_;
      s.force[i] = f;
      s.moment[i] = tau;
    }
  });
}

EnergyReport ForceField::potential_energies(const ParticleStore& s) const {
  EnergyReport r;
  const BondEnergies be = deterministic_sum(bonds_.size(), BondEnergies{}, [&](std::size_t b) {
    const std::uint32_t i = bonds_.first[b], j = bonds_.second[b];
    const Quat qi = relative_attitude(s, i, identity_reference_),
               qj = relative_attitude(s, j, identity_reference_);
    BondEnergies e;
    e.bending = bond_bending(qi, qj, bonds_.stiffness(b).bending).energy;
    e.axial = bond_axial(s.position[i], s.position[j], bonds_.rest_length[b], bonds_.stiffness(b).axial).energy;
    e.shear = bond_shear(s.position[i], s.position[j], qi, qj, bonds_.rest_direction[b],
                         bonds_.stiffness(b).shear)
                  .energy;
    return e;
  });
  r.bending = be.bending;
  r.axial = be.axial;
  r.shear = be.shear;
  const NeighbourList& list = search_.list();
  r.contact = deterministic_sum(list.pair_count(), 0.0, [&](std::size_t k) {
    const std::uint32_t i = list.owner[k], j = list.partner[k];
    return particle_contact(s.position[i], s.position[j], s.radius[i], s.radius[j],
                            contact_.stiffness)
        .energy;
  });
  r.wall = deterministic_sum(s.size(), 0.0, [&](std::size_t i) {
    double u = 0.0;
    for (const Wall& w : walls_) u += wall_contact(s.position[i], s.radius[i], w).energy;
    return u;
  });
  if (gravity_ != Vec3::Zero())
    r.gravity = deterministic_sum(s.size(), 0.0, [&](std::size_t i) {
      return -s.mass[i] * gravity_.dot(s.position[i]);
    });
  return r;
}

namespace {
struct KineticSums {
  double translation = 0.0, rotation = 0.0;
  Vec3 p = Vec3::Zero(), l = Vec3::Zero();
  KineticSums& operator+=(const KineticSums& o) {
    translation += o.translation;
    rotation += o.rotation;
    p += o.p;
    l += o.l;
    return *this;
  }
};
}  // namespace

EnergyReport kinetic_energies_and_momenta(const ParticleStore& s, std::span<const char> skip) {
  const KineticSums k = deterministic_sum(s.size(), KineticSums{}, [&](std::size_t i) {
    KineticSums t;
    if (!skip.empty() && skip[i] != 0) return t;
    const Vec3 mv = s.mass[i] * s.velocity[i];
    t.translation = 0.5 * s.mass[i] * s.velocity[i].squaredNorm();
    t.rotation = 0.5 * s.inertia[i] * s.angular_velocity[i].squaredNorm();
    t.p = mv;
    t.l = s.position[i].cross(mv) + s.inertia[i] * s.angular_velocity[i];
    return t;
  });
  EnergyReport r;
  r.kinetic_translation = k.translation;
  r.kinetic_rotation = k.rotation;
  r.linear_momentum = k.p;
  r.angular_momentum = k.l;
  return r;
}

}  // namespace dem
