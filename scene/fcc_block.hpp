#pragma once
/// \file fcc_block.hpp
/// Two generators of bonded solids for the BDEM scenes (docs/model.md Part II):
///
/// fcc_block: docs/model.md §13.3's plate lattice, generalised. Equal spheres of
/// diameter d (touching nearest neighbours) on the FCC sites
/// a (i, j, k) + a b, a = sqrt(2) d, b in {(0,0,0), (½,½,0), (½,0,½),
/// (0,½,½)}, kept when 0 <= x <= nx a, 0 <= y <= ny a, 0 <= z <= nz a
/// (tolerance 1e-9 a); ids in lexicographic order of (x, y, z) of these
/// untilted sites. The block is then turned by `rotation_angle` about
/// `rotation_axis` through its centre (nx a/2, ny a/2, nz a/2) and moved by
/// `origin`, or along z so that its lowest centre is at `lowest_z`. Bonds:
/// every pair at distance d (tolerance 1e-6 d). The placed state is the
/// bonds' reference (R = R_0 = I). For cells (28, 28, 2) and d = 2 mm:
/// 8123 particles and 41216 bonds (13.3).
///
/// chain: `count` spheres of diameter d in a straight line from `origin`
/// along `direction`, touching, consecutive pairs bonded (a cantilever).

#include <array>
#include <cstdint>
#include <optional>

#include "scene/ring_torus.hpp"  // Scene

namespace dem {

struct FccBlockParameters {
  double spacing = 2e-3;                   ///< d: nearest-neighbour distance = diameter (length), > 0
  std::array<std::uint32_t, 3> cells = {28, 28, 2};  ///< nx, ny, nz: cube cells of side a = sqrt(2) d
  Vec3 rotation_axis = Vec3::UnitX();      ///< unit axis of the turn
  double rotation_angle_deg = 0.0;         ///< right-handed, degrees
  Vec3 origin = Vec3::Zero();              ///< translation after the turn (ignored with lowest_z)
  std::optional<double> lowest_z;          ///< move along z so that the lowest centre is here
  Vec3 velocity = Vec3::Zero();            ///< of every particle (length/time)
  Vec3 angular_velocity = Vec3::Zero();    ///< spin of the block about its centre (1/time)
  double density = 2400.0;                 ///< m = rho pi d^3/6, J = m d^2/10
  /// Leave out the sites on the upper faces (x, y or z = cells a): the
  /// block then tiles space with period cells a, and fills a periodic
  /// [domain] of that size (docs/model.md §20) with 4 nx ny nz particles.
  bool periodic = false;
};

/// Particles of the block (without building them): exact.
std::uint64_t fcc_block_count(const FccBlockParameters& p);
/// Its bonds (pairs at distance d): exact, counted on the lattice.
std::uint64_t fcc_block_bond_count(const FccBlockParameters& p);
/// The block; throws std::invalid_argument for a non-positive spacing or
/// density, zero cells, a zero axis, or more than 2^31 particles.
Scene make_fcc_block(const FccBlockParameters& p);

struct ChainParameters {
  std::uint32_t count = 41;           ///< particles (count - 1 bonds), >= 2
  double diameter = 0.01;             ///< d = spacing (length), > 0
  Vec3 origin = Vec3::Zero();         ///< centre of the first particle
  Vec3 direction = Vec3::UnitX();     ///< unit direction of the chain
  Vec3 velocity = Vec3::Zero();
  double density = 1000.0;            ///< m = rho pi d^3/6, J = m d^2/10
};

Scene make_chain(const ChainParameters& p);

}  // namespace dem
