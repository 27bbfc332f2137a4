// The vectorised force kernels (docs/performance.md): every SIMD target this CPU runs
// gives the bits of the scalar kernel, bond by bond, and the target can be
// chosen and refused by name.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>

#include "bonds/bdem_bond.hpp"
#include "bonds/bdem_kernel.hpp"
#include "bonds/bdem_provider.hpp"
#include "bonds/bond_kernel.hpp"
#include "bonds/bond_potential.hpp"
#include "contact/contact_potential.hpp"
#include "contact/pair_kernel.hpp"
#include "core/simd.hpp"
#include "simd_targets.hpp"
#include "support.hpp"

using namespace dem;
using namespace dem::testing;

namespace {

/// A few thousand random bonds between random particles: most turned by
/// less than a degree relative to each other (the series lanes), a quarter
/// by up to 2 rad (the atan2 lanes the scalar kernel redoes), some
/// quaternions of negative w, three stiffness types, stretched by up to 20 %.
struct RandomBonds {
  std::vector<Vec3> position;
  std::vector<Quat> attitude, reference;
  BondList bonds;

  explicit RandomBonds(std::size_t count, bool with_reference) {
    std::mt19937_64 rng(20261124);
    std::uniform_real_distribution<double> u(0.5, 2.0), s(0.8, 1.2), pick(0.0, 1.0);
    const std::size_t n = 2 * count;
    for (std::size_t i = 0; i < n; ++i) {
      position.push_back(random_vec(rng, 3.0));
      Quat q = random_rotation(rng, 3.0);
      if (pick(rng) < 0.3) q.coeffs() = -q.coeffs();
      attitude.push_back(q);
      reference.push_back(with_reference ? random_rotation(rng, 1.0) : Quat::Identity());
    }
    const BondStiffness types[3] = {{0.3, 2.0, 1.5}, {1.0, 10.0, 4.0}, {0.01, 0.5, 0.2}};
    for (std::size_t b = 0; b < count; ++b) {
      const std::uint32_t i = static_cast<std::uint32_t>(2 * b), j = static_cast<std::uint32_t>(2 * b + 1);
      // Q_i Q_j^T small for most bonds, large for a quarter.
      const double turn = pick(rng) < 0.75 ? 0.015 : 2.0;
      attitude[i] = (random_rotation(rng, turn) * attitude[j] * reference[j].conjugate() * reference[i]).normalized();
      if (pick(rng) < 0.3) attitude[i].coeffs() = -attitude[i].coeffs();
      const double r0 = u(rng);
      const Vec3 d0 = random_vec(rng).normalized();
      position[i] = position[j] + s(rng) * r0 * (quat_exp(random_vec(rng, 0.3)) * d0).normalized();
      bonds.first.push_back(i);
      bonds.second.push_back(j);
      bonds.rest_length.push_back(r0);
      bonds.rest_direction.push_back(d0);
      bonds.type.push_back(static_cast<std::uint32_t>(b % 3));
    }
    bonds.stiffness_types.assign(std::begin(types), std::end(types));
  }

  /// Forces and moments of every bond through bond_forces, as bytes.
  std::vector<unsigned char> forces(bool with_reference) const {
    std::vector<Vec3> f(bonds.size()), m(bonds.size());
    BondKernelArgs a;
    a.first = bonds.first.data();
    a.second = bonds.second.data();
    a.position = position.data();
    a.attitude = attitude.data();
    a.reference_attitude = with_reference ? reference.data() : nullptr;
    a.rest_length = bonds.rest_length.data();
    a.rest_direction = bonds.rest_direction.data();
    a.type = bonds.type.data();
    a.stiffness_types = bonds.stiffness_types.data();
    a.force = f.data();
    a.moment = m.data();
    // Uneven ranges: block splits must not matter.
    const std::size_t cuts[] = {0, 5, 13, 64, 1001, bonds.size()};
    for (std::size_t k = 0; k + 1 < std::size(cuts); ++k) bond_forces(a, cuts[k], cuts[k + 1]);
    std::vector<unsigned char> out(2 * bonds.size() * sizeof(Vec3));
    std::memcpy(out.data(), f.data(), f.size() * sizeof(Vec3));
    std::memcpy(out.data() + f.size() * sizeof(Vec3), m.data(), m.size() * sizeof(Vec3));
    return out;
  }
};

}  // namespace

