#include "contact/hertz_mindlin.hpp"

#include <memory>

#include "contact/contact_laws.hpp"
#include "contact/mesh_contact_provider.hpp"
#include "contact/friction_wall_provider.hpp"
#include "contact/hertz_mindlin_kernel.hpp"
#include "core/parallel.hpp"
#include "core/format.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>

namespace dem {

namespace {
/// The bytes of the options block of a checkpoint (save below): damping,
/// rolling and EPSD's damping; with the SDS and twisting options after them.
constexpr std::uint32_t kOptionBytes = 10;
constexpr std::uint32_t kSpinOptionBytes = kOptionBytes + 1 + 5 * 8;

void check(const ContactMaterial& m, std::size_t k) {
  const std::string name = "contact material " + std::to_string(k) + ": ";
  if (!(std::isfinite(m.youngs_modulus) && m.youngs_modulus > 0.0)) throw std::invalid_argument(name + "E must be > 0");
  if (!(m.poisson_ratio > -1.0 && m.poisson_ratio <= 0.5)) throw std::invalid_argument(name + "nu must be in (-1, 0.5]");
  if (!(m.restitution > 0.0 && m.restitution <= 1.0)) throw std::invalid_argument(name + "e must be in (0, 1]");
  if (!(std::isfinite(m.sliding_friction) && m.sliding_friction >= 0.0)) throw std::invalid_argument(name + "mu_s must be >= 0");
  if (!(std::isfinite(m.rolling_friction) && m.rolling_friction >= 0.0)) throw std::invalid_argument(name + "mu_r must be >= 0");
}

void check(const HertzMindlinModels& m) {
  const auto finite_at_least = [](double x, double low, bool strict, const std::string& what) {
    if (!(std::isfinite(x) && (strict ? x > low : x >= low)))
      throw std::invalid_argument("Hertz-Mindlin contact: " + what + " must be finite and " + (strict ? "> 0" : ">= 0"));
  };
  finite_at_least(m.rolling_damping, 0.0, false, "the rolling damping");
  if (m.rolling == RollingModel::sds) {
    finite_at_least(m.rolling_stiffness, 0.0, true, "the SDS rolling stiffness");
    finite_at_least(m.rolling_dashpot, 0.0, false, "the SDS rolling dashpot");
  }
  if (m.twisting == TwistingModel::sds) {
    finite_at_least(m.twisting_stiffness, 0.0, true, "the SDS twisting stiffness");
    finite_at_least(m.twisting_dashpot, 0.0, false, "the SDS twisting dashpot");
    finite_at_least(m.twisting_friction, 0.0, false, "the SDS twisting friction");
  }
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
  check(models_);
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

/// One contact's geometry and kinematics (docs/model.md §11.2): normal n
/// (from j to i), overlap delta, R*, m*, the contact-point velocity v_rel,
/// the relative spin dw = Omega_i - Omega_j, the arms r_i, r_j (r_j = 0
/// for a wall: its moment is not used) and EPSD's rolling inertia I_r.
struct ContactPoint {
  Vec3 n;
  double delta, r_star, m_star;
  Vec3 v_rel, dw;
  double ri, rj, rolling_inertia;
};

/// What the rolling and twisting models read of a contact (docs/model.md
/// §11.6): n, dw, the contact radius a, k_n and S_t, the tangential dashpot
/// gamma_t, the elastic force k_n delta, |F_n|, R*, I_r and the step h.
struct SpinInput {
  Vec3 n, dw;
  double a, kn, s_t, gamma_t, elastic, fn_size, r_star, rolling_inertia, h;
};

/// CDT (docs/model.md §11.6): the torque mu_r R* k_n delta against the
/// relative spin, in the tangent plane; no history.
Vec3 cdt_moment(const ContactPair& p, const SpinInput& c) {
  const double w = c.dw.norm();
  if (!(w > 0.0)) return Vec3::Zero();
  const Vec3 m = (-p.mu_r * c.elastic * c.r_star / w) * c.dw;
  return m - m.dot(c.n) * c.n;
}

/// EPSD and EPSD2 (docs/model.md §11.2, §11.6): the spring k_r on the
/// moment history M_r, capped at mu_r R* |F_n|, EPSD's dashpot below the cap.
Vec3 epsd_moment(const ContactPair& p, const SpinInput& c, const HertzMindlinModels& models, Vec3& m_r) {
  const double kr = models.rolling == RollingModel::epsd ? 2.25 * c.kn * p.mu_r * p.mu_r * c.r_star * c.r_star
                                                         : c.s_t * c.r_star * c.r_star;
  const Vec3 wr = c.dw - c.dw.dot(c.n) * c.n;
  m_r -= kr * c.h * wr;
  m_r -= m_r.dot(c.n) * c.n;
  const double cap = p.mu_r * c.r_star * c.fn_size, m = m_r.norm();
  if (m > cap) {
    m_r *= cap / m;
    return m_r;  // fully mobilised: no dashpot
  }
  if (models.rolling == RollingModel::epsd && models.rolling_damping > 0.0)
    return m_r - (models.rolling_damping * 2.0 * std::sqrt(c.rolling_inertia * kr)) * wr;
  return m_r;
}

/// SDS rolling (LAMMPS pair granular `rolling sds`, docs/model.md §11.6):
/// the rolling displacement u grows with v_roll = R* dw x n; the force
/// F_r = -k_roll u - gamma_roll v_roll is capped at mu_r |F_n| (u then
/// keeps its elastic part); the moment on i is R* n x F_r.
Vec3 sds_rolling_moment(const ContactPair& p, const SpinInput& c, const HertzMindlinModels& models, Vec3& u) {
  const Vec3 v_roll = c.r_star * c.dw.cross(c.n);
  u += c.h * v_roll;
  u -= u.dot(c.n) * c.n;
  Vec3 f = -models.rolling_stiffness * u - models.rolling_dashpot * v_roll;
  const double cap = p.mu_r * c.fn_size, size = f.norm();
  if (size > cap) {
    f *= cap / size;
    u = -(f + models.rolling_dashpot * v_roll) / models.rolling_stiffness;
  }
  return c.r_star * c.n.cross(f);
}

/// The rolling resistance moment on i (docs/model.md §11.6), -(that) on j.
Vec3 rolling_moment(const ContactPair& p, const SpinInput& c, const HertzMindlinModels& models,
                    HertzMindlinLaw::State& st) {
  switch (models.rolling) {
    case RollingModel::cdt: return cdt_moment(p, c);
    case RollingModel::sds: return sds_rolling_moment(p, c, models, st.rolling);
    case RollingModel::epsd:
    case RollingModel::epsd2: return epsd_moment(p, c, models, st.rolling);
    case RollingModel::none: break;
  }
  return Vec3::Zero();
}

/// The constants of a twisting spring-dashpot-slider (docs/model.md §11.6).
struct TwistConstants {
  double k = 0.0;      ///< spring (force length/rad)
  double gamma = 0.0;  ///< dashpot (force length time/rad)
  double mu = 0.0;     ///< the cap mu |F_n| (length)
};

/// Marshall's (2009, eq. 32, 44: k = S_t a²/2, gamma = gamma_t a²/2,
/// mu = (2/3) a mu_s, from the tangential model) or SDS's given constants.
TwistConstants twisting_constants(const ContactPair& p, const SpinInput& c, const HertzMindlinModels& models) {
  if (models.twisting == TwistingModel::marshall)
    return {0.5 * c.s_t * c.a * c.a, 0.5 * c.gamma_t * c.a * c.a, 2.0 / 3.0 * c.a * p.mu_s};
  return {models.twisting_stiffness, models.twisting_dashpot, models.twisting_friction};
}

/// The twisting moment M_t about n on i (-M_t on j): the angle theta grows
/// with the relative spin w_n about n; M_t = -k theta - gamma w_n, capped at
/// mu |F_n| (theta then keeps its elastic part).
double twisting_moment(const TwistConstants& t, double w_n, double fn_size, double h, double& theta) {
  theta += h * w_n;
  double m = -t.k * theta - t.gamma * w_n;
  const double cap = t.mu * fn_size;
  if (std::abs(m) > cap) {
    m = std::copysign(cap, m);
    theta = -(m + t.gamma * w_n) / t.k;
  }
  return m;
}

/// The rolling and twisting moments (docs/model.md §11.6), added to out.
void add_spin_moments(const ContactPair& p, const SpinInput& c, const HertzMindlinModels& models,
                      HertzMindlinLaw::State& st, PairOutput& out) {
  if (models.rolling != RollingModel::none && p.mu_r > 0.0) {
    const Vec3 m_r = rolling_moment(p, c, models, st);
    out.moment_i += m_r;
    out.moment_j -= m_r;
  }
  if (models.twisting != TwistingModel::none) {
    const Vec3 m_t = twisting_moment(twisting_constants(p, c, models), c.dw.dot(c.n), c.fn_size, c.h, st.twist) * c.n;
    out.moment_i += m_t;
    out.moment_j -= m_t;
  }
}

/// One contact of docs/model.md §11.2 once its geometry is known.
void hertz_mindlin_core(const ContactPair& p, const ContactPoint& c, double h, const HertzMindlinModels& models,
                        HertzMindlinLaw::State& st, PairOutput& out) {
  const Vec3& n = c.n;
  const bool clamp = clamps_force(models.damping);
  const double a = std::sqrt(c.r_star * c.delta);
  const double sn = 2.0 * p.e_star * a, st_ = 8.0 * p.g_star * a, kn = (4.0 / 3.0) * p.e_star * a;
  const double damping = p.damping;
  const double gamma_n = damping * std::sqrt(sn * c.m_star), gamma_t = damping * std::sqrt(st_ * c.m_star);
  const double vn = c.v_rel.dot(n);
  const Vec3 vt = c.v_rel - vn * n;
  const double elastic = kn * c.delta;
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
  out.moment_i = -c.ri * n.cross(ft);
  out.moment_j = -c.rj * n.cross(ft);
  const SpinInput spin{n, c.dw, a, kn, st_, gamma_t, elastic, fn_size, c.r_star, c.rolling_inertia, h};
  add_spin_moments(p, spin, models, st, out);
}
}  // namespace

void HertzMindlinLaw::evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, State& st,
                       PairOutput& out) const {
  evaluate_branch(s, i, j, s.position[i] - s.position[j], s.velocity[j], st, out);
}

void HertzMindlinLaw::evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image,
                       State& st, PairOutput& out) const {
  evaluate_branch(s, i, j, s.position[i] - image.position_of(s.position[j]), image.velocity_of(s.velocity[j]), st, out);
}

