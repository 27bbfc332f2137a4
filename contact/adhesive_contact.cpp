#include "contact/adhesive_contact.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <string>

#include "contact/contact_laws.hpp"
#include "contact/mesh_contact_provider.hpp"
#include "contact/hertz_mindlin.hpp"  // rayleigh_time_step
#include "core/format.hpp"

namespace dem {

namespace jkr {

namespace {
constexpr double kPi = std::numbers::pi;
/// c = sqrt(4 pi gamma/E*): delta = a²/R* - c sqrt(a) (length^{1/2}).
double adhesion_length(double e_star, double gamma) { return std::sqrt(4.0 * kPi * gamma / e_star); }
}  // namespace

double contact_radius(double delta, double r_star, double e_star, double gamma) {
  const double c = adhesion_length(e_star, gamma);
  if (!(c > 0.0)) return std::sqrt(std::max(r_star * delta, 0.0));
  // With s = sqrt(a): s^4 + p s + q = 0, p = -c R*, q = -R* delta. Ferrari:
  // m > 0 solves the resolvent m³ + P m - K = 0 (P = R* delta, K = c² R*²/8),
  // and the larger root is s = (sqrt(2m) + sqrt(2 c R*/sqrt(2m) - 2m))/2.
  const double k = 0.125 * c * c * r_star * r_star;
  // Cardano with u³ = K/2 + sqrt(D), D = K²/4 + P³/27: D >= 0 on the branch,
  // 0 at its end P = -3 (K²/4)^{1/3}, where the two roots meet (below it the
  // end's radius).
  const double big_p = std::max(r_star * delta, -3.0 * std::cbrt(0.25 * k * k));
  const double d = std::max(0.25 * k * k + big_p * big_p * big_p / 27.0, 0.0);
  const double u = std::cbrt(0.5 * k + std::sqrt(d));
  // m = u - P/(3u), written without cancellation for P > 0.
  const double u2 = u * u;
  const double m = big_p > 0.0 ? k * u2 / (u2 * u2 + u2 * big_p / 3.0 + big_p * big_p / 9.0) : u - big_p / (3.0 * u);
  const double q = std::sqrt(2.0 * m);
  const double s = 0.5 * (q + std::sqrt(std::max(2.0 * c * r_star / q - 2.0 * m, 0.0)));
  return s * s;
}

double normal_force(double a, double r_star, double e_star, double gamma) {
  const double c = adhesion_length(e_star, gamma);
  return e_star * (4.0 * a * a * a / (3.0 * r_star) - 2.0 * c * a * std::sqrt(a));
}

double energy(double delta, double r_star, double e_star, double gamma) {
  const double c = adhesion_length(e_star, gamma);
  const double a = contact_radius(delta, r_star, e_star, gamma);
  // The integral of F_e d(delta) = F_e(a) delta'(a) da from the branch's
  // radius at delta = 0, a_0^{3/2} = c R* (where it is -0.3 E* c² a_0²).
  const double a2 = a * a, a0 = std::cbrt(c * r_star * c * r_star);
  return e_star * (8.0 * a2 * a2 * a / (15.0 * r_star * r_star) - 4.0 * c / (3.0 * r_star) * a2 * a * std::sqrt(a) +
                   0.5 * c * c * (a2 + 0.6 * a0 * a0));
}

double pulloff_distance(double r_star, double e_star, double gamma) {
  return std::cbrt(3.0 * kPi * kPi * gamma * gamma * r_star / (16.0 * e_star * e_star));
}

double pulloff_force(double r_star, double gamma) { return 3.0 * kPi * gamma * r_star; }

}  // namespace jkr

namespace {
const char* law_name(Adhesion model) { return model == Adhesion::jkr ? "JKR contact: " : "DMT contact: "; }

/// sqrt(5) zeta of a restitution e, zeta = -ln e/sqrt(ln² e + pi²) (docs/model.md §11.7).
double damping_of(double e) {
  const double ln_e = std::log(e);
  return std::sqrt(5.0) * -ln_e / std::sqrt(ln_e * ln_e + std::numbers::pi * std::numbers::pi);
}
}  // namespace

AdhesiveContactLaw::AdhesiveContactLaw(Adhesion model, double surface_energy, double tangential_damping,
                                       std::vector<AdhesiveMaterial> materials, double time_step, PairTable pairs)
    : model_(model),
      gamma_(surface_energy),
      x_t_(tangential_damping),
      materials_(std::move(materials)),
      table_(std::move(pairs)) {
  const std::string what = law_name(model_);
  if (model_ != Adhesion::jkr && model_ != Adhesion::dmt) throw std::invalid_argument("adhesive contact: unknown model");
  if (!(std::isfinite(gamma_) && gamma_ >= 0.0))
    throw std::invalid_argument(what + "the surface energy must be finite and >= 0");
  if (!(std::isfinite(x_t_) && x_t_ >= 0.0))
    throw std::invalid_argument(what + "the tangential damping ratio must be finite and >= 0");
  if (materials_.empty()) throw std::invalid_argument(what + "no materials");
  for (std::size_t k = 0; k < materials_.size(); ++k) {
    const AdhesiveMaterial& m = materials_[k];
    const std::string name = what + "material " + std::to_string(k) + ": ";
    if (!(std::isfinite(m.youngs_modulus) && m.youngs_modulus > 0.0)) throw std::invalid_argument(name + "E must be > 0");
    if (!(m.poisson_ratio > -1.0 && m.poisson_ratio <= 0.5))
      throw std::invalid_argument(name + "nu must be in (-1, 0.5]");
    if (!(m.restitution > 0.0 && m.restitution <= 1.0)) throw std::invalid_argument(name + "e must be in (0, 1]");
    if (!(std::isfinite(m.friction) && m.friction >= 0.0)) throw std::invalid_argument(name + "mu_s must be >= 0");
  }
  check_pair_table(table_, materials_.size(), what);
  for (const PairCoefficients& row : table_)
    if (row.rolling_friction) throw std::invalid_argument(what + "a pair's mu_r: the law has no rolling resistance");
  set_time_step(time_step);
  count_ = static_cast<std::uint32_t>(materials_.size());
  pairs_.resize(static_cast<std::size_t>(count_) * count_);
  for (std::uint32_t a = 0; a < count_; ++a)
    for (std::uint32_t b = 0; b < count_; ++b) {
      const AdhesiveMaterial& x = materials_[a];
      const AdhesiveMaterial& y = materials_[b];
      PairConstants& p = pairs_[a * count_ + b];
      // LAMMPS's mix_stiffnessE and mix_stiffnessG (docs/model.md §11.2).
      p.e_star = 1.0 / ((1.0 - x.poisson_ratio * x.poisson_ratio) / x.youngs_modulus +
                        (1.0 - y.poisson_ratio * y.poisson_ratio) / y.youngs_modulus);
      p.g_star = 1.0 / (2.0 * (2.0 - x.poisson_ratio) * (1.0 + x.poisson_ratio) / x.youngs_modulus +
                        2.0 * (2.0 - y.poisson_ratio) * (1.0 + y.poisson_ratio) / y.youngs_modulus);
      p.damping = damping_of(a == b ? x.restitution : std::sqrt(x.restitution * y.restitution));
      p.mu = a == b ? x.friction : std::sqrt(x.friction * y.friction);
    }
  // The pair table's values in place of the geometric means.
  for (const PairCoefficients& row : table_)
    for_both_orders(row, [&](std::uint32_t a, std::uint32_t b) {
      PairConstants& p = pairs_[a * count_ + b];
      if (row.restitution) p.damping = damping_of(*row.restitution);
      if (row.sliding_friction) p.mu = *row.sliding_friction;
    });
}

void AdhesiveContactLaw::set_time_step(double h) {
  if (!(std::isfinite(h) && h > 0.0))
    throw std::invalid_argument(std::string(law_name(model_)) + "the time step must be > 0");
  h_ = h;
}

double AdhesiveContactLaw::reach_beyond_touch(double r_star_max) const {
  if (model_ != Adhesion::jkr) return 0.0;
  double out = 0.0;
  for (const PairConstants& p : pairs_) out = std::max(out, jkr::pulloff_distance(r_star_max, p.e_star, gamma_));
  return out;
}

double AdhesiveContactLaw::touching_energy(const PairConstants& p, double delta, double r_star) const {
  if (model_ == Adhesion::jkr) return jkr::energy(delta, r_star, p.e_star, gamma_);
  if (!(delta > 0.0)) return 0.0;
  return (8.0 / 15.0) * p.e_star * std::sqrt(r_star) * delta * delta * std::sqrt(delta) -
         4.0 * std::numbers::pi * gamma_ * r_star * delta;
}

bool AdhesiveContactLaw::holds(const PairConstants& p, double delta, double r_star) const {
  // As LAMMPS: JKR holds while the centre distance is below r_i + r_j +
  // delta_po, DMT while the spheres overlap.
  if (model_ == Adhesion::jkr) return delta > -jkr::pulloff_distance(r_star, p.e_star, gamma_);
  return delta > 0.0;
}

/// One touching contact once its geometry is known (docs/model.md §11.7).
void AdhesiveContactLaw::contact(const PairConstants& p, const Vec3& n, double delta, double r_star, double m_star,
                                 const Vec3& v_rel, double r_i, double r_j, State& st, PairOutput& out) const {
  st.touching = 1;
  double a = 0.0, f_e = 0.0, f_po = 0.0;
  if (model_ == Adhesion::jkr) {
    a = jkr::contact_radius(delta, r_star, p.e_star, gamma_);
    f_e = jkr::normal_force(a, r_star, p.e_star, gamma_);
    f_po = jkr::pulloff_force(r_star, gamma_);
  } else {
    a = std::sqrt(r_star * delta);
    f_po = 4.0 * std::numbers::pi * gamma_ * r_star;
    f_e = (4.0 / 3.0) * p.e_star * a * delta - f_po;
  }
  const double eta_n = p.damping * std::sqrt(m_star * (4.0 / 3.0) * p.e_star * a);
  const double v_n = v_rel.dot(n);
  const Vec3 v_t = v_rel - v_n * n;
  const double f_n = f_e - eta_n * v_n;
  const double k_t = 8.0 * p.g_star * a, eta_t = x_t_ * eta_n;
  st.xi += h_ * v_t;
  st.xi -= st.xi.dot(n) * n;
  Vec3 f_t = -k_t * st.xi - eta_t * v_t;
  // LAMMPS's critical force of cohesive models: |F_e + 2 F_po|.
  const double ft = f_t.norm(), cap = p.mu * std::abs(f_e + 2.0 * f_po);
  if (ft > cap) {
    if (st.xi.squaredNorm() > 0.0 && k_t > 0.0) {
      f_t *= cap / ft;
      st.xi = -(f_t + eta_t * v_t) / k_t;
    } else {
      f_t = Vec3::Zero();
    }
  }
  out.force = f_n * n + f_t;
  out.nc_force = out.force - f_e * n;
  out.moment_i = -r_i * n.cross(f_t);
  out.moment_j = -r_j * n.cross(f_t);
}

void AdhesiveContactLaw::evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, State& st,
                       PairOutput& out) const {
  evaluate_branch(s, i, j, s.position[i] - s.position[j], s.velocity[j], st, out);
}

