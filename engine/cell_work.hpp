#pragma once
/// \file cell_work.hpp
/// The work a deforming periodic cell does on the particles (docs/model.md
/// §20.4). A record across a face reads its second end at the image
/// x_j + H n, which moves at v_j + Hdot n: with the cell's edges moving,
/// the record's potential changes by more than its ends' motion accounts
/// for, and its non-conservative force dissipates against the image's
/// velocity, not the particle's. Per unit time the cell puts in
///
///     P = sum over records across faces of F_ij . (Hdot n),
///
/// F_ij the force on the record's first end; of which the non-conservative
/// part F^nc_ij . (Hdot n) is dissipation the particles' own velocities do
/// not show (the stepper's W_contact books F^nc against those).

#include <array>

#include "core/exact_sum.hpp"
#include "core/particle_store.hpp"
#include "core/types.hpp"

namespace dem {

class ForceField;

/// {P, P^nc}: the two sums above at the configuration of the last
/// evaluation (every pair provider's result slots and image offsets
/// PairResults::offset; Hdot n = G (H n) with G = Hdot H^-1, 1/time), in
/// energy/time, as exact sums over the records this process books. Zero
/// without records across faces.
std::array<ExactSum, 2> cross_face_power(const ForceField& forces, const ParticleStore& particles, const Mat3& g);

}  // namespace dem
