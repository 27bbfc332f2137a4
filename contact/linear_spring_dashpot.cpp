#include "contact/linear_spring_dashpot.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <stdexcept>
#include <string>

#include "contact/contact_laws.hpp"
#include "contact/mesh_contact_provider.hpp"
#include "core/format.hpp"

namespace dem {

double LinearSpringDashpotLaw::damping_ratio(double e) {
  const double ln_e = std::log(e);
  return -ln_e / std::sqrt(ln_e * ln_e + std::numbers::pi * std::numbers::pi);
}

LinearSpringDashpotLaw::LinearSpringDashpotLaw(double k_n, double k_t, double tangential_damping,
                                               std::vector<LinearMaterial> materials, double time_step,
                                               PairTable pairs)
    : k_n_(k_n), k_t_(k_t), d_t_(tangential_damping), materials_(std::move(materials)), table_(std::move(pairs)) {
  const std::string what = "linear contact: ";
  if (!(std::isfinite(k_n_) && k_n_ > 0.0)) throw std::invalid_argument(what + "k_n must be finite and > 0");
  if (!(std::isfinite(k_t_) && k_t_ > 0.0)) throw std::invalid_argument(what + "k_t must be finite and > 0");
  if (!(std::isfinite(d_t_) && d_t_ >= 0.0))
    throw std::invalid_argument(what + "the tangential damping ratio must be finite and >= 0");
  if (materials_.empty()) throw std::invalid_argument(what + "no materials");
  for (std::size_t k = 0; k < materials_.size(); ++k) {
    const LinearMaterial& m = materials_[k];
    if (!(m.restitution > 0.0 && m.restitution <= 1.0))
      throw std::invalid_argument(what + "material " + std::to_string(k) + ": e must be in (0, 1]");
    if (!(std::isfinite(m.friction) && m.friction >= 0.0))
      throw std::invalid_argument(what + "material " + std::to_string(k) + ": mu_s must be finite and >= 0");
  }
  check_pair_table(table_, materials_.size(), what);
  for (const PairCoefficients& row : table_)
    if (row.rolling_friction) throw std::invalid_argument(what + "a pair's mu_r: the law has no rolling resistance");
  set_time_step(time_step);
  count_ = static_cast<std::uint32_t>(materials_.size());
  pairs_.resize(static_cast<std::size_t>(count_) * count_);
  for (std::uint32_t a = 0; a < count_; ++a)
    for (std::uint32_t b = 0; b < count_; ++b) {
      const LinearMaterial& x = materials_[a];
      const LinearMaterial& y = materials_[b];
      PairConstants& p = pairs_[a * count_ + b];
      p.zeta = damping_ratio(a == b ? x.restitution : std::sqrt(x.restitution * y.restitution));
      p.mu = a == b ? x.friction : std::sqrt(x.friction * y.friction);
    }
  // The pair table's values in place of the geometric means.
  for (const PairCoefficients& row : table_)
    for_both_orders(row, [&](std::uint32_t a, std::uint32_t b) {
      PairConstants& p = pairs_[a * count_ + b];
      if (row.restitution) p.zeta = damping_ratio(*row.restitution);
      if (row.sliding_friction) p.mu = *row.sliding_friction;
    });
}

void LinearSpringDashpotLaw::set_time_step(double h) {
  if (!(std::isfinite(h) && h > 0.0)) throw std::invalid_argument("linear contact: the time step must be > 0");
  h_ = h;
}

/// One contact once its geometry is known (docs/model.md §11.4).
void LinearSpringDashpotLaw::contact(const PairConstants& p, const Vec3& n, double delta, double m_star,
                                     const Vec3& v_rel, double r_i, double r_j, State& st, PairOutput& out) const {
  const double c_n = 2.0 * p.zeta * std::sqrt(k_n_ * m_star), c_t = d_t_ * c_n;
  const double v_n = v_rel.dot(n);
  const Vec3 v_t = v_rel - v_n * n;
  const double elastic = k_n_ * delta;
  const double f_n = elastic - c_n * v_n;
  st.xi += h_ * v_t;
  st.xi -= st.xi.dot(n) * n;
  Vec3 f_t = -k_t_ * st.xi - c_t * v_t;
  const double ft = f_t.norm(), cap = p.mu * std::abs(f_n);
  if (ft > cap) {
    if (st.xi.squaredNorm() > 0.0) {
      const double scale = cap / ft;
      const Vec3 damping_part = (c_t / k_t_) * v_t;
      st.xi = scale * (st.xi + damping_part) - damping_part;
      f_t *= scale;
    } else {
      f_t = Vec3::Zero();
    }
  }
  out.force = f_n * n + f_t;
  out.nc_force = out.force - elastic * n;
  out.moment_i = -r_i * n.cross(f_t);
  out.moment_j = -r_j * n.cross(f_t);
}

void LinearSpringDashpotLaw::evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, State& st,
                       PairOutput& out) const {
  evaluate_branch(s, i, j, s.position[i] - s.position[j], s.velocity[j], st, out);
}

