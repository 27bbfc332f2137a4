#!/usr/bin/env bash
# Runs the engine's linear contact law ([contact] law = "linear", docs/model.md
# §11.4) and LAMMPS's pair_style gran/hooke/history (fix wall/gran
# hooke/history for the wall case) on the same collisions and prints the
# comparison table (README.md says what is compared and what it gave).
#
# Installs Debian's lammps with apt-get if `lmp` is missing. Needs the engine
# built (build/apps/dem, scripts/setup.sh). Runs from any directory; a few
# seconds in all.
#
# Environment: DEM (the engine's CLI; <repo>/build/apps/dem), LMP (lmp),
# WORK (folder for both codes' outputs; /tmp/peers_linear).
# Arguments: case names (default: all; see peers.py CASES), e.g.
#   bench/peers_linear/run.sh headon_e05 fixed_headon fixed_headon+cn
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
dem=${DEM:-$repo/build/apps/dem}
lmp=${LMP:-lmp}
work=${WORK:-/tmp/peers_linear}

if ! command -v "$lmp" >/dev/null 2>&1; then
  echo "peers_linear: installing lammps (Debian package)" >&2
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get install -y -q --no-install-recommends lammps
fi
if [ ! -x "$dem" ]; then
  echo "peers_linear: no engine at $dem (build it with scripts/setup.sh, or set DEM)" >&2
  exit 1
fi
"$lmp" -h | sed -n 's/^Large-scale Atomic\/Molecular Massively Parallel Simulator - /LAMMPS: /p'
echo "engine: $dem"
exec python3 "$here/peers.py" --dem "$dem" --lmp "$lmp" --work "$work" "$@"
