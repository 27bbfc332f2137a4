#!/usr/bin/env bash
# Builds every libFuzzer target (fuzz/, clang, AddressSanitizer and
# UndefinedBehaviorSanitizer) into ./build-fuzz and runs each for SECONDS
# (default 60) on a copy of its seed corpus: target fuzz_X reads
# tests/fuzz_corpus/X/. Crashing inputs are saved to build-fuzz/crashes/X/.
# Exits non-zero if any target crashed (or found a leak, timeout or OOM).
#
#   bash scripts/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -eq 0 ]; then
  echo "usage: $0 [SECONDS]   (a positive whole number of seconds per target)" >&2
  exit 2
fi

# The engine's packages plus clang and its sanitizer and libFuzzer runtimes.
bash scripts/install_packages.sh clang libclang-rt-14-dev

build=build-fuzz
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDEM_BUILD_FUZZ=ON -DDEM_BUILD_TESTS=OFF -DDEM_BUILD_BENCH=OFF

jobs=$(nproc 2>/dev/null || echo 2)
cmake --build "$build" -j "$jobs" --target dem_fuzz_targets

# Every fuzz target the build defines: the fuzz_* executables in fuzz/.
failed=()
summary=()
found=0
for exe in "$build"/fuzz/fuzz_*; do
  [ -f "$exe" ] && [ -x "$exe" ] || continue
  found=$((found + 1))
  name=$(basename "$exe")
  short=${name#fuzz_}
  seeds="tests/fuzz_corpus/$short"
  corpus="$build/corpus/$short"  # a working copy: the fuzzer adds to it
  crashes="$build/crashes/$short"
  rm -rf "$corpus"
  mkdir -p "$corpus" "$crashes"
  if [ -d "$seeds" ]; then
    cp -r "$seeds"/. "$corpus"/
  else
    echo "fuzz: warning: no seed corpus $seeds for $name; starting empty" >&2
  fi
  log="$build/$name.log"
  echo "fuzz: running $name for ${seconds}s on $(ls "$corpus" | wc -l) seeds (log: $log)"
  set +e
  "$exe" "$corpus" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1
  rc=$?
  set -e
  tail -n 25 "$log"
  stats=$(grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$log" | tail -n 2 | tr '\n' ' ')
  if [ $rc -ne 0 ]; then
    failed+=("$name")
    summary+=("$name: FAILED (exit $rc), inputs in $crashes/: $(ls "$crashes" | tr '\n' ' ')")
  else
    summary+=("$name: ok  $stats")
  fi
done

if [ $found -eq 0 ]; then
  echo "fuzz: no fuzz_* executables in $build/fuzz" >&2
  exit 1
fi

echo
echo "fuzz: summary (${seconds}s per target)"
printf '  %s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} target(s) failed: ${failed[*]}" >&2
  exit 1
fi
