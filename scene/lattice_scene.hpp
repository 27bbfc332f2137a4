#pragma once
/// \file lattice_scene.hpp
/// The "lattice" contact benchmark, the same system as LAMMPS's
/// in.lattice.lmp (written out in bench/compare_lammps.sh): n x n x n spheres of
/// diameter d on a simple cubic lattice of spacing s d (s = 0.98: each sphere
/// overlaps its six face neighbours by 2% of d), open boundaries, no bonds,
/// no walls, no gravity, frictionless Hertz contact (docs/model.md §4),
/// small random velocities. LAMMPS Lennard-Jones units (dimensionless).
///
/// Contact stiffness. LAMMPS `pair_style granular` with
/// `pair_coeff * * hertz k_n 0.0 tangential linear_nohistory 0.0 0.0` has
/// the normal force F = k_n sqrt(R_eff delta) delta, R_eff = r_i r_j/(r_i + r_j),
/// delta = r_i + r_j - r (LAMMPS documentation of pair granular, "hertz").
/// Our law is F = K^pp/(r_i + r_j) (delta/(r_i + r_j))^{3/2}
/// (contact/contact_potential.hpp). Equal for every delta when
///
///     K^pp = k_n sqrt(R_eff) (r_i + r_j)^{5/2},
///
/// which for equal spheres of diameter d (R_eff = d/4, r_i + r_j = d) is
/// K^pp = k_n d^3 / 2: k_n = 2100 and d = 1 give K^pp = 1050.

#include <cstddef>
#include <cstdint>

#include "scene/ring_torus.hpp"  // Scene

namespace dem {

/// Parameters of the lattice scene; defaults are those of in.lattice.lmp.
struct LatticeParameters {
  std::size_t per_side = 40;      ///< n, spheres along each edge (n^3 in all), >= 1
  double diameter = 1.0;          ///< d (length), > 0
  double spacing_ratio = 0.98;    ///< lattice spacing / d, > 0 (< 1: face neighbours overlap)
  double density = 1.9099;        ///< rho (mass/length^3): m = rho pi d^3/6 (= 1.00002 for d = 1)
  double hertz_kn = 2100.0;       ///< LAMMPS `hertz` k_n (force/length^2), >= 0; K^pp = k_n d^3/2
  double skin = 0.1;              ///< Verlet skin of the neighbour list (length), >= 0
  double temperature = 0.01;      ///< T of LAMMPS `velocity all create T` (energy, k_B = 1), >= 0
  std::uint64_t seed = 4928459;   ///< seed of the velocity generator (std::mt19937_64)
};

/// K^pp (energy) of our contact law equal to LAMMPS's `hertz` law with
/// stiffness k_n (force/length^2) between spheres of radii r_i, r_j (length):
/// k_n sqrt(r_i r_j/(r_i + r_j)) (r_i + r_j)^{5/2}; see the file comment.
double contact_stiffness_from_lammps_hertz(double k_n, double r_i, double r_j);

/// Builds the scene. Particle (i, j, k), 0 <= i, j, k < n, is created at
/// index i + n (j + n k) at position s d (i, j, k); mass m = rho pi d^3/6,
/// J = m d^2/10 (solid sphere, as LAMMPS's nve/sphere), R = I, Omega = 0.
/// Velocities follow LAMMPS's `velocity ... create T seed` with its defaults
/// (dist uniform, mom yes, rot no): every component uniform in [-1/2, 1/2)
/// from std::mt19937_64(seed) (53 random bits per value, the same on every
/// platform), the mean velocity removed, then all scaled so that
/// sum m |v|^2 / (3 N - 3) = T (the translational temperature with the three
/// momentum degrees of freedom removed; no scaling for N = 1, whose velocity
/// is then zero). The values differ from LAMMPS's (another generator), their
/// statistics do not. Contact: K^pp from contact_stiffness_from_lammps_hertz,
/// skin as given; no bonds, no walls.
/// Throws std::invalid_argument naming the parameter and its value if n < 1,
/// n^3 overflows 2^32 - 1, d, spacing ratio or density is not finite and
/// positive, or k_n, skin or T is negative or not finite.
Scene make_lattice(const LatticeParameters& p);

}  // namespace dem
