#pragma once
/// \file solid_torus.hpp
/// The solid torus of bonded spheres, docs/model.md §7: spheres of one
/// diameter d on a face-centred cubic lattice (nearest neighbours touch)
/// clipped to a torus, every pair of lattice nearest neighbours bonded, masses
/// and stiffnesses from material moduli, thrown at a rigid wall x = 0 with
/// normal [1, 0, 0]. SI units.

#include <cstddef>
#include <cstdint>

#include "scene/ring_torus.hpp"  // Scene
#include "core/types.hpp"

namespace dem {

/// Parameters of the solid torus; defaults are docs/model.md §7's.
struct SolidTorusParameters {
  double major_diameter = 0.1;      ///< D_t, diameter of the centre-line circle (m)
  double tube_diameter = 0.02;      ///< D_tube (m), > d
  double particle_diameter = 1e-3;  ///< d (m), also the lattice nearest-neighbour distance
  double density = 2000.0;          ///< rho (kg/m^3)
  double particle_modulus = 1e10;   ///< E_p, Young's modulus of the particles (Pa)
  double particle_poisson = 0.3;    ///< nu, Poisson's ratio of the particles, in (-1, 0.5)
  double binder_modulus = 1e9;      ///< E_b, Young's modulus of the binder bonds (Pa)
  double bond_radius_ratio = 0.5;   ///< beta: bond cross-section radius r_b = beta d/2
  double speed = 10.0;              ///< every particle starts with v = [-speed, 0, 0] (m/s)
  double tilt_deg = 30.0;           ///< tilt of the torus axis (z) about the y axis (degrees)
  Vec3 spin = Vec3::Zero();         ///< rigid spin w about the torus centre (rad/s)
  bool wall = true;                 ///< include the wall at x = 0
  double gap = 1e-3;                ///< distance from the wall to the nearest sphere surface (m)
  double skin_fraction = 0.1;       ///< Verlet skin as a fraction of d (0.1: only the 12
                                    ///< lattice neighbours are candidates at rest)
};

/// Material constants of one solid-torus particle and bond (docs/model.md §7).
struct SolidTorusConstants {
  double mass = 0.0;       ///< m = rho pi d^3 / 6 (kg)
  double inertia = 0.0;    ///< J = m d^2 / 10 (kg m^2)
  double k_axial = 0.0;    ///< K^a = E_b A r0 (J), A = pi r_b^2, r0 = d
  double k_shear = 0.0;    ///< K^s = K^a (J)
  double k_bending = 0.0;  ///< K^m = E_b I / r0 (J), I = pi r_b^4 / 4
  double k_contact = 0.0;  ///< K^pp = (4/3) E* sqrt(R*) (2r)^{5/2}, 1/E* = 2(1 - nu^2)/E_p (J)
  double k_wall = 0.0;     ///< K^pw = (4/3) E_w* r^3, 1/E_w* = (1 - nu^2)/E_p (J)
};

/// Throws std::invalid_argument naming the parameter and its value if a
/// size, density or modulus is not a finite positive number, nu is outside
/// (-1, 0.5), d >= D_tube, D_tube >= D_t, or speed, tilt, spin, gap or skin
/// are not finite (gap and skin must also be >= 0).
void validate(const SolidTorusParameters& p);

SolidTorusConstants solid_torus_constants(const SolidTorusParameters& p);

/// Sizes of make_solid_torus(p), counted without building it.
struct SolidTorusCounts {
  std::uint64_t sites = 0;          ///< particles
  std::uint64_t bonds = 0;          ///< pairs of lattice nearest neighbours
  std::uint64_t lattice_cells = 0;  ///< cells of the bounding lattice (its site index: 4 bytes each)
};

/// The particle and bond counts of make_solid_torus(p), exactly, counted
/// row by row of the lattice from the torus equation (each row's ends
/// settled with the site test itself): time proportional to the number of
/// rows, about (2 D_t/d)^2 (D_tube/d), and no memory per site. Throws as
/// validate() does, and std::invalid_argument naming d if the lattice is
/// too large to index (more than 2e4 sites along an axis).
SolidTorusCounts solid_torus_counts(const SolidTorusParameters& p);

/// Lattice sites inside the torus for diameter d (no particles are built):
/// solid_torus_counts(p).sites, for choosing d from a target count. Throws
/// as solid_torus_counts() does.
std::size_t solid_torus_site_count(const SolidTorusParameters& p);

/// The particle diameter d whose torus holds about `target` particles (the
/// count within 1%, or the nearest found), by bisection on d with the site
/// count. Throws std::invalid_argument if target < 1 or the tube cannot hold it.
double solid_torus_diameter_for(const SolidTorusParameters& p, std::size_t target);

/// Builds the scene. Lattice: sites (i, j, k) d/sqrt(2) with i + j + k even
/// (one site at the torus centre), kept where the distance to the centre-line
/// circle is at most (D_tube - d)/2; then tilted about y and shifted along x
/// so that the nearest sphere surface is `gap` from the wall. Particles are
/// created in lattice order (k, j, i); bonds join every pair of lattice
/// nearest neighbours, first end the lower index. v = [-speed, 0, 0] +
/// w x (x - c), Omega = w, R = I.
Scene make_solid_torus(const SolidTorusParameters& p);

}  // namespace dem
