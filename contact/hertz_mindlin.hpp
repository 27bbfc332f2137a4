#pragma once
/// \file hertz_mindlin.hpp
/// Hertz contact with Hertz-Mindlin friction, a Coulomb limit, viscoelastic
/// damping by restitution, optional rolling resistance (EPSD, EPSD2, CDT,
/// SDS) and optional twisting resistance (Marshall, SDS) (docs/model.md
/// §11.2, §11.6; LIGGGHTS `hertz tangential history`, LAMMPS `pair granular
/// hertz/material ... mindlin ... damping coeff_restitution rolling ...
/// twisting ...`), as a kinetic law of ContactProvider
/// (contact/contact_provider.hpp). Per contact pair it keeps the tangential
/// spring xi, the rolling history (M_r, or SDS's rolling displacement) and,
/// with a twisting model, the twisting angle; all start at 0 when the pair
/// first touches and are forgotten when it separates.
///
/// For delta = r_i + r_j - |x_i - x_j| > 0, n = (x_i - x_j)/|x_i - x_j|:
///
///     a = sqrt(R* delta), S_n = 2 E* a, S_t = 8 G* a, k_n = (4/3) E* a
///     gamma_n = c sqrt(S_n m*), gamma_t = c sqrt(S_t m*), c from e by the
///               damping law (contact/restitution.hpp, docs/model.md §11.5)
///     v_rel = v_i - v_j - (r_i Omega_i + r_j Omega_j) x n
///     F_n = max(0, k_n delta - gamma_n v_rel.n) n   (the max only where the
///           damping law clamps: "exact" and "tsuji-clamped", not "tsuji")
///     xi <- xi + h v_t, projected on the tangent plane
///     F_t = -S_t xi - gamma_t v_t; past mu_s |F_n|: F_t = -mu_s |F_n| xi/|xi|, xi = -F_t/S_t
///     moments -r_i n x F_t on i and -r_j n x F_t on j (+M_r, -M_r: rolling;
///     +M_t n, -M_t n: twisting, docs/model.md §11.6)
///
/// with m* = m_i m_j/(m_i + m_j), or the free particle's mass against a
/// kinematic one (effective_mass, core/particle_store.hpp), and E*, G*, e,
/// mu_s, mu_r of the pair of materials (ContactPair).
///
/// The conservative part is the Hertz force k_n delta n, whose energy
/// (8/15) E* sqrt(R*) delta^(5/2) is U_contact; everything else, the
/// springs of the tangential, rolling and twisting histories included, is
/// booked in W_contact (docs/model.md §11.3). The velocities are those the
/// stepper holds at the evaluation (v_{k+1/2}, Omega_{k+1/2}, after the
/// first half kick).

#include <cstdint>
#include <vector>

#include "contact/contact_potential.hpp"
#include "contact/contact_provider.hpp"
#include "contact/pair_table.hpp"
#include "contact/restitution.hpp"
#include "core/byte_stream.hpp"
#include "core/particle_store.hpp"

