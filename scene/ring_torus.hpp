#pragma once
/// \file ring_torus.hpp
/// The particle-binder ring torus of Baker & Gonzalez section 4.1, placed as
/// docs/model.md §6 specifies: N_p spheres on a circle of diameter D_t with
/// D_p = D_t sin(pi/N_p) (ring neighbours just touch), each bonded to the
/// next, thrown at a rigid wall x = 0 with normal [1, 0, 0].

#include <cstddef>
#include <vector>

#include "bonds/bond_list.hpp"
#include "contact/contact_potential.hpp"
#include "engine/force_field.hpp"
#include "core/particle_store.hpp"
#include "engine/scene.hpp"

namespace dem {

/// Parameters of the ring torus; defaults are the paper's (dimensionless).
struct RingTorusParameters {
  std::size_t particles = 80;     ///< N_p, >= 3
  double torus_diameter = 3.0;    ///< D_t (length)
  double mass = 1.0;              ///< m per particle
  double inertia = 1.0;           ///< J per particle
  double k_bending = 10.0;        ///< K^m
  double k_axial = 200.0;         ///< K^a
  double k_shear = 200.0;         ///< K^s
  double k_contact = 2100.0;      ///< K^pp
  double k_wall = -1.0;           ///< K^pw; negative means "= K^pp"
  double speed = 1.0;             ///< v_0: every particle starts with v = [-v_0, 0, 0]
  double tilt_deg = 0.0;          ///< tilt of the ring plane about the y axis (degrees)
  Vec3 spin = Vec3::Zero();       ///< rigid spin w about the centre (1/time)
  bool wall = true;               ///< include the wall at x = 0
  double gap = 0.1;               ///< distance from the wall to the ring's bounding circle
  double skin_fraction = 0.5;     ///< Verlet skin as a fraction of D_p
};

/// Builds the ring: centre c = (D_t/2 + D_p/2 + gap, 0, 0), particle k at
/// c + R_y(tilt) (D_t/2)(cos phi_k, sin phi_k, 0), phi_k = 2 pi k/N_p,
/// Omega_k = w, v_k = [-v_0, 0, 0] + w x (x_k - c), R_0 = I; bonds (k, k+1
/// mod N_p). Throws std::invalid_argument naming the parameter if a value is
/// out of range (N_p < 3, non-positive sizes, masses, negative stiffnesses).
Scene make_ring_torus(const RingTorusParameters& p);

/// Centre c of the ring built by make_ring_torus.
Vec3 ring_torus_centre(const RingTorusParameters& p);

}  // namespace dem