void HertzMindlinLaw::evaluate_branch(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const Vec3& rv,
                       const Vec3& v_j, State& st, PairOutput& out) const {
  const double ri = s.radius[i], rj = s.radius[j];
  const double dist2 = rv.squaredNorm(), reach = ri + rj;
  out = PairOutput{};
  if (!(dist2 < reach * reach)) {
    st = State{};  // apart: the history is forgotten
    return;
  }
  const double dist = std::sqrt(dist2);
  const Vec3 n = rv / dist;
  const Vec3 v_rel = s.velocity[i] - v_j - (ri * s.angular_velocity[i] + rj * s.angular_velocity[j]).cross(n);
  // EPSD's rolling inertia 1.4 (I_i I_j)/(I_i + I_j) with I = m r² (LIGGGHTS
  // rolling_model_epsd.h), only where its dashpot needs it; against a
  // kinematic particle (infinite inertia) 1.4 I of the free one, as at a wall.
  double rolling_inertia = 0.0;
  if (models_.rolling_damping > 0.0) {
    const double ii = s.mass[i] * ri * ri, ij = s.mass[j] * rj * rj;
    const bool fixed_i = s.is_kinematic(i), fixed_j = s.is_kinematic(j);
    rolling_inertia = fixed_j && !fixed_i ? 1.4 * ii : fixed_i && !fixed_j ? 1.4 * ij : 1.4 * ii * ij / (ii + ij);
  }
  const ContactPoint c{n,     reach - dist, ri * rj / reach, effective_mass(s, i, j),
                       v_rel, s.angular_velocity[i] - s.angular_velocity[j], ri, rj, rolling_inertia};
  hertz_mindlin_core(pair(s.material[i], s.material[j]), c, h_, models_, st, out);
}

