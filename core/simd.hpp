#pragma once
/// \file simd.hpp
/// Which vector instruction set the force kernels run on.
///
/// The kernels (bonds/bond_kernel.hpp, bonds/bdem_kernel.hpp,
/// contact/pair_kernel.hpp) are compiled for every x86-64 target Google
/// Highway can generate (its one-lane baseline, SSSE3, SSE4, AVX2, AVX3 =
/// AVX-512) plus a plain scalar loop, and the best target the
/// CPU supports is chosen at run time ("auto"). Every target gives the same
/// bits (same operations in the same order, no FMA, no approximate
/// reciprocals), so the choice changes the speed only; forcing one is for
/// tests and for measuring.
///
/// Process-wide setting: change it between runs, not while a force
/// evaluation is in flight. The environment variable DEM_SIMD, if set,
/// applies a target to the whole process from its start (tests included).

#include <string>
#include <vector>

namespace dem {

/// Targets usable on this CPU, best first, as names set_simd_target takes:
/// Highway's (lower case: "avx3", "avx2", "sse4", "ssse3", and its one-lane
/// baseline "hwy_scalar" or "emu128") then "scalar" (the kernels' plain C++
/// loop, no Highway).
std::vector<std::string> available_simd_targets();

/// Forces the kernels onto `name` ("auto": the best available; "avx512"
/// means "avx3"). Throws std::invalid_argument naming the available targets
/// if `name` is unknown or not supported by this CPU.
void set_simd_target(const std::string& name);

/// The target the kernels run on now (a name of available_simd_targets()).
std::string simd_target();

/// True when the plain scalar loop is forced (set_simd_target("scalar")).
bool simd_scalar_forced();

}  // namespace dem
