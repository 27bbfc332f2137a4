#include "contact/hertz_mindlin.hpp"

#include <memory>

#include "contact/contact_laws.hpp"
#include "contact/friction_wall_provider.hpp"
#include "core/format.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

namespace dem {

namespace {
/// The bytes of the options block of a checkpoint (save below).
constexpr std::uint32_t kOptionBytes = 10;

void check(const ContactMaterial& m, std::size_t k) {
  const std::string name = "contact material " + std::to_string(k) + ": ";
  if (!(std::isfinite(m.youngs_modulus) && m.youngs_modulus > 0.0)) throw std::invalid_argument(name + "E must be > 0");
  if (!(m.poisson_ratio > -1.0 && m.poisson_ratio <= 0.5)) throw std::invalid_argument(name + "nu must be in (-1, 0.5]");
  if (!(m.restitution > 0.0 && m.restitution <= 1.0)) throw std::invalid_argument(name + "e must be in (0, 1]");
  if (!(std::isfinite(m.sliding_friction) && m.sliding_friction >= 0.0)) throw std::invalid_argument(name + "mu_s must be >= 0");
  if (!(std::isfinite(m.rolling_friction) && m.rolling_friction >= 0.0)) throw std::invalid_argument(name + "mu_r must be >= 0");
}
}  // namespace

ContactPair contact_pair(const ContactMaterial& a, const ContactMaterial& b, NormalDamping damping) {
  ContactPair p;
  p.e_star = 1.0 / ((1 - a.poisson_ratio * a.poisson_ratio) / a.youngs_modulus +
                    (1 - b.poisson_ratio * b.poisson_ratio) / b.youngs_modulus);
  p.g_star = 1.0 / (2 * (2 - a.poisson_ratio) * (1 + a.poisson_ratio) / a.youngs_modulus +
                    2 * (2 - b.poisson_ratio) * (1 + b.poisson_ratio) / b.youngs_modulus);
  const double e = &a == &b ? a.restitution : std::sqrt(a.restitution * b.restitution);
  p.damping = damping_coefficient(damping, e);
  p.mu_s = std::sqrt(a.sliding_friction * b.sliding_friction);
  p.mu_r = std::sqrt(a.rolling_friction * b.rolling_friction);
  return p;
}

namespace {
/// The pair-table row's values in place of the mixed ones (e through the
/// damping law).
void override_pair(ContactPair& p, const PairCoefficients& row, NormalDamping damping) {
  if (row.restitution) p.damping = damping_coefficient(damping, *row.restitution);
  if (row.sliding_friction) p.mu_s = *row.sliding_friction;
  if (row.rolling_friction) p.mu_r = *row.rolling_friction;
}
}  // namespace

HertzMindlinLaw::HertzMindlinLaw(std::vector<ContactMaterial> materials, double time_step, HertzMindlinModels models,
                                 PairTable pairs)
    : materials_(std::move(materials)), table_(std::move(pairs)), h_(time_step), models_(models) {
  if (!(std::isfinite(models_.rolling_damping) && models_.rolling_damping >= 0.0))
    throw std::invalid_argument("Hertz-Mindlin contact: the rolling damping must be finite and >= 0");
  if (materials_.empty()) throw std::invalid_argument("Hertz-Mindlin contact: no materials");
  for (std::size_t k = 0; k < materials_.size(); ++k) check(materials_[k], k);
  check_pair_table(table_, materials_.size(), "Hertz-Mindlin contact: ");
  if (!(std::isfinite(h_) && h_ > 0.0)) throw std::invalid_argument("Hertz-Mindlin contact: the time step must be > 0");
  count_ = static_cast<std::uint32_t>(materials_.size());
  pairs_.resize(static_cast<std::size_t>(count_) * count_);
  for (std::uint32_t a = 0; a < count_; ++a)
    for (std::uint32_t b = 0; b < count_; ++b)
      pairs_[a * count_ + b] = a == b ? contact_pair(materials_[a], materials_[a], models_.damping)
                                      : contact_pair(materials_[a], materials_[b], models_.damping);
  for (const PairCoefficients& row : table_)
    for_both_orders(row, [&](std::uint32_t a, std::uint32_t b) {
      override_pair(pairs_[a * count_ + b], row, models_.damping);
    });
}

namespace {
/// The rolling resistance moment on i (docs/model.md §11.6), -(that) on j.
/// kn, s_t: the normal (secant) and tangential stiffness; elastic: k_n
/// delta; fn_size: |F_n|; rolling_inertia: I_r of EPSD's dashpot.
Vec3 rolling_moment(const ContactPair& p, const Vec3& n, const Vec3& dw, double kn, double s_t, double elastic,
                    double fn_size, double r_star, double rolling_inertia, double h, const HertzMindlinModels& models,
                    HertzMindlinLaw::State& st) {
  if (models.rolling == RollingModel::cdt) {  // no history: a torque against the relative spin
    const double w = dw.norm();
    if (!(w > 0.0)) return Vec3::Zero();
    const Vec3 m = (-p.mu_r * elastic * r_star / w) * dw;
    return m - m.dot(n) * n;
  }
  const double kr = models.rolling == RollingModel::epsd ? 2.25 * kn * p.mu_r * p.mu_r * r_star * r_star
                                                         : s_t * r_star * r_star;
  const Vec3 wr = dw - dw.dot(n) * n;
  st.rolling -= kr * h * wr;
  st.rolling -= st.rolling.dot(n) * n;
  const double cap = p.mu_r * r_star * fn_size, m = st.rolling.norm();
  if (m > cap) {
    st.rolling *= cap / m;
    return st.rolling;  // fully mobilised: no dashpot
  }
  if (models.rolling == RollingModel::epsd && models.rolling_damping > 0.0)
    return st.rolling - (models.rolling_damping * 2.0 * std::sqrt(rolling_inertia * kr)) * wr;
  return st.rolling;
}

/// One contact of docs/model.md §11.2 once its geometry is known: normal n (from
/// j to i), overlap delta, R*, m*, the contact-point velocity v_rel, the
/// relative spin dw (rolling), the arms r_i, r_j (r_j = 0 for a wall: its
/// moment is not used).
void hertz_mindlin_core(const ContactPair& p, const Vec3& n, double delta, double r_star, double m_star,
                        const Vec3& v_rel, const Vec3& dw, double ri, double rj, double rolling_inertia, double h,
                        const HertzMindlinModels& models, HertzMindlinLaw::State& st, PairOutput& out) {
  const bool clamp = clamps_force(models.damping);
  const double a = std::sqrt(r_star * delta);
  const double sn = 2.0 * p.e_star * a, st_ = 8.0 * p.g_star * a, kn = (4.0 / 3.0) * p.e_star * a;
  const double c = p.damping;
  const double gamma_n = c * std::sqrt(sn * m_star), gamma_t = c * std::sqrt(st_ * m_star);
  const double vn = v_rel.dot(n);
  const Vec3 vt = v_rel - vn * n;
  const double elastic = kn * delta;
  // Clamped (docs/model.md §11.5): the force never pulls. Unclamped, the
  // Coulomb and rolling limits take its size.
  const double fn = clamp ? std::max(0.0, elastic - gamma_n * vn) : elastic - gamma_n * vn;
  const double fn_size = std::abs(fn);
  const Vec3 f_normal = fn * n;
  // Tangential spring, on the tangent plane.
  st.xi += h * vt;
  st.xi -= st.xi.dot(n) * n;
  Vec3 ft = -st_ * st.xi - gamma_t * vt;
  const double xi_norm = st.xi.norm();
  if (st_ * xi_norm > p.mu_s * fn_size) {
    ft = xi_norm > 0.0 ? Vec3((-p.mu_s * fn_size / xi_norm) * st.xi) : Vec3::Zero();
    st.xi = -ft / st_;
  }
  out.force = f_normal + ft;
  out.nc_force = out.force - elastic * n;
  out.moment_i = -ri * n.cross(ft);
  out.moment_j = -rj * n.cross(ft);
  if (models.rolling != RollingModel::none && p.mu_r > 0.0) {
    const Vec3 m_r = rolling_moment(p, n, dw, kn, st_, elastic, fn_size, r_star, rolling_inertia, h, models, st);
    out.moment_i += m_r;
    out.moment_j -= m_r;
  }
}
}  // namespace

void HertzMindlinLaw::evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, State& st,
                               PairOutput& out) const {
  const Vec3 rv = s.position[i] - s.position[j];
  const double ri = s.radius[i], rj = s.radius[j];
  const double dist2 = rv.squaredNorm(), reach = ri + rj;
  out = PairOutput{};
  if (!(dist2 < reach * reach)) {
    st = State{};  // apart: the history is forgotten
    return;
  }
  const double dist = std::sqrt(dist2);
  const Vec3 n = rv / dist;
  const Vec3 v_rel = s.velocity[i] - s.velocity[j] - (ri * s.angular_velocity[i] + rj * s.angular_velocity[j]).cross(n);
  // EPSD's rolling inertia 1.4 (I_i I_j)/(I_i + I_j) with I = m r² (LIGGGHTS
  // rolling_model_epsd.h), only where its dashpot needs it; against a
  // kinematic particle (infinite inertia) 1.4 I of the free one, as at a wall.
  double rolling_inertia = 0.0;
  if (models_.rolling_damping > 0.0) {
    const double ii = s.mass[i] * ri * ri, ij = s.mass[j] * rj * rj;
    const bool fixed_i = s.is_kinematic(i), fixed_j = s.is_kinematic(j);
    rolling_inertia = fixed_j && !fixed_i ? 1.4 * ii : fixed_i && !fixed_j ? 1.4 * ij : 1.4 * ii * ij / (ii + ij);
  }
  hertz_mindlin_core(pair(s.material[i], s.material[j]), n, reach - dist, ri * rj / reach, effective_mass(s, i, j),
                     v_rel, s.angular_velocity[i] - s.angular_velocity[j], ri, rj, rolling_inertia, h_, models_, st,
                     out);
}