TEST(SimdTargets, ScalarAndAutoAreAlwaysThereAndUnknownNamesAreRefused) {
  SimdTargetScope keep(simd_target());  // DEM_SIMD's choice, if any, afterwards
  const std::vector<std::string> t = available_simd_targets();
  ASSERT_FALSE(t.empty());
  EXPECT_EQ(t.back(), "scalar");
  EXPECT_NO_THROW(set_simd_target("auto"));
  EXPECT_EQ(simd_target(), t.front());
  try {
    set_simd_target("avx1024");
    FAIL() << "an unknown target must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("avx1024"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("scalar"), std::string::npos);
  }
  EXPECT_EQ(simd_target(), t.front()) << "a refused name leaves the choice as it was";
  for (const std::string& name : t) {
    SimdTargetScope scope(name);
    EXPECT_EQ(simd_target(), name);
  }
  EXPECT_EQ(simd_target(), t.front());
}

// Every target against the scalar loop, bit for bit, and the scalar loop
// against bond_all (the one-bond kernel the energies and tests use).
TEST(BondKernel, EveryTargetGivesTheScalarBits) {
  for (bool with_reference : {false, true}) {
    const RandomBonds r(4000, with_reference);
    std::vector<unsigned char> scalar;
    {
      SimdTargetScope scope("scalar");
      scalar = r.forces(with_reference);
    }
    // The scalar loop is bond_all.
    const auto* f = reinterpret_cast<const Vec3*>(scalar.data());
    const auto* m = f + r.bonds.size();
    std::size_t large = 0;
    for (std::size_t b = 0; b < r.bonds.size(); ++b) {
      const std::uint32_t i = r.bonds.first[b], j = r.bonds.second[b];
      Quat qi = r.attitude[i], qj = r.attitude[j];
      if (with_reference) {
        qi = qi * r.reference[i].conjugate();
        qj = qj * r.reference[j].conjugate();
      }
      if (quaternion_angle(qi * qj.conjugate()) > 0.02) ++large;
      const BondStiffness& k = r.bonds.stiffness(b);
      const BondTerms t = bond_all(r.position[i], r.position[j], qi, qj, r.bonds.rest_length[b],
                                   r.bonds.rest_direction[b], k.bending, k.axial, k.shear);
      ASSERT_EQ(std::memcmp(&t.force_i, &f[b], sizeof(Vec3)), 0) << "bond " << b;
      ASSERT_EQ(std::memcmp(&t.moment_i, &m[b], sizeof(Vec3)), 0) << "bond " << b;
    }
    EXPECT_GT(large, 500u) << "the atan2 lanes must be exercised";
    EXPECT_LT(large, 3500u) << "the series lanes must be exercised";
    for (const std::string& name : available_simd_targets()) {
      SimdTargetScope scope(name);
      EXPECT_TRUE(r.forces(with_reference) == scalar) << "target " << name;
    }
  }
}

