# Sourced by the MPI benchmarks (bench/mpi_overhead.sh, bench/mpi_weak_scaling.sh):
# sets $dem to the dem with MPI. DEM_APP wins if set; else BUILD_DIR's
# apps/dem (a -DDEM_WITH_MPI=ON build) when BUILD_DIR is given; else the
# default build's apps/dem-mpi (docs/mpi.md), built here if it is missing.
if [ -n "${DEM_APP:-}" ]; then
  dem=$DEM_APP
elif [ -n "${BUILD_DIR:-}" ]; then
  dem=$BUILD_DIR/apps/dem
else
  dem=build/apps/dem-mpi
  if [ ! -x "$dem" ]; then
    bash scripts/install_packages.sh time
    cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build -j "$(nproc)" --target dem-mpi
  fi
fi
[ -x "$dem" ] || { echo "error: no dem with MPI at $dem (set DEM_APP, or BUILD_DIR to a -DDEM_WITH_MPI=ON build)" >&2; exit 2; }