void HertzMindlinLaw::evaluate_wall(const ParticleStore& s, std::uint32_t i, const Wall& wall, State& st,
                                    PairOutput& out) const {
  const double ri = s.radius[i];
  const double delta = ri - (s.position[i] - wall.point).dot(wall.normal);
  out = PairOutput{};
  if (!(delta > 0.0)) {
    st = State{};
    return;
  }
  const Vec3 v_rel = s.velocity[i] - (ri * s.angular_velocity[i]).cross(wall.normal);
  hertz_mindlin_core(pair(s.material[i], wall.material_for(s.material[i])), wall.normal, delta, ri, s.mass[i], v_rel,
                     s.angular_velocity[i], ri, 0.0, 1.4 * s.mass[i] * ri * ri, h_, models_, st, out);
}

double HertzMindlinLaw::wall_energy(const ParticleStore& s, std::uint32_t i, const Wall& wall) const {
  const double delta = s.radius[i] - (s.position[i] - wall.point).dot(wall.normal);
  if (!(delta > 0.0)) return 0.0;
  return (8.0 / 15.0) * pair(s.material[i], wall.material_for(s.material[i])).e_star * std::sqrt(s.radius[i]) *
         delta * delta * std::sqrt(delta);
}

double HertzMindlinLaw::energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const State&) const {
  const double reach = s.radius[i] + s.radius[j];
  const double delta = reach - (s.position[i] - s.position[j]).norm();
  if (!(delta > 0.0)) return 0.0;
  const ContactPair& p = pair(s.material[i], s.material[j]);
  const double r_star = s.radius[i] * s.radius[j] / reach;
  return (8.0 / 15.0) * p.e_star * std::sqrt(r_star) * delta * delta * std::sqrt(delta);
}