bool HertzMindlinLaw::block_evaluate(const NeighbourList& list, const ParticleStore& s, const std::uint8_t* excluded,
                                     State* state, KineticSlots slots) const {
  // Kinematic particles (their m* and I_r, effective_mass) are left to
  // evaluate(), pair by pair.
  if (!hertz_mindlin_kernel_covers(models_) || !s.kinematic.empty()) return false;
  HertzMindlinPairArgs a;
  a.owner = list.owner.data();
  a.partner = list.partner.data();
  a.excluded = excluded;
  a.position = s.position.data();
  a.velocity = s.velocity.data();
  a.angular_velocity = s.angular_velocity.data();
  a.radius = s.radius.data();
  a.mass = s.mass.data();
  a.material = s.material.data();
  a.pairs = pairs_.data();
  a.material_count = count_;
  a.time_step = h_;
  a.models = models_;
  a.state = state;
  a.slots = slots;
  constexpr std::size_t kBlock = 8;  // a multiple of every target's lane count
  const std::size_t m = list.pair_count();
  const auto one = [&](std::size_t k) {
    PairOutput out;
    evaluate(s, list.owner[k], list.partner[k], state[k], out);
    slots.force[k] = out.force;
    slots.nc_force[k] = out.nc_force;
    slots.moment_i[k] = out.moment_i;
    slots.moment_j[k] = out.moment_j;
  };
  parallel_for_ranges((m + kBlock - 1) / kBlock, [&](std::size_t begin, std::size_t end) {
    thread_local std::vector<std::int64_t> touching;  // grows to its size once per thread
    const std::size_t stop = std::min(end * kBlock, m);
    const std::size_t rest = hertz_mindlin_pair_blocks(a, begin * kBlock, stop, touching);
    for (const std::int64_t k : touching) one(static_cast<std::size_t>(k));
    for (std::size_t k = rest; k < stop; ++k)
      if (excluded == nullptr || excluded[k] == 0) one(k);
  }, 64);
  return true;
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
  const Vec3 v_rel = s.velocity[i] - wall.velocity - (ri * s.angular_velocity[i]).cross(wall.normal);
  const ContactPoint c{wall.normal, delta, ri, s.mass[i], v_rel, s.angular_velocity[i], ri, 0.0, 1.4 * s.mass[i] * ri * ri};
  hertz_mindlin_core(pair(s.material[i], wall.material_for(s.material[i])), c, h_, models_, st, out);
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

double HertzMindlinLaw::energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image,
                     const State&) const {
  const double reach = s.radius[i] + s.radius[j];
  const double delta = reach - (s.position[i] - image.position_of(s.position[j])).norm();
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
  // damping; with SDS rolling or a twisting model, the length says 51 and
  // u8 twisting model, f64 rolling stiffness, rolling dashpot, twisting
  // stiffness, twisting dashpot, twisting friction follow). Files before the
  // block end at this byte and mean Tsuji's clamped damping with EPSD
  // rolling (bit 0) or none; files with the short block mean no twisting.
  // Bit 6: the pair table follows the options (contact/pair_table.hpp
  // save_pair_table); clear, as in files before it, for none.
  const bool table = !table_.empty();
  w.u8(static_cast<std::uint8_t>((models_.rolling != RollingModel::none ? 1 : 0) | 0x80 | (table ? 0x40 : 0)));
  const bool spin = models_.rolling == RollingModel::sds || models_.twisting != TwistingModel::none;
  w.u32(spin ? kSpinOptionBytes : kOptionBytes);
  w.u8(static_cast<std::uint8_t>(models_.damping));
  w.u8(static_cast<std::uint8_t>(models_.rolling));
  w.f64(models_.rolling_damping);
  if (spin) {
    w.u8(static_cast<std::uint8_t>(models_.twisting));
    for (const double x : {models_.rolling_stiffness, models_.rolling_dashpot, models_.twisting_stiffness,
                           models_.twisting_dashpot, models_.twisting_friction})
      w.f64(x);
  }
  if (table) save_pair_table(w, table_);
}

