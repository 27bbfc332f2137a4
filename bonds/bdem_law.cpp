// The registry entry of iBDEM's BDEM bonds with stress-based fracture
// (docs/model.md §9, §10; BdemBondProvider in bonds/bdem_provider.hpp), and
// its critical time step (docs/model.md §9.6, §14.2).

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "bonds/bdem_provider.hpp"
#include "bonds/bond_laws.hpp"
#include "core/format.hpp"

namespace dem {

CriticalTimeStep bdem_bonds_time_step(const ParticleStore& particles, const BondList& bonds,
                                      std::span<const BdemStiffness> stiffness) {
  if (stiffness.size() != bonds.size())
    throw std::invalid_argument("bdem_bonds_time_step: one stiffness per bond expected");
  const std::size_t n = particles.size();
  std::vector<double> axial(n, 0.0), shear(n, 0.0), turn(n, 0.0), shear_rot(n, 0.0);
  std::vector<const char*> turn_term(n, "bond bending");
  for (std::size_t b = 0; b < bonds.size(); ++b) {
    const double l0 = bonds.rest_length[b];
    const BdemStiffness& k = stiffness[b];
    for (const std::uint32_t i : {bonds.first[b], bonds.second[b]}) {
      axial[i] += k.normal;
      shear[i] += k.shear / (l0 * l0);
      turn[i] += std::max(k.bending, k.twist);
      if (k.twist > k.bending) turn_term[i] = "bond twist";
      shear_rot[i] += 0.25 * k.shear;
    }
  }
  CriticalTimeStep out;
  out.h = std::numeric_limits<double>::infinity();
  const auto consider = [&](std::size_t i, double inertia, bool rotation, double a, const char* a_name, double s) {
    const double sum = a + s;
    if (!(sum > 0.0)) return;
    const double h = std::isfinite(sum) ? 2.0 * std::sqrt(inertia / sum) : 0.0;
    if (!(h < out.h)) return;
    out.h = h;
    out.particle = i;
    out.rotation = rotation;
    out.stiffness = sum;
    out.term = a >= s ? a_name : "bond shear";
    out.term_stiffness = std::max(a, s);
  };
  for (std::size_t i = 0; i < n; ++i) {
    consider(i, particles.mass[i], false, axial[i], "bond axial", shear[i]);
    consider(i, particles.inertia[i], true, turn[i], turn_term[i], shear_rot[i]);
  }
  return out;
}

namespace {

class PreparedBdem final : public PreparedBondLaw {
 public:
  explicit PreparedBdem(const BondLawInput& in) : input_(in) {
    for (const BondLawMaterial& m : in.materials) {
      BdemMaterial b;
      b.youngs_modulus = m.youngs_modulus;
      b.poisson_ratio = m.poisson_ratio;
      b.bond_radius_factor = m.bond_radius_factor;
      b.tensile_strength = m.tensile_strength;
      b.shear_strength = m.shear_strength;
      b.tension_only = m.tension_only;
      materials_.push_back(b);
    }
  }