namespace dem {

/// The contact properties of one material (SI units).
struct ContactMaterial {
  double youngs_modulus = 0.0;    ///< E (Pa), > 0
  double poisson_ratio = 0.3;     ///< nu in (-1, 0.5]
  double restitution = 0.5;       ///< e in (0, 1]
  double sliding_friction = 0.5;  ///< mu_s >= 0
  double rolling_friction = 0.0;  ///< mu_r >= 0
};

/// The constants of one pair of materials (docs/model.md §11.2): E*, G* from the
/// formulas there; e, mu_s, mu_r of two different materials as the geometric
/// mean sqrt(a b) (LAMMPS pair granular's mixing of such coefficients) unless
/// the law's pair table gives them (contact/pair_table.hpp); the damping
/// coefficient c of that e by the damping law (§11.5).
struct ContactPair {
  double e_star = 0.0, g_star = 0.0;
  double damping = 0.0;  ///< c >= 0 (dimensionless)
  double mu_s = 0.0, mu_r = 0.0;
};
ContactPair contact_pair(const ContactMaterial& a, const ContactMaterial& b,
                         NormalDamping damping = NormalDamping::exact);

/// The rolling resistance models (docs/model.md §11.6), as LIGGGHTS (epsd,
/// epsd2, cdt) and LAMMPS (sds) name them.
enum class RollingModel : std::uint8_t {
  none = 0,
  epsd = 1,   ///< Ai, Chen, Rotter & Ooi 2011 model C: k_r = 2.25 k_n mu_r² R*², viscous damping
  epsd2 = 2,  ///< Wensrich & Katterfeld 2012: k_r = S_t R*², no damping
  cdt = 3,    ///< constant directional torque mu_r R* k_n delta along the relative spin
  sds = 4,    ///< LAMMPS pair granular `rolling sds`: spring k_roll, dashpot gamma_roll, slider mu_r |F_n|
};

/// The twisting resistance models (docs/model.md §11.6), as LAMMPS pair
/// granular names them: a spring-dashpot-slider on the twisting angle.
enum class TwistingModel : std::uint8_t {
  none = 0,
  marshall = 1,  ///< Marshall 2009: k = S_t a²/2, gamma = gamma_t a²/2, mu = (2/3) a mu_s
  sds = 2,       ///< the given k_twist, gamma_twist, mu_twist
};

/// The model choices of a Hertz-Mindlin contact (docs/model.md §11.5, §11.6).
struct HertzMindlinModels {
  NormalDamping damping = NormalDamping::exact;  ///< the meaning of e (§11.5)
  RollingModel rolling = RollingModel::none;     ///< with the [[material]] mu_r (§11.6)
  double rolling_damping = 0.0;                  ///< eta_r >= 0 of EPSD (0: none)
  double rolling_stiffness = 0.0;                ///< k_roll > 0 of SDS rolling (force/length)
  double rolling_dashpot = 0.0;                  ///< gamma_roll >= 0 of SDS rolling (force time/length)
  TwistingModel twisting = TwistingModel::none;  ///< §11.6
  double twisting_stiffness = 0.0;               ///< k_twist > 0 of SDS twisting (force length/rad)
  double twisting_dashpot = 0.0;                 ///< gamma_twist >= 0 of SDS twisting (force length time/rad)
  double twisting_friction = 0.0;                ///< mu_twist >= 0 of SDS twisting (length): cap mu_twist |F_n|
};

struct HertzMindlinLaw {
  static constexpr bool kKinetic = true;
  /// No wall contact without overlap (contact/wall_contact_provider.hpp).
  static constexpr bool kWallContactOnOverlap = true;
  static constexpr const char* energy_column = "U_contact";
  struct State {
    Vec3 xi = Vec3::Zero();       ///< tangential spring (length)
    Vec3 rolling = Vec3::Zero();  ///< EPSD, EPSD2: M_r (force length); SDS: rolling displacement (length)
    double twist = 0.0;           ///< twisting angle (rad), with a twisting model
  };

  /// materials: indexed by ParticleStore::material; h: the time step of
  /// the history updates (time); models: damping, rolling and twisting
  /// resistance (docs/model.md §11.5, §11.6); pairs: e, mu_s, mu_r of pairs
  /// of materials in place of the mixing rule (contact/pair_table.hpp).
  /// Throws std::invalid_argument for a material or pair value out of range,
  /// h <= 0, a rolling damping < 0 or an SDS constant out of the ranges of
  /// HertzMindlinModels.
  HertzMindlinLaw(std::vector<ContactMaterial> materials, double time_step, HertzMindlinModels models = {},
                  PairTable pairs = {});
  HertzMindlinLaw() = default;