namespace {
/// The options block of a checkpoint after its flags byte (HertzMindlinLaw::save).
HertzMindlinModels load_models(ByteReader& r) {
  HertzMindlinModels models;
  const std::uint32_t length = r.u32("Hertz-Mindlin options");
  if (length != kOptionBytes && length != kSpinOptionBytes)
    throw StateError("inconsistent: Hertz-Mindlin options of " + std::to_string(length) + " bytes (" +
                     std::to_string(kOptionBytes) + " or " + std::to_string(kSpinOptionBytes) + " expected)");
  const std::uint8_t damping = r.u8("damping law"), rolling = r.u8("rolling model");
  if (damping > static_cast<std::uint8_t>(NormalDamping::tsuji))
    throw StateError("inconsistent: damping law " + std::to_string(damping) + " (0 exact, 1 tsuji-clamped, 2 tsuji)");
  if (rolling > static_cast<std::uint8_t>(RollingModel::sds))
    throw StateError("inconsistent: rolling model " + std::to_string(rolling) +
                     " (0 none, 1 epsd, 2 epsd2, 3 cdt, 4 sds)");
  models.damping = static_cast<NormalDamping>(damping);
  models.rolling = static_cast<RollingModel>(rolling);
  models.rolling_damping = r.f64("rolling damping");
  if (length == kOptionBytes) {
    if (models.rolling == RollingModel::sds) throw StateError("inconsistent: SDS rolling without its constants");
    return models;
  }
  const std::uint8_t twisting = r.u8("twisting model");
  if (twisting > static_cast<std::uint8_t>(TwistingModel::sds))
    throw StateError("inconsistent: twisting model " + std::to_string(twisting) + " (0 none, 1 marshall, 2 sds)");
  models.twisting = static_cast<TwistingModel>(twisting);
  for (double* x : {&models.rolling_stiffness, &models.rolling_dashpot, &models.twisting_stiffness,
                    &models.twisting_dashpot, &models.twisting_friction})
    *x = r.f64("rolling and twisting constants");
  return models;
}
}  // namespace

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
  if (flags & 0x80) models = load_models(r);
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

