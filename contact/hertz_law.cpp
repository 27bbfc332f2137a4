// The registry entry of the frictionless Hertz-type contact
// (docs/model.md §4; HertzContactLaw in contact/contact_provider.hpp, the
// walls of contact/wall_provider.hpp).

#include <memory>

#include "contact/contact_laws.hpp"
#include "contact/contact_provider.hpp"
#include "contact/wall_provider.hpp"

namespace dem {

namespace {

class PreparedHertz final : public PreparedContactLaw {
 public:
  explicit PreparedHertz(const ContactLawInput& in) {
    const std::optional<double> k = in.values.number("stiffness");
    pair_ = k ? *k : in.contact_given ? in.material_pair_stiffness() : 0.0;
    for (std::size_t w = 0; w < in.wall_values.size(); ++w) {
      const std::optional<double> kw = in.wall_values[w].number("stiffness");
      walls_.push_back(kw ? *kw : in.material_wall_stiffness(w));
    }
  }
  double pair_stiffness() const override { return pair_; }
  double wall_stiffness(std::size_t w) const override { return walls_.at(w); }
  ContactLawProviders make(const ParticleStore&, std::vector<Wall> walls, double skin, double) override {
    ContactLawProviders p;
    p.pairs = std::make_unique<HertzContactProvider>(HertzContactLaw{pair_}, skin);
    p.walls = std::make_unique<WallProvider>(std::move(walls));
    return p;
  }

 private:
  double pair_ = 0.0;
  std::vector<double> walls_;
};

}  // namespace

ContactLawEntry hertz_contact_law() {
  ContactLawEntry e;
  e.keyword = "hertz";
  e.title = "Frictionless Hertz-type contact U = (2/5) K^pp [1 - r/(r_i + r_j)]_+^{5/2}, walls as mirror images";
  e.section = "§4";
  e.hessian = true;
  e.combined_estimate = true;
  LawKey k;
  k.name = "stiffness";
  k.kind = LawKeyKind::number_or_auto;
  k.symbol = "K^pp";
  k.unit = "energy";
  k.meaning = "pair stiffness; \"auto\": the Hertz constant of [material] (E_p, nu, the smallest d); 0: no contact";
  k.required = "K^pp (energy) or \"auto\"";
  e.keys.push_back(k);
  LawKey w = k;
  w.table = LawTable::wall;
  w.symbol = "K^pw";
  w.meaning = "wall stiffness; \"auto\": the Hertz constant of [material]";
  w.required = "K^pw (energy) or \"auto\"";
  e.keys.push_back(w);
  e.prepare = [](const ContactLawInput& in) -> std::unique_ptr<PreparedContactLaw> {
    return std::make_unique<PreparedHertz>(in);
  };
  e.sections = {{"contact", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return HertzContactProvider::load(r, s);
                 }},
                {"walls", [](ByteReader& r, const ParticleStore&) -> std::unique_ptr<ForceProvider> {
                   return WallProvider::load(r);
                 }}};
  return e;
}

}  // namespace dem
