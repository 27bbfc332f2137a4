#pragma once
/// \file adhesive_contact.hpp
/// Adhesive elastic contact (docs/model.md §11.7): the JKR model (Johnson,
/// Kendall & Roberts 1971, Proc. R. Soc. Lond. A 324) and the DMT model
/// (Derjaguin, Muller & Toporov 1975, J. Colloid Interface Sci. 53) as LAMMPS
/// `pair_style granular` has them (normal models `jkr` and `dmt`,
/// src/GRANULAR/gran_sub_mod_normal.cpp, with `tangential mindlin NULL x_t
/// mu`), and the same laws against plane walls (LAMMPS `fix wall/gran
/// granular`). Scene keywords `law = "jkr"` and `law = "dmt"`; kinetic laws
/// of ContactProvider (contact/contact_provider.hpp) and WallContactProvider
/// (contact/wall_contact_provider.hpp).
///
/// gamma is the surface energy of the [contact] table (LAMMPS's `cohesion`,
/// energy/area); the work of adhesion (Dupre) of the two surfaces is
/// W = 2 gamma. For delta = r_i + r_j - |x_i - x_j|, n = (x_i - x_j)/|x_i - x_j|,
/// R* = r_i r_j/(r_i + r_j), m* = m_i m_j/(m_i + m_j), E*, G* as §11.2, and
/// c = sqrt(4 pi gamma/E*):
///
///     JKR:  delta = a²/R* - c sqrt(a)                       (a: contact radius, larger root)
///           F_e = E* (4 a³/(3 R*) - 2 c a^{3/2})            = 4E*a³/(3R*) - sqrt(8 pi W E* a³)
///           F_po = 3 pi gamma R* = (3/2) pi W R*             (pull-off force, the minimum of F_e)
///           touches from delta > 0 on; lets go at delta <= -delta_po,
///           delta_po = (3 pi² gamma² R*/(16 E*²))^{1/3}     (the overlap where F_e = -F_po)
///     DMT:  a = sqrt(R* delta),  F_e = (4/3) E* a delta - F_po,  F_po = 4 pi gamma R* = 2 pi W R*,
///           touches while delta > 0
///     eta_n = sqrt(5) zeta sqrt(m* (4/3) E* a),  zeta = -ln e / sqrt(ln² e + pi²)
///     v_rel = v_i - v_j - (r_i Omega_i + r_j Omega_j) x n,  v_n = v_rel.n,  v_t = v_rel - v_n n
///     F_n = F_e - eta_n v_n                                  (not clamped)
///     xi <- xi + h v_t,  xi <- xi - (xi.n) n,   k_t = 8 G* a,  eta_t = x_t eta_n
///     F_t = -k_t xi - eta_t v_t;  past |F_t| > mu |F_e + 2 F_po|:
///         F_t <- (mu |F_e + 2 F_po| / |F_t|) F_t,  xi <- -(F_t + eta_t v_t)/k_t
///     on i: F_n n + F_t, moment -r_i n x F_t;  on j the opposite force, moment -r_j n x F_t
///
/// Departures from LAMMPS: its damping `coeff_restitution` (refused there
/// with cohesive models) is taken with the Hertz stiffness (4/3) E* a in
/// place of F_n/delta; the moments act at r_i, r_j from the centres as in
/// the engine's other laws (LAMMPS: r_i - delta/2); the history is
/// projected on the tangent plane without LAMMPS's rescaling.
///
/// The conservative part is F_e n. Its energy (U_contact, U_wall) is, while
/// the pair touches, U(delta) = integral of F_e from 0 to delta along the
/// touching branch (JKR; zero at the overlap where the contact forms), or
/// (8/15) E* sqrt(R*) delta^{5/2} - F_po delta (DMT), and 0 otherwise. When a
/// JKR contact lets go, U(delta) > 0 leaves E_total at once: evaluate()
/// reports it as PairOutput::released and the stepper books it in W_contact
/// (the adhesion hysteresis). Damping, the tangential force and the moments
/// are booked in W_contact through nc_force (docs/model.md §11.3). m* is the
/// free particle's mass against a kinematic one (effective_mass,
/// core/particle_store.hpp). A wall is a body of infinite radius and mass at
/// rest of its material (Wall::material_for: the particle's own unless the
/// wall names one): R* = r_i, m* = m_i, arm r_j = 0, E*, G*, e and mu of the
/// pair (particle material, wall material). e and mu of two different
/// materials are geometric means unless the pair table gives them
/// (contact/pair_table.hpp).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "contact/contact_provider.hpp"
#include "contact/pair_table.hpp"
#include "contact/wall_contact_provider.hpp"
#include "core/byte_stream.hpp"
#include "core/particle_store.hpp"