  void evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, State& st, PairOutput& out) const;
  /// The same with j read at its image across a periodic face
  /// (ContactProvider, core/periodic_cell.hpp).
  void evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image, State& st,
                PairOutput& out) const;
  /// Every pair of the list at once (ContactProvider's BlockKineticLaw):
  /// the vectorised kernel of contact/hertz_mindlin_kernel.hpp over whole
  /// lane blocks, evaluate() for the rest, so the same bits as evaluate()
  /// pair by pair. Excluded pairs (non-zero `excluded`, may be nullptr) are
  /// left as they are. Returns false, doing nothing, for models the kernel
  /// does not cover.
  bool block_evaluate(const NeighbourList& list, const ParticleStore& s, const std::uint8_t* excluded,
                      State* state, KineticSlots slots) const;
  /// The Hertz energy (8/15) E* sqrt(R*) delta^(5/2) (0 when apart).
  double energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const State& st) const;
  double energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image,
                const State& st) const;
  /// Particle i against a plane wall (point x_w, unit normal n towards the
  /// particles), a particle of infinite radius and mass at rest, of the
  /// wall's material or else the particle's own (Wall::material_for,
  /// docs/model.md §11.2): R* = r_i, m* = m_i, delta = r_i - (x_i - x_w).n,
  /// the pair constants of (particle material, wall material).
  /// out.moment_j is unused.
  void evaluate_wall(const ParticleStore& s, std::uint32_t i, const Wall& wall, State& st, PairOutput& out) const;
  /// The Hertz energy (8/15) E* sqrt(r_i) delta^(5/2) of that contact.
  double wall_energy(const ParticleStore& s, std::uint32_t i, const Wall& wall) const;

  void save(ByteWriter& w) const;
  static HertzMindlinLaw load(ByteReader& r);
  /// The bytes save_state writes: 48 (xi, the rolling history), and 8 more
  /// (the twisting angle) with a twisting model, so that checkpoints without
  /// one keep their former layout.
  std::size_t saved_state_bytes() const { return models_.twisting == TwistingModel::none ? 48 : 56; }
  void save_state(ByteWriter& w, const State& st) const {
    w.vec3(st.xi);
    w.vec3(st.rolling);
    if (models_.twisting != TwistingModel::none) w.f64(st.twist);
  }
  State load_state(ByteReader& r) const {
    State st;
    st.xi = r.vec3("tangential history");
    st.rolling = r.vec3("rolling history");
    if (models_.twisting != TwistingModel::none) st.twist = r.f64("twisting history");
    return st;
  }

  const ContactPair& pair(std::uint32_t a, std::uint32_t b) const { return pairs_[a * count_ + b]; }
  const std::vector<ContactMaterial>& materials() const { return materials_; }
  std::size_t material_count() const { return count_; }
  /// The pairs whose coefficients replace the mixing rule.
  const PairTable& pair_table() const { return table_; }
  double time_step() const { return h_; }
  /// The step of the history updates from now on (time); throws
  /// std::invalid_argument unless finite and > 0. Every Simulation gives its
  /// own (ForceProvider::set_time_step), so a restart with another step
  /// integrates the tangential spring with it.
  void set_time_step(double h);
  const HertzMindlinModels& models() const { return models_; }

 private:
  /// evaluate() of the branch rv = x_i - x_j and the partner's velocity v_j.
  void evaluate_branch(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const Vec3& rv, const Vec3& v_j,
                       State& st, PairOutput& out) const;
  std::vector<ContactMaterial> materials_;
  std::vector<ContactPair> pairs_;  ///< count_ x count_
  PairTable table_;
  std::uint32_t count_ = 0;
  double h_ = 0.0;
  HertzMindlinModels models_;
};

using HertzMindlinProvider = ContactProvider<HertzMindlinLaw>;

/// The Rayleigh time step of a Hertz-Mindlin sphere (docs/model.md §11.2):
///
///   h_R = pi r sqrt(rho/G) / (0.1631 nu + 0.8766),  G = E / (2 (1 + nu)),
///
/// rho = m / (4/3 pi r^3), the time a Rayleigh surface wave takes to cross
/// the sphere (Li, Xu & Thornton 2005, Powder Technol. 160; the time step
/// LIGGGHTS checks Hertz-Mindlin runs against, warning past 20% of it).
/// Energy moves between contacts no faster than that wave, so a step over
/// h_R is refused as a step over the stability limit. Radius and mass > 0,
/// E > 0, nu in (-1, 0.5] (else std::invalid_argument).
double rayleigh_time_step(double radius, double mass, double youngs_modulus, double poisson_ratio);


}  // namespace dem