void AdhesiveContactLaw::evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image,
                       State& st, PairOutput& out) const {
  evaluate_branch(s, i, j, s.position[i] - image.position_of(s.position[j]), image.velocity_of(s.velocity[j]), st, out);
}

void AdhesiveContactLaw::evaluate_branch(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const Vec3& rv,
                       const Vec3& v_j, State& st, PairOutput& out) const {
  const double ri = s.radius[i], rj = s.radius[j], reach = ri + rj, dist2 = rv.squaredNorm();
  const double r_star = ri * rj / reach;
  const PairConstants& p = pair(s.material[i], s.material[j]);
  out = PairOutput{};
  // A new contact forms at zero overlap; a JKR contact holds down to -delta_po.
  const double limit =
      st.touching && model_ == Adhesion::jkr ? reach + jkr::pulloff_distance(r_star, p.e_star, gamma_) : reach;
  if (!(dist2 < limit * limit)) {
    // Letting go: U leaves E_total here (booked in W_contact).
    if (st.touching) out.released = touching_energy(p, reach - std::sqrt(dist2), r_star);
    st = State{};
    return;
  }
  const double dist = std::sqrt(dist2);
  const Vec3 n = rv / dist;
  const Vec3 v_rel = s.velocity[i] - v_j - (ri * s.angular_velocity[i] + rj * s.angular_velocity[j]).cross(n);
  contact(p, n, reach - dist, r_star, effective_mass(s, i, j), v_rel, ri, rj, st, out);
}

