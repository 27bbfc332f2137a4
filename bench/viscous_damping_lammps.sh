#!/usr/bin/env bash
# The viscous damping of docs/model.md §11.10 beside LAMMPS's `fix viscous`,
# which defines the model: one sphere (m = 2e-3 kg, v0 = (0.3, -0.2, 0.1) m/s,
# no other force), gamma = alpha m = 0.1 kg/s (alpha = 50 /s), to T = 2/alpha
# at steps of 2e-4, 1e-4 and 5e-5 s. Prints per step LAMMPS's v_x(T), x(T)
# and their relative errors against the exact exp(-alpha t) solution; the
# engine's figures for the same particle are printed by
# tests/test_viscous_damping.cpp (FreeParticleDecaysAsExpOfMinusAlphaT).
# Needs Debian's lammps package (lmp).
set -euo pipefail
command -v lmp >/dev/null || { echo "viscous_damping_lammps.sh: no lmp (apt-get install lammps)" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/viscous_lammps.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "h,lammps_vx,lammps_x,vx_relative_error,x_relative_error"
for h in 2e-4 1e-4 5e-5; do
  steps=$(python3 -c "print(round(0.04 / $h))")
  cat >"$work/in.viscous" <<EOF
units si
atom_style sphere
atom_modify map array
boundary f f f
region box block -1 1 -1 1 -1 1
create_box 1 box
create_atoms 1 single 0 0 0
set atom 1 diameter 0.01 density $(python3 -c "import math; print(2e-3 / (math.pi / 6 * 0.01 ** 3))")
velocity all set 0.3 -0.2 0.1
pair_style zero 0.01
pair_coeff * *
neighbor 0.01 bin
fix 1 all nve/sphere
fix 2 all viscous 0.1
timestep $h
thermo_style custom step
run $steps
variable vx equal vx[1]
variable xx equal x[1]
print "RESULT \${vx} \${xx}"
EOF
  (cd "$work" && lmp -in in.viscous -log none) | awk '/^RESULT/ {print $2, $3}' | python3 -c "
import math, sys
vx, x = map(float, sys.stdin.read().split())
v_exact = 0.3 * math.exp(-2.0)
x_exact = 0.3 * (1 - math.exp(-2.0)) / 50.0
print(f'$h,{vx:.10e},{x:.10e},{(vx - v_exact) / v_exact:+.3e},{(x - x_exact) / x_exact:+.3e}')"
done
