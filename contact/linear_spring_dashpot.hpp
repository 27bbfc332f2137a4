#pragma once
/// \file linear_spring_dashpot.hpp
/// The linear spring-dashpot contact with Coulomb friction and tangential
/// history (docs/model.md §11.4): the model of LAMMPS `pair gran/hooke/history`
/// (Brilliantov et al. 1996, Silbert et al. 2001; LAMMPS
/// src/GRANULAR/pair_gran_hooke_history.cpp) with the normal damping set
/// from a coefficient of restitution as LAMMPS `pair granular ... damping
/// coeff_restitution` does for its `hooke` model, and the same law against
/// plane walls (LAMMPS `fix wall/gran hooke/history`). Scene keyword
/// `law = "linear"`; a kinetic law of ContactProvider
/// (contact/contact_provider.hpp) and WallContactProvider
/// (contact/wall_contact_provider.hpp).
///
/// For delta = r_i + r_j - |x_i - x_j| > 0, n = (x_i - x_j)/|x_i - x_j|,
/// m* = m_i m_j/(m_i + m_j) (the free particle's mass against a kinematic
/// one, effective_mass in core/particle_store.hpp), and the pair's e and mu
/// (geometric means of the two materials', unless the pair table gives
/// them, contact/pair_table.hpp):
///
///     zeta = -ln(e) / sqrt(ln²(e) + pi²),  c_n = 2 zeta sqrt(k_n m*),  c_t = d_t c_n
///     v_rel = v_i - v_j - (r_i Omega_i + r_j Omega_j) x n,  v_n = v_rel.n,  v_t = v_rel - v_n n
///     F_n = (k_n delta - c_n v_n) n                       (not clamped, as LAMMPS)
///     xi <- xi + h v_t,  xi <- xi - (xi.n) n
///     F_t = -k_t xi - c_t v_t
///     past |F_t| > mu |F_n|:  xi <- (mu|F_n|/|F_t|)(xi + c_t v_t/k_t) - c_t v_t/k_t,
///                             F_t <- (mu|F_n|/|F_t|) F_t
///     moments -r_i n x F_t on i and -r_j n x F_t on j
///
/// A free binary collision then rebounds with exactly the restitution e (the
/// damped oscillator leaves the contact when delta returns to 0). The
/// conservative part is k_n delta n, with energy ½ k_n delta² (U_contact,
/// U_wall); everything else is booked in W_contact (docs/model.md §11.3).
/// A wall is a body of infinite radius and mass at rest: m* = m_i, arm
/// r_j = 0, e and mu of the pair (particle material, wall material), the
/// wall's material being the particle's own unless Wall::material names one.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "contact/contact_provider.hpp"
#include "contact/pair_table.hpp"
#include "contact/wall_contact_provider.hpp"
#include "core/byte_stream.hpp"
#include "core/particle_store.hpp"

namespace dem {

/// Per-material coefficients of the linear law.
struct LinearMaterial {
  double restitution = 0.5;  ///< e in (0, 1]
  double friction = 0.5;     ///< mu >= 0 (sliding)
};

class LinearSpringDashpotLaw {
 public:
  static constexpr bool kKinetic = true;
  /// No wall contact without overlap (contact/wall_contact_provider.hpp).
  static constexpr bool kWallContactOnOverlap = true;
  static constexpr const char* energy_column = "U_contact";
  struct State {
    Vec3 xi = Vec3::Zero();  ///< tangential spring (length)
  };
  static constexpr std::size_t kStateBytes = 24;

  /// k_n, k_t: normal and tangential stiffness (force/length), finite and
  /// > 0; tangential_damping d_t: c_t/c_n, finite and >= 0; materials:
  /// indexed by ParticleStore::material; h: the step of the history
  /// updates; pairs: e and mu_s of pairs of materials in place of the
  /// geometric means (rows with mu_r are refused: the law has no rolling
  /// resistance). Throws std::invalid_argument naming what is out of range.
  LinearSpringDashpotLaw(double k_n, double k_t, double tangential_damping, std::vector<LinearMaterial> materials,
                         double time_step, PairTable pairs = {});
  LinearSpringDashpotLaw() = default;

  void evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, State& st, PairOutput& out) const;
  /// The same with j read at its image across a periodic face
  /// (ContactProvider, core/periodic_cell.hpp).
  void evaluate(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image, State& st,
                PairOutput& out) const;
  /// ½ k_n delta² (0 when apart).
  double energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const State& st) const;
  double energy(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const PairImage& image,
                const State& st) const;
  /// Particle i against the plane (point, unit normal towards the
  /// particles, material: Wall::material_for).
  void evaluate_wall(const ParticleStore& s, std::uint32_t i, const Wall& wall, State& st, PairOutput& out) const;
  /// ½ k_n delta² of that contact (0 when apart).
  double wall_energy(const ParticleStore& s, std::uint32_t i, const Wall& wall) const;

  void set_time_step(double h);
  void save(ByteWriter& w) const;
  /// Throws StateError for values the constructor refuses.
  static LinearSpringDashpotLaw load(ByteReader& r);
  static void save_state(ByteWriter& w, const State& st) { w.vec3(st.xi); }
  static State load_state(ByteReader& r) { return State{r.vec3("tangential history")}; }

  double normal_stiffness() const { return k_n_; }
  double tangential_stiffness() const { return k_t_; }
  double tangential_damping() const { return d_t_; }
  double time_step() const { return h_; }
  const std::vector<LinearMaterial>& materials() const { return materials_; }
  std::size_t material_count() const { return count_; }
  /// The pairs whose coefficients replace the geometric means.
  const PairTable& pair_table() const { return table_; }
  /// The damping ratio zeta of a restitution e in (0, 1]: -ln e/sqrt(ln² e + pi²).
  static double damping_ratio(double restitution);

 private:
  /// evaluate() of the branch rv = x_i - x_j and the partner's velocity v_j.
  void evaluate_branch(const ParticleStore& s, std::uint32_t i, std::uint32_t j, const Vec3& rv, const Vec3& v_j,
                       State& st, PairOutput& out) const;
  struct PairConstants {
    double zeta = 0.0, mu = 0.0;
  };
  const PairConstants& pair(std::uint32_t a, std::uint32_t b) const { return pairs_[a * count_ + b]; }
  void contact(const PairConstants& p, const Vec3& n, double delta, double m_star, const Vec3& v_rel, double r_i,
               double r_j, State& st, PairOutput& out) const;

  double k_n_ = 0.0, k_t_ = 0.0, d_t_ = 0.5, h_ = 0.0;
  std::vector<LinearMaterial> materials_;
  std::vector<PairConstants> pairs_;  ///< count_ x count_
  PairTable table_;
  std::uint32_t count_ = 0;
};

using LinearContactProvider = ContactProvider<LinearSpringDashpotLaw>;
using LinearWallProvider = WallContactProvider<LinearSpringDashpotLaw>;

}  // namespace dem