void LinearSpringDashpotLaw::evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image,
                       State& st, PairOutput& out) const {
  evaluate_branch(s, i, j, s.position[i] - image.position_of(s.position[j]), image.velocity_of(s.velocity[j]), st, out);
}

void LinearSpringDashpotLaw::evaluate_branch(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const Vec3& rv,
                       const Vec3& v_j, State& st, PairOutput& out) const {
  const double ri = s.radius[i], rj = s.radius[j], reach = ri + rj, dist2 = rv.squaredNorm();
  out = PairOutput{};
  if (!(dist2 < reach * reach)) {
    st = State{};  // apart: the history is forgotten
    return;
  }
  const double dist = std::sqrt(dist2);
  const Vec3 n = rv / dist;
  const Vec3 v_rel = s.velocity[i] - v_j - (ri * s.angular_velocity[i] + rj * s.angular_velocity[j]).cross(n);
  contact(pair(s.material[i], s.material[j]), n, reach - dist, effective_mass(s, i, j), v_rel, ri, rj, st, out);
}

double LinearSpringDashpotLaw::energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const State&) const {
  const double delta = s.radius[i] + s.radius[j] - (s.position[i] - s.position[j]).norm();
  return delta > 0.0 ? 0.5 * k_n_ * delta * delta : 0.0;
}

double LinearSpringDashpotLaw::energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image,
                     const State&) const {
  const double delta = s.radius[i] + s.radius[j] - (s.position[i] - image.position_of(s.position[j])).norm();
  return delta > 0.0 ? 0.5 * k_n_ * delta * delta : 0.0;
}

void LinearSpringDashpotLaw::evaluate_wall(const ParticleStore& s, std::uint32_t i, const Wall& wall, State& st,
                                           PairOutput& out) const {
  const double ri = s.radius[i];
  const double delta = ri - (s.position[i] - wall.point).dot(wall.normal);
  out = PairOutput{};
  if (!(delta > 0.0)) {
    st = State{};
    return;
  }
  const Vec3 v_rel = s.velocity[i] - wall.velocity - (ri * s.angular_velocity[i]).cross(wall.normal);
  contact(pair(s.material[i], wall.material_for(s.material[i])), wall.normal, delta, s.mass[i], v_rel, ri, 0.0, st,
          out);
}

double LinearSpringDashpotLaw::wall_energy(const ParticleStore& s, std::uint32_t i, const Wall& wall) const {
  const double delta = s.radius[i] - (s.position[i] - wall.point).dot(wall.normal);
  return delta > 0.0 ? 0.5 * k_n_ * delta * delta : 0.0;
}

namespace {
/// Bit 63 of the materials' count in a checkpoint: the pair table follows
/// the materials (files before pair tables never set it).
constexpr std::uint64_t kPairTableBit = std::uint64_t{1} << 63;
}  // namespace

void LinearSpringDashpotLaw::save(ByteWriter& w) const {
  w.f64(k_n_);
  w.f64(k_t_);
  w.f64(d_t_);
  w.f64(h_);
  w.u64(materials_.size() | (table_.empty() ? 0 : kPairTableBit));
  for (const LinearMaterial& m : materials_) {
    w.f64(m.restitution);
    w.f64(m.friction);
  }
  if (!table_.empty()) save_pair_table(w, table_);
}

LinearSpringDashpotLaw LinearSpringDashpotLaw::load(ByteReader& r) {
  const double k_n = r.f64("linear contact k_n"), k_t = r.f64("linear contact k_t");
  const double d_t = r.f64("linear contact damping"), h = r.f64("linear contact time step");
  const std::uint64_t count = r.u64("linear contact material count");
  const std::uint64_t n = count & ~kPairTableBit;
  if (n > r.remaining() / 16)
    throw StateError("corrupted: linear contact material count " + std::to_string(n) + " (" +
                     std::to_string(r.remaining()) + " bytes left)");
  std::vector<LinearMaterial> mats(n);
  for (LinearMaterial& m : mats) {
    m.restitution = r.f64("linear contact material");
    m.friction = r.f64("linear contact material");
  }
  PairTable table;
  if (count & kPairTableBit) table = load_pair_table(r);
  try {
    return LinearSpringDashpotLaw(k_n, k_t, d_t, std::move(mats), h, std::move(table));
  } catch (const std::invalid_argument& e) {
    throw StateError(std::string("inconsistent: ") + e.what());
  }
}