double AdhesiveContactLaw::energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const State& st) const {
  if (!st.touching) return 0.0;
  const double ri = s.radius[i], rj = s.radius[j], reach = ri + rj;
  return touching_energy(pair(s.material[i], s.material[j]), reach - (s.position[i] - s.position[j]).norm(),
                         ri * rj / reach);
}

double AdhesiveContactLaw::energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image,
                     const State& st) const {
  if (!st.touching) return 0.0;
  const double ri = s.radius[i], rj = s.radius[j], reach = ri + rj;
  return touching_energy(pair(s.material[i], s.material[j]), reach - (s.position[i] - image.position_of(s.position[j])).norm(),
                         ri * rj / reach);
}

void AdhesiveContactLaw::evaluate_wall(const ParticleStore& s, std::uint32_t i, const Wall& wall, State& st,
                                       PairOutput& out) const {
  const double ri = s.radius[i];
  const double delta = ri - (s.position[i] - wall.point).dot(wall.normal);
  const PairConstants& p = pair(s.material[i], wall.material_for(s.material[i]));
  out = PairOutput{};
  if (!(st.touching ? holds(p, delta, ri) : delta > 0.0)) {
    if (st.touching) out.released = touching_energy(p, delta, ri);
    st = State{};
    return;
  }
  const Vec3 v_rel = s.velocity[i] - wall.velocity - (ri * s.angular_velocity[i]).cross(wall.normal);
  contact(p, wall.normal, delta, ri, s.mass[i], v_rel, ri, 0.0, st, out);
}

