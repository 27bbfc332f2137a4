#include "bonds/bdem_bond.hpp"

#include <numbers>

#include "core/format.hpp"

namespace dem {

namespace {
void require_positive(double v, const char* what) {
  if (!(std::isfinite(v) && v > 0.0))
    throw std::invalid_argument(std::string(what) + " must be finite and > 0, got " + format_g(v));
}
}  // namespace

BdemStiffness bdem_stiffness(double E, double nu, double r_b, double l0) {
  require_positive(E, "BDEM bond: Young's modulus E");
  require_positive(r_b, "BDEM bond: bond radius r_b");
  require_positive(l0, "BDEM bond: rest length l0");
  if (!(nu > -1.0 && nu <= 0.5))
    throw std::invalid_argument("BDEM bond: Poisson ratio nu must be in (-1, 0.5], got " + format_g(nu));
  const double pi = std::numbers::pi;
  const double G = E / (2.0 * (1.0 + nu));
  BdemStiffness k;
  k.bond_radius = r_b;
  k.area = pi * r_b * r_b;
  k.inertia = pi * r_b * r_b * r_b * r_b / 4.0;
  k.polar = pi * r_b * r_b * r_b * r_b / 2.0;
  k.normal = E * k.area / l0;
  k.shear = G * k.area * l0;
  k.bending = E * k.inertia / l0;
  k.twist = G * k.polar / l0;
  set_stress_factors(k);
  return k;
}

double bdem_stable_step(double E, double rho, double r, double fraction) {
  require_positive(E, "Young's modulus E");
  require_positive(rho, "density");
  require_positive(r, "particle radius");
  require_positive(fraction, "time step fraction");
  const double omega = 2.9 * std::sqrt(E / (rho * r * r));
  return fraction * 2.0 / omega;
}

}  // namespace dem