namespace dem {

/// The JKR relations of docs/model.md §11.7 for one contact of effective
/// radius R* (length), modulus E* (pressure) and surface energy gamma
/// (energy/area, >= 0; LAMMPS's `cohesion`, half the work of adhesion).
namespace jkr {
/// The contact radius a of the touching branch at overlap delta (the
/// larger root of delta = a²/R* - sqrt(4 pi gamma a/E*)), in closed form;
/// sqrt(R* delta) (Hertz, 0 for delta <= 0) when gamma = 0. Below the
/// branch's end (delta < -(3/4)(pi² W² R*/E*²)^{1/3}) it gives a at that end.
double contact_radius(double delta, double r_star, double e_star, double gamma);
/// F_e(a) = 4 E* a³/(3 R*) - 2 E* c a^{3/2}, c = sqrt(4 pi gamma/E*) (> 0: repulsive).
double normal_force(double a, double r_star, double e_star, double gamma);
/// U(delta): the integral of F_e along the touching branch from delta = 0.
double energy(double delta, double r_star, double e_star, double gamma);
/// delta_po = (3 pi² gamma² R*/(16 E*²))^{1/3} >= 0: the contact lets go at
/// delta <= -delta_po (LAMMPS's `pulloff_distance`), where F_e = -F_po.
double pulloff_distance(double r_star, double e_star, double gamma);
/// F_po = 3 pi gamma R* (the magnitude of the pull-off force).
double pulloff_force(double r_star, double gamma);
}  // namespace jkr

/// The normal model of AdhesiveContactLaw (checkpoint code: the value).
enum class Adhesion : std::uint8_t { jkr = 0, dmt = 1 };

/// Per-material coefficients of the adhesive laws.
struct AdhesiveMaterial {
  double youngs_modulus = 0.0;  ///< E (Pa), > 0
  double poisson_ratio = 0.3;   ///< nu in (-1, 0.5]
  double restitution = 0.5;     ///< e in (0, 1]
  double friction = 0.5;        ///< mu_s >= 0
};

class AdhesiveContactLaw {
 public:
  static constexpr bool kKinetic = true;
  static constexpr bool kReleases = true;
  static constexpr const char* energy_column = "U_contact";
  struct State {
    Vec3 xi = Vec3::Zero();     ///< tangential spring (length)
    std::uint8_t touching = 0;  ///< 1 while the contact holds (JKR: down to -delta_po)
  };
  static constexpr std::size_t kStateBytes = 25;

  /// surface_energy gamma (energy/area) and tangential_damping x_t
  /// (eta_t/eta_n) finite and >= 0; materials indexed by
  /// ParticleStore::material; time_step: the history's step; pairs: e and
  /// mu_s of pairs of materials in place of the geometric means (rows with
  /// mu_r are refused: no rolling resistance). Throws
  /// std::invalid_argument naming the law and what is out of range.
  AdhesiveContactLaw(Adhesion model, double surface_energy, double tangential_damping,
                     std::vector<AdhesiveMaterial> materials, double time_step, PairTable pairs = {});
  AdhesiveContactLaw() = default;

  void evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, State& st, PairOutput& out) const;
  /// The same with j read at its image across a periodic face
  /// (ContactProvider, core/periodic_cell.hpp).
  void evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image, State& st,
                PairOutput& out) const;
  /// U(delta) of a touching pair, 0 otherwise.
  double energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const State& st) const;
  double energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image,
                const State& st) const;
  /// Particle i against the plane (point, unit normal towards the
  /// particles, material: Wall::material_for).
  void evaluate_wall(const ParticleStore& s, std::uint32_t i, const Wall& wall, State& st, PairOutput& out) const;
  /// U(delta) of a touching wall contact, 0 otherwise.
  double wall_energy(const ParticleStore& s, std::uint32_t i, const Wall& wall, const State& st) const;

  void set_time_step(double h);
  void save(ByteWriter& w) const;
  /// Throws StateError for values the constructor refuses.
  static AdhesiveContactLaw load(ByteReader& r);
  static void save_state(ByteWriter& w, const State& st) {
    w.vec3(st.xi);
    w.u8(st.touching);
  }
  static State load_state(ByteReader& r) {
    State st;
    st.xi = r.vec3("tangential history");
    st.touching = r.u8("contact flag");
    if (st.touching > 1) throw StateError("inconsistent: a contact flag is neither 0 nor 1");
    return st;
  }

  Adhesion model() const { return model_; }
  double surface_energy() const { return gamma_; }
  double tangential_damping() const { return x_t_; }
  double time_step() const { return h_; }
  const std::vector<AdhesiveMaterial>& materials() const { return materials_; }
  std::size_t material_count() const { return count_; }
  /// The pairs whose coefficients replace the geometric means.
  const PairTable& pair_table() const { return table_; }
  /// E* of two materials (docs/model.md §11.2).
  double e_star(std::uint32_t a, std::uint32_t b) const { return pair(a, b).e_star; }
  /// The largest distance beyond touching (r_i + r_j) at which a pair of
  /// these materials with R* <= r_star_max can still hold (JKR's
  /// delta_po; 0 for DMT).
  double reach_beyond_touch(double r_star_max) const;

 private:
  /// evaluate() of the branch rv = x_i - x_j and the partner's velocity v_j.
  void evaluate_branch(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const Vec3& rv, const Vec3& v_j,
                       State& st, PairOutput& out) const;
  struct PairConstants {
    double e_star = 0.0, g_star = 0.0;
    double damping = 0.0;  ///< sqrt(5) zeta
    double mu = 0.0;
  };
  const PairConstants& pair(std::uint32_t a, std::uint32_t b) const { return pairs_[a * count_ + b]; }
  /// U(delta) of a touching contact (docs/model.md §11.7).
  double touching_energy(const PairConstants& p, double delta, double r_star) const;
  /// Whether a touching contact still holds at overlap delta.
  bool holds(const PairConstants& p, double delta, double r_star) const;
  void contact(const PairConstants& p, const Vec3& n, double delta, double r_star, double m_star, const Vec3& v_rel,
               double r_i, double r_j, State& st, PairOutput& out) const;

  Adhesion model_ = Adhesion::jkr;
  double gamma_ = 0.0, x_t_ = 1.0, h_ = 0.0;
  std::vector<AdhesiveMaterial> materials_;
  std::vector<PairConstants> pairs_;  ///< count_ x count_
  PairTable table_;
  std::uint32_t count_ = 0;
};

using AdhesiveContactProvider = ContactProvider<AdhesiveContactLaw>;
using AdhesiveWallProvider = WallContactProvider<AdhesiveContactLaw>;

}  // namespace dem