double AdhesiveContactLaw::wall_energy(const ParticleStore& s, std::uint32_t i, const Wall& wall,
                                       const State& st) const {
  if (!st.touching) return 0.0;
  const double ri = s.radius[i];
  return touching_energy(pair(s.material[i], wall.material_for(s.material[i])),
                         ri - (s.position[i] - wall.point).dot(wall.normal), ri);
}

namespace {
/// Bit 7 of the model byte in a checkpoint: the pair table follows the
/// materials (files before pair tables never set it).
constexpr std::uint8_t kPairTableBit = 0x80;
}  // namespace

void AdhesiveContactLaw::save(ByteWriter& w) const {
  w.u8(static_cast<std::uint8_t>(static_cast<std::uint8_t>(model_) | (table_.empty() ? 0 : kPairTableBit)));
  w.f64(gamma_);
  w.f64(x_t_);
  w.f64(h_);
  w.array(materials_, [](ByteWriter& ww, const AdhesiveMaterial& m) {
    ww.f64(m.youngs_modulus);
    ww.f64(m.poisson_ratio);
    ww.f64(m.restitution);
    ww.f64(m.friction);
  });
  if (!table_.empty()) save_pair_table(w, table_);
}

AdhesiveContactLaw AdhesiveContactLaw::load(ByteReader& r) {
  const std::uint8_t flags = r.u8("adhesive contact model");
  const std::uint8_t model = flags & static_cast<std::uint8_t>(~kPairTableBit);
  if (model > 1) throw StateError("inconsistent: adhesive contact model " + std::to_string(model) + " (0 JKR, 1 DMT)");
  const double gamma = r.f64("adhesive contact surface energy"), x_t = r.f64("adhesive contact damping");
  const double h = r.f64("adhesive contact time step");
  std::vector<AdhesiveMaterial> mats;
  r.array(mats, 32, "adhesive contact material", [](ByteReader& rr) {
    AdhesiveMaterial m;
    m.youngs_modulus = rr.f64("adhesive contact material");
    m.poisson_ratio = rr.f64("adhesive contact material");
    m.restitution = rr.f64("adhesive contact material");
    m.friction = rr.f64("adhesive contact material");
    return m;
  });
  PairTable table;
  if (flags & kPairTableBit) table = load_pair_table(r);
  try {
    return AdhesiveContactLaw(static_cast<Adhesion>(model), gamma, x_t, std::move(mats), h, std::move(table));
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("inconsistent: ") + e.what());
  }
}