// The Hertz pair kernel: random pairs, about half overlapping, some apart,
// a few at r = 0 and a few excluded (their slots must be left as they were),
// on every target against contact_force pair by pair.
TEST(PairKernel, EveryTargetGivesTheScalarBits) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0), radius(0.3, 0.7);
  const std::size_t pairs = 5000, n = 2 * pairs;
  std::vector<Vec3> position(n);
  std::vector<double> radii(n);
  std::vector<std::uint32_t> owner, partner;
  std::vector<std::uint8_t> excluded;
  for (std::size_t p = 0; p < pairs; ++p) {
    const std::uint32_t i = static_cast<std::uint32_t>(2 * p), j = static_cast<std::uint32_t>(2 * p + 1);
    radii[i] = radius(rng);
    radii[j] = radius(rng);
    position[j] = random_vec(rng, 5.0);
    const double gap = u(rng) < 0.02 ? 0.0 : (0.5 + u(rng)) * (radii[i] + radii[j]);
    position[i] = position[j] + gap * random_vec(rng).normalized();
    owner.push_back(i);
    partner.push_back(j);
    excluded.push_back(u(rng) < 0.05 ? 1 : 0);
  }
  const Vec3 sentinel(1e300, -2.0, 3.0);
  const auto forces = [&]() {
    std::vector<Vec3> f(pairs, sentinel);
    HertzPairArgs a;
    a.owner = owner.data();
    a.partner = partner.data();
    a.excluded = excluded.data();
    a.position = position.data();
    a.radius = radii.data();
    a.stiffness = 3.7;
    a.force = f.data();
    const std::size_t cuts[] = {0, 3, 17, 800, 4001, pairs};
    for (std::size_t k = 0; k + 1 < std::size(cuts); ++k) hertz_pair_forces(a, cuts[k], cuts[k + 1]);
    std::vector<unsigned char> out(pairs * sizeof(Vec3));
    std::memcpy(out.data(), f.data(), out.size());
    return out;
  };
  std::vector<unsigned char> scalar;
  {
    SimdTargetScope scope("scalar");
    scalar = forces();
  }
  const auto* f = reinterpret_cast<const Vec3*>(scalar.data());
  std::size_t touching = 0, apart = 0;
  for (std::size_t p = 0; p < pairs; ++p) {
    const Vec3 expected = excluded[p] ? sentinel
                                      : contact_force(position[owner[p]], position[partner[p]], radii[owner[p]],
                                                      radii[partner[p]], 3.7);
    ASSERT_EQ(std::memcmp(&expected, &f[p], sizeof(Vec3)), 0) << "pair " << p;
    if (!excluded[p]) (expected.squaredNorm() > 0.0 ? touching : apart)++;
  }
  EXPECT_GT(touching, 1000u);
  EXPECT_GT(apart, 1000u);
  for (const std::string& name : available_simd_targets()) {
    SimdTargetScope scope(name);
    EXPECT_TRUE(forces() == scalar) << "target " << name;
  }
}

