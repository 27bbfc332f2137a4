// The registry entry of the frictionless Hertz-type contact
// (docs/model.md §4; HertzContactLaw in contact/contact_provider.hpp, the
// walls of contact/wall_provider.hpp).

#include <cmath>
#include <memory>

#include "contact/contact_laws.hpp"
#include "contact/contact_provider.hpp"
#include "contact/mesh_contact_provider.hpp"
#include "contact/plane_wall_law.hpp"
#include "contact/wall_provider.hpp"

namespace dem {

namespace {

/// Section 4's Hertz-type wall, the mirror image of eq. (57):
/// U(g) = (2/5) K^pw [1 - g/r]_+^{5/2}, U''(g) = (3/2) K^pw / r² [1 - g/r]^{1/2}.
struct HertzWall {
  static ContactTerms terms(const Vec3& x, double r, const Wall& w) { return wall_contact(x, r, w); }
  static double curvature(double gap, double r, const Wall& w) {
    return 1.5 * w.stiffness / (r * r) * std::sqrt(1.0 - gap / r);
  }
  static double normal_force(double overlap, double r, const Wall& w) {
    const double o = overlap / r;  // 1 - g/r
    return w.stiffness / r * o * std::sqrt(o);
  }
};

class PreparedHertz final : public PreparedContactLaw {
 public:
  explicit PreparedHertz(const ContactLawInput& in) {
    const std::optional<double> k = in.values.number("stiffness");
    pair_ = k ? *k : in.contact_given ? in.material_pair_stiffness() : 0.0;
    for (std::size_t w = 0; w < in.wall_values.size(); ++w) {
      const std::optional<double> kw = in.wall_values[w].number("stiffness");
      walls_.push_back(kw ? *kw : in.material_wall_stiffness(w));
    }
    for (std::size_t m = 0; m < in.mesh_values.size(); ++m) {
      const std::optional<double> km = in.mesh_values[m].number("stiffness");
      meshes_.push_back(km ? *km : in.material_mesh_stiffness(m));
    }
  }
  double mesh_stiffness(std::size_t m) const override { return meshes_.at(m); }
  std::unique_ptr<ForceProvider> make_meshes(const ParticleStore& s, std::vector<MeshWall> meshes, double skin,
                                             double) override {
    return std::make_unique<PlaneMeshProvider>(std::move(meshes), PlaneMeshLaw{&hertz_plane_wall()}, s.size(), skin,
                                               0.0, "pmeshes");
  }
  double pair_stiffness() const override { return pair_; }
  double wall_stiffness(std::size_t w) const override { return walls_.at(w); }
  ContactLawProviders make(const ParticleStore&, std::vector<Wall> walls, double skin, double) override {
    ContactLawProviders p;
    p.pairs = std::make_unique<HertzContactProvider>(HertzContactLaw{pair_}, skin);
    p.walls = std::make_unique<WallProvider>(std::move(walls), hertz_plane_wall());
    return p;
  }

 private:
  double pair_ = 0.0;
  std::vector<double> walls_, meshes_;
};

}  // namespace

const PlaneWallLaw& hertz_plane_wall() {
  static const PlaneWallLawOf<HertzWall> law(0, "Hertz", false);
  return law;
}

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
                 }},
                {"pmeshes", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return PlaneMeshProvider::load(r, s, "pmeshes");
                 }}};
  e.plane_walls = &hertz_plane_wall();
  return e;
}

}  // namespace dem