/// The value of [contact] `key` where it applies; refused elsewhere, `why` says where it applies.
std::optional<double> model_key(const LawValues& v, const std::string& key, bool applies, const std::string& why) {
  const std::optional<double> x = v.number(key);
  if (x && !applies) throw std::invalid_argument("[contact] " + key + ": only applies to " + why);
  return x;
}

/// The value of a key the model needs (`what`: its symbol and unit).
double required_key(const LawValues& v, const std::string& key, const std::string& model, const std::string& what) {
  const std::optional<double> x = v.number(key);
  if (!x) throw std::invalid_argument("[contact] " + key + " is required with " + model + " (" + what + ")");
  return *x;
}

/// [contact] rolling and its constants (docs/model.md §11.6).
void read_rolling(const LawValues& v, HertzMindlinModels& m) {
  const std::string rolling = v.word("rolling", "none");
  m.rolling = rolling == "epsd" || rolling == "true" ? RollingModel::epsd
              : rolling == "epsd2"                   ? RollingModel::epsd2
              : rolling == "cdt"                     ? RollingModel::cdt
              : rolling == "sds"                     ? RollingModel::sds
                                                     : RollingModel::none;
  const bool sds = m.rolling == RollingModel::sds;
  if (const std::optional<double> eta = model_key(v, "rolling_damping", m.rolling == RollingModel::epsd,
                                                  "rolling = \"epsd\" (EPSD2 and CDT have no rolling dashpot; "
                                                  "SDS's is rolling_dashpot)"))
    m.rolling_damping = *eta;
  model_key(v, "rolling_stiffness", sds, "rolling = \"sds\" (EPSD and EPSD2 take their spring from k_n or S_t)");
  if (const std::optional<double> g = model_key(v, "rolling_dashpot", sds, "rolling = \"sds\" (EPSD's dashpot is "
                                                                          "rolling_damping)"))
    m.rolling_dashpot = *g;
  if (sds) m.rolling_stiffness = required_key(v, "rolling_stiffness", "rolling = \"sds\"", "k_roll, force/length");
}

