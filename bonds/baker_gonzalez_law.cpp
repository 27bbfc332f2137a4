// The registry entry of the Baker-Gonzalez bond potentials (docs/model.md
// §4; BondProvider in bonds/bond_provider.hpp).

#include <memory>

#include "bonds/bond_laws.hpp"
#include "bonds/bond_provider.hpp"

namespace dem {

namespace {

class PreparedBakerGonzalez final : public PreparedBondLaw {
 public:
  std::unique_ptr<ForceProvider> make(const ParticleStore& particles, BondList bonds) const override {
    return std::make_unique<BondProvider>(particles, std::move(bonds));
  }
};

}  // namespace

BondLawEntry baker_gonzalez_bond_law() {
  BondLawEntry e;
  e.keyword = "baker-gonzalez";
  e.title = "Baker-Gonzalez bending, axial and shear potentials of a particle-binder-particle bond, unbreakable";
  e.section = "§4";
  e.hessian = true;
  e.combined_estimate = true;
  e.stiffness_per_bond = true;
  e.prepare = [](const BondLawInput&) -> std::unique_ptr<PreparedBondLaw> {
    return std::make_unique<PreparedBakerGonzalez>();
  };
  e.sections = {{"bonds", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return BondProvider::load(r, s);
                 }}};
  return e;
}

}  // namespace dem