// The BDEM kernel: random bonds (most sheared by less than half a degree,
// a quarter by up to 0.5 rad, some compressed, some failed, quaternions of
// either sign), strengths set so that some bonds are over strength, on
// every target against the scalar loop and against bdem_bond + the
// strength test bond by bond.
TEST(BdemKernel, EveryTargetGivesTheScalarBits) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::size_t m = 3000;
  std::vector<Vec3> position(2 * m), d0s;
  std::vector<Quat> attitude(2 * m);
  std::vector<std::uint32_t> first, second, type;
  std::vector<double> l0s;
  std::vector<std::uint8_t> live;
  std::vector<BdemBondType> types(2);
  types[0].stiffness = bdem_stiffness(1e9, 0.3, 1e-3, 2e-3);
  types[0].tensile_strength = 2e7;
  types[0].shear_strength = 1e7;
  types[1].stiffness = bdem_stiffness(3e9, 0.2, 5e-4, 1.5e-3);
  types[1].tensile_strength = 5e7;
  types[1].shear_strength = 4e7;
  types[1].tension_only = true;
  for (std::size_t b = 0; b < m; ++b) {
    const auto i = static_cast<std::uint32_t>(2 * b), j = static_cast<std::uint32_t>(2 * b + 1);
    const double l0 = 1e-3 * (1.5 + u(rng));
    const Vec3 d0 = random_vec(rng).normalized();
    const Quat qj = random_rotation(rng, 3.0);
    const double turn = u(rng) < 0.75 ? 0.004 : 0.5;
    Quat qi = (random_rotation(rng, turn) * qj).normalized();
    if (u(rng) < 0.3) qi.coeffs() = -qi.coeffs();
    position[j] = random_vec(rng, 0.1);
    const Vec3 dir = (qj * d0).normalized();  // the bond turned with its ends, sheared a little
    position[i] = position[j] + l0 * (1.0 + 0.02 * (u(rng) - 0.5)) *
                                    (quat_exp(random_vec(rng, turn)) * dir).normalized();
    attitude[i] = qi;
    attitude[j] = qj;
    first.push_back(i);
    second.push_back(j);
    d0s.push_back(d0);
    l0s.push_back(l0);
    type.push_back(static_cast<std::uint32_t>(b % 2));
    live.push_back(u(rng) < 0.05 ? 0 : 1);
  }
  const Vec3 sentinel(7.0, -1e300, 0.5);
  struct Out {
    std::vector<Vec3> f, mi, mj;
    std::vector<std::uint8_t> flags;
    std::size_t over = 0;
  };
  const auto run = [&]() {
    Out o;
    o.f.assign(m, sentinel);
    o.mi.assign(m, sentinel);
    o.mj.assign(m, sentinel);
    o.flags.assign(m, 255);
    BdemKernelArgs a;
    a.first = first.data();
    a.second = second.data();
    a.position = position.data();
    a.attitude = attitude.data();
    a.rest_direction = d0s.data();
    a.rest_length = l0s.data();
    a.type = type.data();
    a.types = types.data();
    a.live = live.data();
    a.force = o.f.data();
    a.moment = o.mi.data();
    a.moment_second = o.mj.data();
    a.flags = o.flags.data();
    const std::size_t cuts[] = {0, 7, 9, 1000, 2001, m};
    for (std::size_t k = 0; k + 1 < std::size(cuts); ++k) o.over += bdem_bond_forces(a, cuts[k], cuts[k + 1]);
    return o;
  };
  const auto bytes = [](const Out& o) {
    std::vector<unsigned char> v(o.f.size() * 3 * sizeof(Vec3) + o.flags.size());
    unsigned char* p = v.data();
    for (const auto* arr : {&o.f, &o.mi, &o.mj}) {
      std::memcpy(p, arr->data(), arr->size() * sizeof(Vec3));
      p += arr->size() * sizeof(Vec3);
    }
    std::memcpy(p, o.flags.data(), o.flags.size());
    return v;
  };
  Out scalar;
  {
    SimdTargetScope scope("scalar");
    scalar = run();
  }
  std::size_t over = 0, large = 0;
  for (std::size_t b = 0; b < m; ++b) {
    if (!live[b]) {
      EXPECT_EQ(scalar.flags[b], 255) << "a failed bond's slots are not written";
      continue;
    }
    const BdemBondType& t = types[type[b]];
    const BdemBondResult r = bdem_bond(position[first[b]], position[second[b]], attitude[first[b]],
                                       attitude[second[b]], d0s[b], l0s[b], t.stiffness);
    ASSERT_EQ(std::memcmp(&r.force, &scalar.f[b], sizeof(Vec3)), 0) << "bond " << b;
    ASSERT_EQ(std::memcmp(&r.moment_i, &scalar.mi[b], sizeof(Vec3)), 0) << "bond " << b;
    ASSERT_EQ(std::memcmp(&r.moment_j, &scalar.mj[b], sizeof(Vec3)), 0) << "bond " << b;
    const bool o = bdem_over_strength(r, t.stiffness, t.tension_only, t.tensile_strength, t.shear_strength);
    EXPECT_EQ((scalar.flags[b] & kBdemOverStrength) != 0, o) << "bond " << b;
    over += o ? 1 : 0;
    if (r.shear_force * r.shear_force > 0.0 && r.cos_half_relative < std::cos(0.02)) ++large;
  }
  EXPECT_EQ(scalar.over, over);
  EXPECT_GT(over, 50u) << "some bonds must be over strength";
  EXPECT_LT(over, m / 2) << "and some not";
  EXPECT_GT(large, 300u) << "the atan2 lanes must be exercised";
  for (const std::string& name : available_simd_targets()) {
    SimdTargetScope scope(name);
    const Out o = run();
    EXPECT_TRUE(bytes(o) == bytes(scalar)) << "target " << name;
    EXPECT_EQ(o.over, scalar.over) << "target " << name;
  }
}
