# Regression guard: the energy.csv of each shipped scene (short runs at 1 and 2
# threads) must match the sha256 recorded in tests/scene_digests.txt bit for
# bit. Included from tests/CMakeLists.txt.
add_test(NAME scene_digests
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/tools/test_scene_digests.sh
          ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
set_tests_properties(scene_digests PROPERTIES TIMEOUT 300)

# The same digests with the force kernels forced onto the plain scalar loop
# and onto Highway's one-lane target (DEM_SIMD, core/simd.hpp): what a
# machine without AVX-512 or AVX2 runs must write the same bits.
foreach(target scalar hwy_scalar)
  add_test(NAME scene_digests_simd_${target}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/tools/test_scene_digests.sh
            ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
  set_tests_properties(scene_digests_simd_${target} PROPERTIES TIMEOUT 600 ENVIRONMENT DEM_SIMD=${target})
endforeach()
