// The registry entry of iBDEM's penalty contact between unbonded particles
// and at walls, with its optional friction filter (docs/model.md §11.1;
// PenaltyContactLaw in contact/contact_provider.hpp, WallProvider's penalty
// walls).

#include <algorithm>
#include <cmath>
#include <memory>

#include "contact/contact_laws.hpp"
#include "contact/contact_provider.hpp"
#include "contact/mesh_contact_provider.hpp"
#include "contact/plane_wall_law.hpp"
#include "contact/wall_provider.hpp"
#include "core/format.hpp"

namespace dem {

namespace {

/// iBDEM's penalty wall (docs/model.md §11.1, eq. 33 with [.]_+):
/// U(g) = ½ k_c [r - g]_+², F = k_c [r - g]_+ n, U''(g) = k_c.
struct PenaltyWall {
  static ContactTerms terms(const Vec3& x, double r, const Wall& w) {
    const double overlap = r - (x - w.point).dot(w.normal);
    ContactTerms t;
    if (overlap > 0.0) {
      t.force_i = (w.stiffness * overlap) * w.normal;
      t.energy = 0.5 * w.stiffness * overlap * overlap;
    }
    return t;
  }
  static double curvature(double, double, const Wall& w) { return w.stiffness; }
  static double normal_force(double overlap, double, const Wall& w) { return w.stiffness * overlap; }
};

class PreparedPenalty final : public PreparedContactLaw {
 public:
  explicit PreparedPenalty(const ContactLawInput& in) : filter_(in.values.flag("friction_filter")) {
    const std::optional<double> k = in.values.number("stiffness"), kw = in.values.number("wall_stiffness");
    pair_ = k ? *k : in.e_max * in.r_max;
    wall_default_ = kw ? *kw : in.e_max * in.r_max;
    for (const LawValues& v : in.wall_values) {
      const std::optional<double> own = v.number("stiffness");
      walls_.push_back(own ? *own : wall_default_);
    }
    for (const LawValues& v : in.mesh_values) {
      const std::optional<double> own = v.number("stiffness");
      meshes_.push_back(own ? *own : wall_default_);
    }
    walls_given_ = !in.wall_values.empty() || !in.mesh_values.empty();
    if (filter_)
      for (const LawMaterial& m : in.materials) {
        sliding_.push_back(m.sliding_friction);
        rolling_.push_back(m.rolling_friction);
      }
  }
  double pair_stiffness() const override { return pair_; }
  double wall_stiffness(std::size_t w) const override { return walls_.at(w); }
  double mesh_stiffness(std::size_t m) const override { return meshes_.at(m); }
  /// The penalty walls' law on each mesh contact (the friction filter does
  /// not act at meshes).
  std::unique_ptr<ForceProvider> make_meshes(const ParticleStore& s, std::vector<MeshWall> meshes, double skin,
                                             double) override {
    return std::make_unique<PlaneMeshProvider>(std::move(meshes), PlaneMeshLaw{&penalty_plane_wall()}, s.size(), skin,
                                               0.0, "pmeshes");
  }
  /// sqrt(m_min/k) for k_ec and (with walls) the default k_c (docs/model.md §9.6).
  std::optional<StepLimit> time_step_limit(const ParticleStore& s) const override {
    if (s.size() == 0) return std::nullopt;
    const double m_min = *std::min_element(s.mass.begin(), s.mass.end());
    std::optional<StepLimit> out;
    for (const auto& [k, what] : {std::pair<double, const char*>{pair_, "[contact] stiffness"},
                                  {walls_given_ ? wall_default_ : 0.0, "[contact] wall_stiffness"}}) {
      if (!(k > 0.0)) continue;
      const double h = std::sqrt(m_min / k);
      if (!out || h < out->h)
        out = StepLimit{h, "penalty stiffness " + format_g(k) + " for the smallest mass " + format_g(m_min) + " (" +
                               what + ")"};
    }
    return out;
  }
  ContactLawProviders make(const ParticleStore&, std::vector<Wall> walls, double skin, double) override {
    ContactLawProviders p;
    p.pairs = std::make_unique<PenaltyContactProvider>(PenaltyContactLaw{pair_, sliding_, rolling_}, skin, "penalty");
    auto w = std::make_unique<WallProvider>(std::move(walls), penalty_plane_wall());
    w->set_filter(sliding_, rolling_);
    p.walls = std::move(w);
    return p;
  }
  std::string clump_conflict() const override {
    return filter_ ? "a [[clump]] cannot be combined with [contact] friction_filter = true: the filter changes "
                     "the velocities of spheres, a clump's members take theirs from the clump, so the work it "
                     "books would not be taken out"
                   : "";
  }

 private:
  bool filter_ = false, walls_given_ = false;
  double pair_ = 0.0, wall_default_ = 0.0;
  std::vector<double> walls_, meshes_, sliding_, rolling_;
};

}  // namespace

const PlaneWallLaw& penalty_plane_wall() {
  static const PlaneWallLawOf<PenaltyWall> law(1, "penalty", true);
  return law;
}

ContactLawEntry penalty_contact_law() {
  ContactLawEntry e;
  e.keyword = "penalty";
  e.title = "iBDEM's penalty repulsion V = (1/2) k [r_i + r_j - |x_i - x_j|]_+^2 between unbonded particles and at "
            "walls, with iBDEM's optional friction filter";
  e.section = "§11.1";
  e.needs_materials = true;
  e.materials_note = "(E, nu, ...)";
  e.hessian = true;
  LawKey k;
  k.name = "stiffness";
  k.kind = LawKeyKind::number_or_auto;
  k.symbol = "k_ec";
  k.unit = "force/length";
  k.meaning = "pair stiffness";
  k.default_text = "auto: E_max r_max";
  e.keys.push_back(k);
  LawKey kc = k;
  kc.name = "wall_stiffness";
  kc.symbol = "k_c";
  kc.meaning = "wall stiffness of every [[wall]] without its own";
  kc.note = "(k_c)";
  e.keys.push_back(kc);
  LawKey f;
  f.name = "friction_filter";
  f.kind = LawKeyKind::boolean;
  f.symbol = "filter";
  f.unit = "-";
  f.meaning = "iBDEM's friction filter with the [[material]] mu_s and mu_r";
  f.note = "(iBDEM's filter, docs/model.md §11.1)";
  f.default_text = "false";
  e.keys.push_back(f);
  LawKey w = k;
  w.table = LawTable::wall;
  w.symbol = "k_c";
  w.meaning = "this wall's stiffness";
  w.default_text = "[contact] wall_stiffness";
  e.keys.push_back(w);
  e.prepare = [](const ContactLawInput& in) -> std::unique_ptr<PreparedContactLaw> {
    return std::make_unique<PreparedPenalty>(in);
  };
  e.sections = {{"penalty", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return PenaltyContactProvider::load(r, s, "penalty");
                 }},
                {"walls", [](ByteReader& r, const ParticleStore&) -> std::unique_ptr<ForceProvider> {
                   return WallProvider::load(r);
                 }},
                {"pmeshes", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return PlaneMeshProvider::load(r, s, "pmeshes");
                 }}};
  e.plane_walls = &penalty_plane_wall();
  return e;
}

}  // namespace dem