/// [contact] twisting and its constants (docs/model.md §11.6).
void read_twisting(const LawValues& v, HertzMindlinModels& m) {
  const std::string twisting = v.word("twisting", "none");
  m.twisting = twisting == "marshall" ? TwistingModel::marshall
               : twisting == "sds"    ? TwistingModel::sds
                                      : TwistingModel::none;
  const bool sds = m.twisting == TwistingModel::sds;
  const std::string why = "twisting = \"sds\" (\"marshall\" takes its constants from the tangential spring)";
  model_key(v, "twisting_stiffness", sds, why);
  model_key(v, "twisting_friction", sds, why);
  if (const std::optional<double> g = model_key(v, "twisting_dashpot", sds, why)) m.twisting_dashpot = *g;
  if (!sds) return;
  m.twisting_stiffness = required_key(v, "twisting_stiffness", "twisting = \"sds\"", "k_twist, force length/rad");
  m.twisting_friction = required_key(v, "twisting_friction", "twisting = \"sds\"", "mu_twist, length");
}

/// The SDS springs' and dashpots' own step for particle i (docs/model.md
/// §14.3): sqrt(J/k) and J/gamma with k, gamma the rolling constants times
/// r_i² (a wall contact's arm R* = r_i, the largest) or the twisting ones.
std::optional<StepLimit> sds_step_limit(const ParticleStore& s, std::size_t i, const HertzMindlinModels& m) {
  const double j = s.inertia[i], r2 = s.radius[i] * s.radius[i];
  if (!(j > 0.0)) return std::nullopt;
  std::optional<StepLimit> out;
  const auto take = [&](double k, double gamma, const std::string& what) {
    const double h = std::min(std::sqrt(j / k), gamma > 0.0 ? j / gamma : std::numeric_limits<double>::infinity());
    if (!out || h < out->h)
      out = StepLimit{h, what + " of particle " + std::to_string(s.id[i]) + " (contact/hertz_mindlin.cpp: min(sqrt(J/k), "
                             "J/gamma) with J = " + format_g(j) + ", k = " + format_g(k) + ", gamma = " +
                             format_g(gamma) + ")"};
  };
  if (m.rolling == RollingModel::sds)
    take(m.rolling_stiffness * r2, m.rolling_dashpot * r2, "SDS rolling spring and dashpot ([contact] "
                                                           "rolling_stiffness, rolling_dashpot)");
  if (m.twisting == TwistingModel::sds)
    take(m.twisting_stiffness, m.twisting_dashpot, "SDS twisting spring and dashpot ([contact] twisting_stiffness, "
                                                   "twisting_dashpot)");
  return out;
}