namespace {

class PreparedAdhesive final : public PreparedContactLaw {
 public:
  PreparedAdhesive(Adhesion model, const ContactLawInput& in) : model_(model) {
    gamma_ = *in.values.number("surface_energy");  // required
    const std::optional<double> x_t = in.values.number("tangential_damping");
    x_t_ = x_t ? *x_t : 1.0;
    for (const LawMaterial& m : in.materials) {
      materials_.push_back({m.youngs_modulus, m.poisson_ratio, m.restitution, m.sliding_friction});
      names_.push_back(m.name);
    }
    table_ = in.pairs;
    // Refuses what the law would refuse, before anything is built.
    (void)AdhesiveContactLaw(model_, gamma_, x_t_, materials_, 1.0, table_);
  }
  /// The smallest Rayleigh step of every particle of its material (walls
  /// too), as for Hertz-Mindlin (docs/model.md §14.3, §11.7).
  std::optional<StepLimit> time_step_limit(const ParticleStore& s) const override {
    std::optional<StepLimit> out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const AdhesiveMaterial& m = materials_.at(s.material[i]);
      const double h = rayleigh_time_step(s.radius[i], s.mass[i], m.youngs_modulus, m.poisson_ratio);
      if (!out || h < out->h)
        out = StepLimit{h, "Rayleigh time step of particle " + std::to_string(s.id[i]) + " (pi r sqrt(rho/G)/(0.1631 nu + " +
                               "0.8766) with r = " + format_g(s.radius[i]) + ", E = " + format_g(m.youngs_modulus) +
                               ", nu = " + format_g(m.poisson_ratio) + "; [[material]] \"" + names_[s.material[i]] +
                               "\" E, nu, density)"};
    }
    return out;
  }
  /// The list reaches the pull-off distance beyond the skin, so that a
  /// stretched JKR contact stays listed (docs/model.md §11.7).
  ContactLawProviders make(const ParticleStore& s, std::vector<Wall> walls, double skin, double h) override {
    const AdhesiveContactLaw law(model_, gamma_, x_t_, materials_, h, table_);
    double r_max = 0.0;
    for (const double r : s.radius) r_max = std::max(r_max, r);
    // R* <= r_max/2 for any pair; 1 % against round-off in the comparison.
    const double reach = 1.01 * law.reach_beyond_touch(0.5 * r_max);
    const bool jkr = model_ == Adhesion::jkr;
    ContactLawProviders p;
    p.pairs = std::make_unique<AdhesiveContactProvider>(law, skin + reach, jkr ? "jkr" : "dmt");
    if (!walls.empty())
      p.walls = std::make_unique<AdhesiveWallProvider>(std::move(walls), law, s.size(), jkr ? "jkrwalls" : "dmtwalls");
    return p;
  }
  /// A wall contact lasts to the pull-off distance at R* = r_i (the
  /// largest radius here), so that is the meshes' reach.
  std::unique_ptr<ForceProvider> make_meshes(const ParticleStore& s, std::vector<MeshWall> meshes, double skin,
                                             double h) override {
    const AdhesiveContactLaw law(model_, gamma_, x_t_, materials_, h, table_);
    double r_max = 0.0;
    for (const double r : s.radius) r_max = std::max(r_max, r);
    const double reach = 1.01 * law.reach_beyond_touch(r_max);
    return std::make_unique<MeshContactProvider<AdhesiveContactLaw>>(std::move(meshes), law, s.size(), skin, reach,
                                                                     model_ == Adhesion::jkr ? "jkrmesh" : "dmtmesh");
  }