void HertzMindlinLaw::set_time_step(double h) {
  if (!(std::isfinite(h) && h > 0.0)) throw std::invalid_argument("Hertz-Mindlin contact: the time step must be > 0");
  h_ = h;
}

void HertzMindlinLaw::save(ByteWriter& w) const {
  w.u64(materials_.size());
  for (const ContactMaterial& m : materials_)
    for (const double x : {m.youngs_modulus, m.poisson_ratio, m.restitution, m.sliding_friction, m.rolling_friction})
      w.f64(x);
  w.f64(h_);
  // Bit 0: rolling (EPSD); bit 7: the block of model options follows (a
  // u32 length, then u8 damping law, u8 rolling model, f64 rolling
  // damping). Files before the block end at this byte and mean Tsuji's
  // clamped damping with EPSD rolling (bit 0) or none. Bit 6: the pair
  // table follows the options (contact/pair_table.hpp save_pair_table);
  // clear, as in files before it, for none.
  const bool table = !table_.empty();
  w.u8(static_cast<std::uint8_t>((models_.rolling != RollingModel::none ? 1 : 0) | 0x80 | (table ? 0x40 : 0)));
  w.u32(kOptionBytes);
  w.u8(static_cast<std::uint8_t>(models_.damping));
  w.u8(static_cast<std::uint8_t>(models_.rolling));
  w.f64(models_.rolling_damping);
  if (table) save_pair_table(w, table_);
}