namespace {

class PreparedLinear final : public PreparedContactLaw {
 public:
  explicit PreparedLinear(const ContactLawInput& in) {
    k_n_ = *in.values.number("stiffness");  // required
    const std::optional<double> k_t = in.values.number("tangential_stiffness");
    k_t_ = k_t ? *k_t : 2.0 / 7.0 * k_n_;
    const std::optional<double> d_t = in.values.number("tangential_damping");
    d_t_ = d_t ? *d_t : 0.5;
    for (const LawMaterial& m : in.materials) materials_.push_back({m.restitution, m.sliding_friction});
    table_ = in.pairs;
    // Refuses what the law would refuse, before anything is built.
    (void)LinearSpringDashpotLaw(k_n_, k_t_, d_t_, materials_, 1.0, table_);
  }
  double pair_stiffness() const override { return k_n_; }
  /// sqrt(m_min/(k_n + 3.5 k_t)) (docs/model.md §11.4).
  std::optional<StepLimit> time_step_limit(const ParticleStore& s) const override {
    if (s.size() == 0) return std::nullopt;
    double m_min = s.mass[0];
    for (const double m : s.mass) m_min = std::min(m_min, m);
    const double k = k_n_ + 3.5 * k_t_;
    return StepLimit{std::sqrt(m_min / k), "linear contact k_n + 3.5 k_t = " + format_g(k) + " for the smallest mass " +
                                               format_g(m_min) + " ([contact] stiffness, tangential_stiffness)"};
  }
  ContactLawProviders make(const ParticleStore& s, std::vector<Wall> walls, double skin, double h) override {
    const LinearSpringDashpotLaw law(k_n_, k_t_, d_t_, materials_, h, table_);
    ContactLawProviders p;
    p.pairs = std::make_unique<LinearContactProvider>(law, skin, "linear");
    if (!walls.empty()) p.walls = std::make_unique<LinearWallProvider>(std::move(walls), law, s.size(), "lwalls");
    return p;
  }
  std::unique_ptr<ForceProvider> make_meshes(const ParticleStore& s, std::vector<MeshWall> meshes, double skin,
                                             double h) override {
    const LinearSpringDashpotLaw law(k_n_, k_t_, d_t_, materials_, h, table_);
    return std::make_unique<MeshContactProvider<LinearSpringDashpotLaw>>(std::move(meshes), law, s.size(), skin, 0.0,
                                                                         "lmeshes");
  }

 private:
  double k_n_ = 0.0, k_t_ = 0.0, d_t_ = 0.5;
  std::vector<LinearMaterial> materials_;
  PairTable table_;
};

}  // namespace

ContactLawEntry linear_contact_law() {
  ContactLawEntry e;
  e.keyword = "linear";
  e.title = "Linear spring-dashpot with Coulomb friction and tangential history (LAMMPS gran/hooke/history), "
            "normal damping from e";
  e.section = "§11.4";
  e.needs_materials = true;
  e.materials_note = "(density, e, mu_s)";
  e.pair_keys = {"e", "mu_s"};
  LawKey kn;
  kn.name = "stiffness";
  kn.check = "positive";
  kn.symbol = "k_n";
  kn.unit = "force/length";
  kn.meaning = "normal stiffness";
  kn.required = "k_n (force/length)";
  e.keys.push_back(kn);
  LawKey kt = kn;
  kt.name = "tangential_stiffness";
  kt.symbol = "k_t";
  kt.meaning = "tangential stiffness";
  kt.required.clear();
  kt.default_text = "2/7 k_n";
  e.keys.push_back(kt);
  LawKey dt;
  dt.name = "tangential_damping";
  dt.symbol = "c_t/c_n";
  dt.unit = "-";
  dt.meaning = "tangential damping as a fraction of the normal damping";
  dt.default_text = "0.5";
  e.keys.push_back(dt);
  e.prepare = [](const ContactLawInput& in) -> std::unique_ptr<PreparedContactLaw> {
    return std::make_unique<PreparedLinear>(in);
  };
  e.sections = {{"linear", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return LinearContactProvider::load(r, s, "linear");
                 }},
                {"lwalls", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return LinearWallProvider::load(r, s, "lwalls");
                 }}};
  return e;
}

}  // namespace dem