 private:
  Adhesion model_;
  double gamma_ = 0.0, x_t_ = 1.0;
  std::vector<AdhesiveMaterial> materials_;
  std::vector<std::string> names_;
  PairTable table_;
};

ContactLawEntry adhesive_entry(Adhesion model) {
  const bool jkr = model == Adhesion::jkr;
  ContactLawEntry e;
  e.keyword = jkr ? "jkr" : "dmt";
  e.title = jkr ? "JKR adhesion (Johnson, Kendall & Roberts 1971) with Mindlin friction and damping from e "
                  "(LAMMPS pair granular jkr ... tangential mindlin)"
                : "DMT adhesion (Derjaguin, Muller & Toporov 1975): Hertz with a constant attraction, Mindlin "
                  "friction and damping from e (LAMMPS pair granular dmt ... tangential mindlin)";
  e.section = "§11.7";
  e.needs_materials = true;
  e.materials_note = "(E, nu, e, mu_s)";
  e.pair_keys = {"e", "mu_s"};
  LawKey gamma;
  gamma.name = "surface_energy";
  gamma.check = "nonnegative";
  gamma.symbol = "gamma";
  gamma.unit = "energy/area";
  gamma.meaning = jkr ? "surface energy (LAMMPS cohesion; work of adhesion W = 2 gamma), pull-off force 3 pi gamma R*"
                      : "surface energy (LAMMPS cohesion; work of adhesion W = 2 gamma), pull-off force 4 pi gamma R*";
  gamma.required = "gamma (energy/area, LAMMPS's cohesion)";
  e.keys.push_back(gamma);
  LawKey xt;
  xt.name = "tangential_damping";
  xt.symbol = "x_t";
  xt.unit = "-";
  xt.meaning = "tangential damping as a fraction of the normal damping";
  xt.default_text = "1";
  e.keys.push_back(xt);
  e.refusals.push_back({"stiffness", LawTable::contact,
                        "does not apply to law \"" + e.keyword + "\" (its stiffness comes from E and nu of the "
                        "[[material]]s)"});
  e.prepare = [model](const ContactLawInput& in) -> std::unique_ptr<PreparedContactLaw> {
    return std::make_unique<PreparedAdhesive>(model, in);
  };
  const std::string pairs = jkr ? "jkr" : "dmt", walls = jkr ? "jkrwalls" : "dmtwalls";
  const std::string meshes = jkr ? "jkrmesh" : "dmtmesh";
  e.sections = {{pairs, [pairs](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return AdhesiveContactProvider::load(r, s, pairs);
                 }},
                {walls, [walls](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return AdhesiveWallProvider::load(r, s, walls);
                 }},
                {meshes, [meshes](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return MeshContactProvider<AdhesiveContactLaw>::load(r, s, meshes);
                 }}};
  return e;
}

}  // namespace

ContactLawEntry jkr_contact_law() { return adhesive_entry(Adhesion::jkr); }
ContactLawEntry dmt_contact_law() { return adhesive_entry(Adhesion::dmt); }

}  // namespace dem