HertzMindlinLaw HertzMindlinLaw::load(ByteReader& r) {
  const std::size_t n = r.count("contact material", 40);
  std::vector<ContactMaterial> mats(n);
  for (ContactMaterial& m : mats) {
    m.youngs_modulus = r.f64("contact material");
    m.poisson_ratio = r.f64("contact material");
    m.restitution = r.f64("contact material");
    m.sliding_friction = r.f64("contact material");
    m.rolling_friction = r.f64("contact material");
  }
  const double h = r.f64("contact time step");
  const std::uint8_t flags = r.u8("rolling flag");
  if ((flags & 0x3e) != 0 || (flags & 0xc0) == 0x40)
    throw StateError("inconsistent: Hertz-Mindlin flags " + std::to_string(flags));
  // The model options (absent in files before them: Tsuji's clamped damping).
  HertzMindlinModels models;
  models.damping = NormalDamping::tsuji_clamped;
  models.rolling = (flags & 1) ? RollingModel::epsd : RollingModel::none;
  if (flags & 0x80) {
    const std::uint32_t length = r.u32("Hertz-Mindlin options");
    if (length != kOptionBytes)
      throw StateError("inconsistent: Hertz-Mindlin options of " + std::to_string(length) + " bytes (" +
                       std::to_string(kOptionBytes) + " expected)");
    const std::uint8_t damping = r.u8("damping law"), rolling = r.u8("rolling model");
    if (damping > static_cast<std::uint8_t>(NormalDamping::tsuji))
      throw StateError("inconsistent: damping law " + std::to_string(damping) + " (0 exact, 1 tsuji-clamped, 2 tsuji)");
    if (rolling > static_cast<std::uint8_t>(RollingModel::cdt))
      throw StateError("inconsistent: rolling model " + std::to_string(rolling) + " (0 none, 1 epsd, 2 epsd2, 3 cdt)");
    models.damping = static_cast<NormalDamping>(damping);
    models.rolling = static_cast<RollingModel>(rolling);
    models.rolling_damping = r.f64("rolling damping");
  }
  PairTable table;
  if (flags & 0x40) table = load_pair_table(r);
  try {
    return HertzMindlinLaw(std::move(mats), h, models, std::move(table));
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("inconsistent: ") + e.what());
  }
}

double rayleigh_time_step(double radius, double mass, double youngs_modulus, double poisson_ratio) {
  if (!(radius > 0.0 && mass > 0.0 && youngs_modulus > 0.0 && poisson_ratio > -1.0 && poisson_ratio <= 0.5))
    throw std::invalid_argument("rayleigh_time_step: radius, mass and E must be > 0 and nu in (-1, 0.5]");
  const double pi = std::numbers::pi;
  const double density = mass / (4.0 / 3.0 * pi * radius * radius * radius);
  const double shear_modulus = youngs_modulus / (2.0 * (1.0 + poisson_ratio));
  return pi * radius * std::sqrt(density / shear_modulus) / (0.1631 * poisson_ratio + 0.8766);
}