class PreparedHertzMindlin final : public PreparedContactLaw {
 public:
  explicit PreparedHertzMindlin(const ContactLawInput& in) {
    models_.damping = *parse_normal_damping(in.values.word("damping", "exact"));
    read_rolling(in.values, models_);
    read_twisting(in.values, models_);
    for (const LawMaterial& m : in.materials) {
      materials_.push_back({m.youngs_modulus, m.poisson_ratio, m.restitution, m.sliding_friction, m.rolling_friction});
      names_.push_back(m.name);
    }
    table_ = in.pairs;
    r_max_ = in.r_max;
  }
  /// The smallest Rayleigh step of every particle of its material (walls
  /// too), and of the SDS springs and dashpots (docs/model.md §14.3).
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
      if (const std::optional<StepLimit> sds = sds_step_limit(s, i, models_); sds && sds->h < out->h) out = sds;
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
  std::unique_ptr<ForceProvider> make_meshes(const ParticleStore& s, std::vector<MeshWall> meshes, double skin,
                                             double h) override {
    const HertzMindlinLaw law(materials_, h, models_, table_);
    return std::make_unique<MeshContactProvider<HertzMindlinLaw>>(std::move(meshes), law, s.size(), skin, 0.0, "mmeshes");
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
            "rolling and twisting resistance (LIGGGHTS hertz tangential history, LAMMPS pair granular)";
  e.section = "§11.2";
  e.needs_materials = true;
  e.materials_note = "(E, nu, ...)";
  const auto number_key = [&e](const char* name, const char* check, const char* symbol, const char* unit,
                               const char* meaning, const char* default_text) {
    LawKey k;
    k.name = name;
    k.check = check;
    k.symbol = symbol;
    k.unit = unit;
    k.meaning = meaning;
    k.default_text = default_text;
    e.keys.push_back(k);
  };
  const auto choice_key = [&e](const char* name, std::vector<std::string> choices, const char* symbol,
                               const char* meaning, const char* default_text) {
    LawKey k;
    k.name = name;
    k.kind = LawKeyKind::choice;
    k.choices = std::move(choices);
    k.symbol = symbol;
    k.unit = "-";
    k.meaning = meaning;
    k.default_text = default_text;
    e.keys.push_back(k);
  };
  e.pair_keys = {"e", "mu_s", "mu_r"};
  choice_key("rolling", {"none", "epsd", "epsd2", "cdt", "sds", "true", "false"}, "M_r",
             "rolling resistance with the [[material]] mu_r (docs/model.md §11.6): \"epsd\" (Ai et al. 2011, "
             "k_r = 2.25 k_n mu_r^2 R*^2, LIGGGHTS epsd), \"epsd2\" (Wensrich & Katterfeld 2012, k_r = k_t R*^2, "
             "LIGGGHTS epsd2), \"cdt\" (constant directional torque, LIGGGHTS cdt), \"sds\" (spring-dashpot-slider "
             "on the rolling displacement, LAMMPS pair granular rolling sds); true = \"epsd\", false = \"none\"",
             "\"none\"");
  number_key("rolling_damping", "nonnegative", "eta_r", "-",
             "EPSD's viscous rolling damping ratio: C_r = 2 eta_r sqrt(I_r k_r), I_r = 1.4 m* r*^2 (LIGGGHTS "
             "coefficientRollingViscousDamping)",
             "0");
  number_key("rolling_stiffness", "positive", "k_roll", "force/length",
             "SDS's rolling spring on the rolling displacement (LAMMPS rolling sds k_roll): moment k_roll R*^2 per "
             "radian",
             "required with \"sds\"");
  number_key("rolling_dashpot", "nonnegative", "gamma_roll", "force time/length",
             "SDS's rolling dashpot on the rolling velocity R* omega x n (LAMMPS rolling sds gamma_roll)", "0");
  choice_key("twisting", {"none", "marshall", "sds"}, "M_t",
             "twisting resistance about the normal (docs/model.md §11.6): \"marshall\" (Marshall 2009, "
             "k = S_t a^2/2, gamma = gamma_t a^2/2, mu = (2/3) a mu_s, LAMMPS twisting marshall), \"sds\" (the "
             "twisting_* constants, LAMMPS twisting sds)",
             "\"none\"");
  number_key("twisting_stiffness", "positive", "k_twist", "force length/rad",
             "SDS's twisting spring on the twisting angle (LAMMPS twisting sds k_twist)", "required with \"sds\"");
  number_key("twisting_dashpot", "nonnegative", "gamma_twist", "force length time/rad",
             "SDS's twisting dashpot on the relative spin about the normal (LAMMPS twisting sds gamma_twist)", "0");
  number_key("twisting_friction", "nonnegative", "mu_twist", "length",
             "SDS's twisting slider: the twisting moment is at most mu_twist abs(F_n) (LAMMPS twisting sds mu_twist)",
             "required with \"sds\"");
  choice_key("damping", {"exact", "tsuji-clamped", "tsuji"}, "c",
             "the meaning of the [[material]] e (docs/model.md §11.5): \"exact\" rebounds with e at every "
             "speed; \"tsuji-clamped\" is Tsuji's damping with the force kept >= 0 (LIGGGHTS limitForce on; "
             "the engine's meaning of e before \"exact\"); \"tsuji\" lets the force pull (LIGGGHTS's default)",
             "\"exact\"");
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
                 }},
                {"mmeshes", [](ByteReader& r, const ParticleStore& s) -> std::unique_ptr<ForceProvider> {
                   return MeshContactProvider<HertzMindlinLaw>::load(r, s, "mmeshes");
                 }}};
  return e;
}

}  // namespace dem