  /// The smaller of docs/model.md §9.6's 2/omega_est over the bonded
  /// particles and every bond's own limit (bdem_bonds_time_step).
  std::optional<StepLimit> time_step_limit(const ParticleStore& particles, const BondList& bonds) const override {
    if (bonds.empty()) return std::nullopt;
    double e = 0.0, rho = INFINITY, r = INFINITY;
    std::vector<char> bonded(particles.size(), 0);
    for (std::size_t b = 0; b < bonds.size(); ++b) bonded[bonds.first[b]] = bonded[bonds.second[b]] = 1;
    for (std::size_t i = 0; i < particles.size(); ++i) {
      if (!bonded[i]) continue;
      const BondLawMaterial& m = input_.materials.at(particles.material[i]);
      e = std::max(e, m.youngs_modulus);
      rho = std::min(rho, m.density);
      r = std::min(r, particles.radius[i]);
    }
    StepLimit out{bdem_stable_step(e, rho, r, 1.0),
                  "BDEM bonds (docs/model.md §9.6: 2/omega_est, omega_est = 2.9 sqrt(E/(rho r^2)) with E = " +
                      format_g(e) + ", rho = " + format_g(rho) + ", r = " + format_g(r) + "; [[material]] E, density)"};
    // Every bond's own stiffnesses (nu, beta and the rest length too).
    if (const std::optional<CriticalTimeStep> own = bond_limit(particles, bonds); own && own->h < out.h) {
      out.h = own->h;
      const std::size_t slot = own->particle;
      out.source = own->term + " stiffness " + format_g(own->term_stiffness, 4) + " of particle " +
                   std::to_string(particles.id[slot]) + " (" + (own->rotation ? "rotation" : "translation") +
                   "; BDEM bonds, bonds/bdem_provider.hpp bdem_bonds_time_step: [[material]] E, nu, beta and the "
                   "bonds' rest lengths)";
    }
    return out;
  }

  /// The stiffnesses E pi r_b^4/(4 l0) at r_b = beta r_max.
  std::optional<std::pair<std::size_t, std::string>> overflow() const override {
    const double r_max = input_.r_max;
    for (std::size_t k = 0; k < input_.materials.size(); ++k) {
      const BondLawMaterial& s = input_.materials[k];
      const double r_b = s.bond_radius_factor * r_max;
      if (s.bond_radius_factor > 0.0 && s.youngs_modulus > 0.0 &&
          !std::isfinite(s.youngs_modulus * r_b * r_b * r_b * r_b / r_max))
        return std::pair<std::size_t, std::string>{
            k, "[[material]] \"" + s.name + "\" beta = " + format_g(s.bond_radius_factor) + ", E = " +
                   format_g(s.youngs_modulus) + ": the BDEM bond stiffnesses (E pi r_b^4/(4 l0)) overflow"};
    }
    return std::nullopt;
  }

  std::unique_ptr<ForceProvider> make(const ParticleStore& particles, BondList bonds) const override {
    return std::make_unique<BdemBondProvider>(particles, std::move(bonds), materials_);
  }

 private:
  /// bdem_bonds_time_step() of the bonds, their constants as the provider
  /// takes them; nullopt if a material is out of range (the provider
  /// refuses it, naming the key).
  std::optional<CriticalTimeStep> bond_limit(const ParticleStore& particles, const BondList& bonds) const {
    for (const std::uint32_t m : particles.material)
      if (m >= materials_.size()) return std::nullopt;
    std::vector<BdemStiffness> k(bonds.size());
    try {
      for (std::size_t b = 0; b < bonds.size(); ++b)
        k[b] = bdem_bond_constants(particles, materials_, bonds.first[b], bonds.second[b], bonds.rest_length[b])
                   .stiffness;
    } catch (const std::exception&) {
      return std::nullopt;
    }
    return bdem_bonds_time_step(particles, bonds, k);
  }

  BondLawInput input_;
  std::vector<BdemMaterial> materials_;
};

}  // namespace

BondLawEntry bdem_bond_law() {
  BondLawEntry e;
  e.keyword = "bdem";
  e.title = "iBDEM's BDEM bonds (normal, shear, bending and twisting springs of a beam) with stress-based fracture";
  e.section = "§9";
  e.needs_materials = true;
  e.materials_note = "(E, nu, beta, strengths)";
  e.hessian = true;
  e.stiffness_refusal =
      "is a Baker-Gonzalez stiffness (docs/model.md §4); BDEM bonds (law = \"bdem\") take theirs from the "
      "[[material]] tables (E, nu, beta) and the rest lengths: remove bending, axial and shear";
  e.prepare = [](const BondLawInput& in) -> std::unique_ptr<PreparedBondLaw> {
    return std::make_unique<PreparedBdem>(in);
  };
  e.sections = {{"bdem", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return BdemBondProvider::load(r, s);
                 }}};
  return e;
}

}  // namespace dem