namespace {

class PreparedHertzMindlin final : public PreparedContactLaw {
 public:
  explicit PreparedHertzMindlin(const ContactLawInput& in) {
    models_.damping = *parse_normal_damping(in.values.word("damping", "exact"));
    const std::string rolling = in.values.word("rolling", "none");
    models_.rolling = rolling == "epsd" || rolling == "true" ? RollingModel::epsd
                      : rolling == "epsd2"                   ? RollingModel::epsd2
                      : rolling == "cdt"                     ? RollingModel::cdt
                                                             : RollingModel::none;
    if (const std::optional<double> eta = in.values.number("rolling_damping")) {
      if (models_.rolling != RollingModel::epsd)
        throw std::invalid_argument("[contact] rolling_damping: only applies to rolling = \"epsd\" (EPSD2 and CDT "
                                    "have no rolling dashpot)");
      models_.rolling_damping = *eta;
    }
    for (const LawMaterial& m : in.materials) {
      materials_.push_back({m.youngs_modulus, m.poisson_ratio, m.restitution, m.sliding_friction, m.rolling_friction});
      names_.push_back(m.name);
    }
    table_ = in.pairs;
    r_max_ = in.r_max;
  }
  /// The smallest Rayleigh step of every particle of its material (walls too).
  std::optional<StepLimit> time_step_limit(const ParticleStore& s) const override {
    std::optional<StepLimit> out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      const ContactMaterial& m = materials_.at(s.material[i]);
      if (!(m.youngs_modulus > 0.0 && m.poisson_ratio > -1.0 && m.poisson_ratio <= 0.5)) continue;  // refused later
      const double h = rayleigh_time_step(s.radius[i], s.mass[i], m.youngs_modulus, m.poisson_ratio);
      if (!out || h < out->h)
        out = StepLimit{h, "Rayleigh time step of particle " + std::to_string(s.id[i]) + " (contact/hertz_mindlin.hpp: pi r " +
                               "sqrt(rho/G)/(0.1631 nu + 0.8766) with r = " + format_g(s.radius[i]) + ", E = " +
                               format_g(m.youngs_modulus) + ", nu = " + format_g(m.poisson_ratio) +
                               "; [[material]] \"" + names_[s.material[i]] + "\" E, nu, density)"};
    }
    return out;
  }
  /// The rolling spring 2.25 k_n mu_r^2 R*^2 at R* = r_max, of each
  /// material and each pair-table row (index: materials, then rows).
  std::optional<std::pair<std::size_t, std::string>> overflow(const ParticleStore&) const override {
    if (models_.rolling == RollingModel::none) return std::nullopt;
    for (std::size_t k = 0; k < materials_.size(); ++k) {
      const ContactMaterial& m = materials_[k];
      if (rolling_spring_overflows(m.youngs_modulus, m.rolling_friction))
        return std::pair<std::size_t, std::string>{
            k, "[[material]] \"" + names_[k] + "\" mu_r = " + format_g(m.rolling_friction) +
                   ": the rolling spring 2.25 k_n mu_r^2 R*^2 overflows; give a smaller mu_r"};
    }
    for (std::size_t k = 0; k < table_.size(); ++k) {
      const PairCoefficients& row = table_[k];
      const double e = std::max(materials_[row.a].youngs_modulus, materials_[row.b].youngs_modulus);
      if (row.rolling_friction && rolling_spring_overflows(e, *row.rolling_friction))
        return std::pair<std::size_t, std::string>{
            materials_.size() + k, "[[interaction]] (\"" + names_[row.a] + "\", \"" + names_[row.b] +
                                       "\") mu_r = " + format_g(*row.rolling_friction) +
                                       ": the rolling spring 2.25 k_n mu_r^2 R*^2 overflows; give a smaller mu_r"};
    }
    return std::nullopt;
  }
  ContactLawProviders make(const ParticleStore& s, std::vector<Wall> walls, double skin, double h) override {
    const HertzMindlinLaw law(materials_, h, models_, table_);
    ContactLawProviders p;
    p.pairs = std::make_unique<HertzMindlinProvider>(law, skin, "mindlin");
    if (!walls.empty()) p.walls = std::make_unique<FrictionWallProvider>(std::move(walls), law, s.size(), "mwalls");
    return p;
  }

 private:
  /// Whether 2.25 E r_max mu_r^2 r_max^2 (k_r at R* = r_max) overflows.
  bool rolling_spring_overflows(double youngs_modulus, double mu_r) const {
    return !std::isfinite(2.25 * youngs_modulus * r_max_ * mu_r * mu_r * r_max_ * r_max_);
  }

  std::vector<ContactMaterial> materials_;
  std::vector<std::string> names_;
  PairTable table_;
  double r_max_ = 0.0;
  HertzMindlinModels models_;
};

}  // namespace

ContactLawEntry hertz_mindlin_contact_law() {
  ContactLawEntry e;
  e.keyword = "hertz-mindlin";
  e.title = "Hertz contact with Hertz-Mindlin friction, viscoelastic damping that rebounds with e and optional "
            "rolling resistance (LIGGGHTS hertz tangential history)";
  e.section = "§11.2";
  e.needs_materials = true;
  e.materials_note = "(E, nu, ...)";
  e.pair_keys = {"e", "mu_s", "mu_r"};
  LawKey r;
  r.name = "rolling";
  r.kind = LawKeyKind::choice;
  r.choices = {"none", "epsd", "epsd2", "cdt", "true", "false"};
  r.symbol = "M_r";
  r.unit = "-";
  r.meaning = "rolling resistance with the [[material]] mu_r (docs/model.md §11.6): \"epsd\" (Ai et al. 2011, "
              "k_r = 2.25 k_n mu_r^2 R*^2, LIGGGHTS epsd), \"epsd2\" (Wensrich & Katterfeld 2012, k_r = k_t R*^2, "
              "LIGGGHTS epsd2), \"cdt\" (constant directional torque, LIGGGHTS cdt); true = \"epsd\", false = "
              "\"none\"";
  r.default_text = "\"none\"";
  e.keys.push_back(r);
  LawKey rd;
  rd.name = "rolling_damping";
  rd.symbol = "eta_r";
  rd.unit = "-";
  rd.meaning = "EPSD's viscous rolling damping ratio: C_r = 2 eta_r sqrt(I_r k_r), I_r = 1.4 m* r*^2 (LIGGGHTS "
               "coefficientRollingViscousDamping)";
  rd.default_text = "0";
  e.keys.push_back(rd);
  LawKey d;
  d.name = "damping";
  d.kind = LawKeyKind::choice;
  d.choices = {"exact", "tsuji-clamped", "tsuji"};
  d.symbol = "c";
  d.unit = "-";
  d.meaning = "the meaning of the [[material]] e (docs/model.md §11.5): \"exact\" rebounds with e at every "
              "speed; \"tsuji-clamped\" is Tsuji's damping with the force kept >= 0 (LIGGGHTS limitForce on; "
              "the engine's meaning of e before \"exact\"); \"tsuji\" lets the force pull (LIGGGHTS's default)";
  d.default_text = "\"exact\"";
  e.keys.push_back(d);
  e.refusals.push_back({"stiffness", LawTable::contact,
                        "does not apply to law \"hertz-mindlin\" (its stiffness comes from E and nu of the "
                        "[[material]]s)"});
  e.prepare = [](const ContactLawInput& in) -> std::unique_ptr<PreparedContactLaw> {
    return std::make_unique<PreparedHertzMindlin>(in);
  };
  e.sections = {{"mindlin", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return HertzMindlinProvider::load(r, s, "mindlin");
                 }},
                {"mwalls", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return FrictionWallProvider::load(r, s, "mwalls");
                 }}};
  return e;
}

}  // namespace dem
