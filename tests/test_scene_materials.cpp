// Scene files of docs/model.md Part II (docs/scene-format.md): [[material]],
// [bonds] law, [contact] law, [[group]], the fcc_block and chain sources;
// every key read, every bad value refused with the file, line and key.
#include <gtest/gtest.h>

#include <string>

#include "scene/scene_builder.hpp"
#include "scene_support.hpp"

using namespace dem;

namespace {

const char* kBase = R"(
[run]
time_step = "auto"
steps = 10
[[material]]
name = "a"
density = 1000.0
E = 1e7
nu = 0.25
beta = 0.8
sigma_c = 3e4
tau_c = 4e4
tension_only = true
e = 0.7
mu_s = 0.4
mu_r = 0.01
[[material]]
name = "b"
density = 2000.0
E = 2e7
[[particles]]
source = "chain"
material = "b"
count = 5
diameter = 0.01
[bonds]
law = "bdem"
[contact]
law = "penalty"
)";

SceneSpec parse(const std::string& text) { return parse_scene_text(text, "s.toml", "."); }

/// kBase with its first `from` replaced by `to`.
std::string with(const std::string& from, const std::string& to) { return dem::testing::replaced(kBase, from, to); }

std::string error_of(const std::string& text) {
  try {
    assemble_scene(build_scene(parse(text)));
  } catch (const SceneError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SceneMaterials, EveryMaterialKeyIsRead) {
  const SceneSpec s = parse(kBase);
  ASSERT_EQ(s.materials.size(), 2u);
  const SceneMaterial& a = s.materials[0].material;
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.density, 1000.0);
  EXPECT_EQ(a.youngs_modulus, 1e7);
  EXPECT_EQ(a.poisson_ratio, 0.25);
  EXPECT_EQ(a.bond_radius_factor, 0.8);
  EXPECT_EQ(a.tensile_strength, 3e4);
  EXPECT_EQ(a.shear_strength, 4e4);
  EXPECT_TRUE(a.tension_only);
  EXPECT_EQ(a.restitution, 0.7);
  EXPECT_EQ(a.sliding_friction, 0.4);
  EXPECT_EQ(a.rolling_friction, 0.01);
  const SceneMaterial& b = s.materials[1].material;
  EXPECT_EQ(b.poisson_ratio, 0.3);
  EXPECT_EQ(b.tensile_strength, INFINITY);
  EXPECT_EQ(s.sources[0].material_index, 1u);
  EXPECT_EQ(s.bonds.law, "bdem");
  EXPECT_EQ(s.contact.law, "penalty");
  const BuiltScene built = build_scene(s);
  EXPECT_EQ(built.scene.particles.size(), 5u);
  EXPECT_EQ(built.scene.bonds.size(), 4u);
  EXPECT_EQ(built.scene.particles.material[0], 1u);
  EXPECT_NEAR(built.scene.particles.mass[0], 2000.0 * M_PI * 1e-6 / 6, 1e-15);
  // Penalty default E_max r_max.
  EXPECT_EQ(built.scene.contact_setup->pair_stiffness(), 2e7 * 0.005);
}

TEST(SceneMaterials, BadMaterialsAndLawsAreRefusedByName) {
  const std::string base = kBase;
  const auto expect_error = [&](const std::string& text, const std::string& part) {
    std::string message;
    message = error_of(text);
    EXPECT_NE(message.find(part), std::string::npos) << "expected '" << part << "' in: " << message;
  };
  expect_error(with("material = \"b\"", "material = \"c\""), "no [[material]] is named \"c\" (the scene has \"a\", \"b\")");
  expect_error(with("name = \"b\"", "name = \"a\""), "[[material]] name: \"a\" is already the name");
  expect_error(with("E = 2e7", "E = -1"), "[[material]] E: expected a finite number > 0");
  expect_error(with("nu = 0.25", "nu = 0.7"), "nu: expected Poisson's ratio in (-1, 0.5]");
  expect_error(with("e = 0.7", "e = 1.5"), "e: expected a number in (0, 1]");
  expect_error(with("law = \"bdem\"", "law = \"glue\""), "[bonds] law: expected \"baker-gonzalez\"");
  expect_error(with("law = \"penalty\"", "law = \"sticky\""), "[contact] law: expected \"hertz\", \"penalty\", \"hertz-mindlin\", \"linear\", \"jkr\" or \"dmt\"");
  expect_error(with("law = \"penalty\"", "law = \"penalty\"\nrolling = true"), "rolling: only applies to law \"hertz-mindlin\"");
  EXPECT_EQ(error_of(with("law = \"penalty\"", "law = \"penalty\"\nfriction_filter = true")), "");
  std::string no_materials = base;
  no_materials.erase(no_materials.find("[[material]]"), no_materials.find("[[particles]]") - no_materials.find("[[material]]"));
  expect_error(no_materials, "the scene has no [[material]] tables");
}

TEST(SceneMaterials, GroupsSelectByBoxOrIdsAndRefuseEmptyOrDoubleHolds) {
  const std::string base = std::string(kBase) + R"(
[[group]]
name = "clamp"
ids = [0, 1]
motion = "fixed"
[[group]]
name = "tip"
box_min = [0.035, -1.0, -1.0]
box_max = [1.0, 1.0, 1.0]
motion = "velocity"
velocity = [0.0, 0.0, -0.5]
force = [0.0, 0.0, 2.0]
)";
  const BuiltScene b = build_scene(parse(base));
  ASSERT_EQ(b.scene.groups.size(), 2u);
  EXPECT_EQ(b.scene.groups[0].ids, (std::vector<std::uint32_t>{0, 1}));
  EXPECT_EQ(b.scene.groups[0].motion, ParticleGroup::Motion::fixed);
  EXPECT_EQ(b.scene.groups[1].ids, (std::vector<std::uint32_t>{4}));
  EXPECT_EQ(b.scene.groups[1].velocity, Vec3(0, 0, -0.5));
  EXPECT_EQ(b.scene.groups[1].force, Vec3(0, 0, 2.0));
  // The simulation moves the velocity group and holds the fixed one.
  Simulation sim = make_simulation(build_scene(parse(base)));
  for (int k = 0; k < 10; ++k) sim.step();
  const std::vector<GroupReport> r = sim.group_reports();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].displacement, Vec3::Zero());
  EXPECT_NEAR(r[1].displacement.z(), -0.5 * 10 * sim.time_step(), 1e-15);
  EXPECT_NEAR(r[1].displacement.x(), 0.0, 1e-18);
  EXPECT_EQ(error_of(base + "[[group]]\nname = \"none\"\nids = [100, 200]\n").find("no particle has an id in [100, 200]") !=
                std::string::npos,
            true);
  EXPECT_NE(error_of(base + "[[group]]\nname = \"again\"\nids = [1, 1]\nmotion = \"fixed\"\n")
                .find("particle 1 is already held by [[group]] \"clamp\""),
            std::string::npos);
  EXPECT_NE(error_of(base + "[[group]]\nname = \"both\"\nids = [1, 1]\nbox_min = [0,0,0]\nbox_max = [1,1,1]\n")
                .find("give exactly one selector"),
            std::string::npos);
  EXPECT_NE(error_of(base + "[[group]]\nname = \"v\"\nids = [2, 2]\nmotion = \"velocity\"\n").find("velocity: is required"),
            std::string::npos);
  EXPECT_NE(error_of(base + "[[group]]\nname = \"a,b\"\nids = [2, 2]\n").find("must not contain commas"),
            std::string::npos);
}

TEST(SceneMaterials, ImplicitKeysAreReadCheckedAndOnlyWithTheImplicitIntegrator) {
  const std::string base = kBase;
  const std::string run = base.substr(base.find("[run]"), base.find("\n", base.find("[run]")) - base.find("[run]"));
  const std::string implicit_run = run + "\nintegrator = \"implicit\"";
  // Read into the settings, and into the simulation.
  const std::string keys = implicit_run +
                           "\nnewton_tolerance = 1e-9\ncg_tolerance_max = 0.25\nmax_newton_iterations = 40\n"
                           "max_cg_iterations = 300\npreconditioner = \"block-jacobi\"";
  const SceneSpec spec = parse(with(run, keys));
  EXPECT_EQ(spec.run.map, IntegratorMap::implicit);
  EXPECT_EQ(spec.run.implicit.newton_tolerance, 1e-9);
  EXPECT_EQ(spec.run.implicit.cg_tolerance_max, 0.25);
  EXPECT_EQ(spec.run.implicit.max_newton_iterations, 40u);
  EXPECT_EQ(spec.run.implicit.max_cg_iterations, 300u);
  const Simulation sim = make_simulation(build_scene(spec));
  EXPECT_EQ(sim.implicit_settings().max_cg_iterations, 300u);
  EXPECT_EQ(sim.implicit_settings().hessian_blocks, HessianBlocks::gauss_newton);  // the default
  EXPECT_EQ(sim.implicit_settings().hessian_update, HessianUpdate::every_iteration);  // the default
  EXPECT_EQ(parse(with(run, implicit_run + "\nhessian_update = \"when-slow\"")).run.implicit.hessian_update,
            HessianUpdate::when_slow);
  EXPECT_NE(error_of(with(run, implicit_run + "\nhessian_update = \"sometimes\"")).find(
                "hessian_update: expected \"every-iteration\" or \"when-slow\", got \"sometimes\""),
            std::string::npos);
  EXPECT_NE(error_of(with(run, run + "\nhessian_update = \"when-slow\"")).find("only applies with integrator"),
            std::string::npos);
  EXPECT_EQ(sim.implicit_settings().scheme, ImplicitScheme::backward_euler);  // the default
  EXPECT_EQ(parse(with(run, implicit_run + "\nimplicit_scheme = \"midpoint\"")).run.implicit.scheme,
            ImplicitScheme::midpoint);
  EXPECT_EQ(parse(with(run, implicit_run + "\nimplicit_scheme = \"backward-euler\"")).run.implicit.scheme,
            ImplicitScheme::backward_euler);
  EXPECT_NE(error_of(with(run, implicit_run + "\nimplicit_scheme = \"newmark\"")).find(
                "implicit_scheme: expected \"backward-euler\" or \"midpoint\", got \"newmark\""),
            std::string::npos);
  EXPECT_NE(error_of(with(run, run + "\nimplicit_scheme = \"midpoint\"")).find("only applies with integrator"),
            std::string::npos);
  EXPECT_EQ(parse(with(run, implicit_run + "\nhessian_blocks = \"projected\"")).run.implicit.hessian_blocks,
            HessianBlocks::projected);
  EXPECT_EQ(parse(with(run, implicit_run + "\nhessian_blocks = \"exact\"")).run.implicit.hessian_blocks,
            HessianBlocks::exact);
  EXPECT_NE(error_of(with(run, implicit_run + "\nhessian_blocks = \"newton\"")).find(
                "hessian_blocks: expected \"projected\", \"gauss-newton\" or \"exact\", got \"newton\""),
            std::string::npos);
  EXPECT_NE(error_of(with(run, run + "\nhessian_blocks = \"exact\"")).find("only applies with integrator"),
            std::string::npos);
  // The event control (docs/model.md §12.8): on by default, off at 0.
  EXPECT_EQ(sim.implicit_settings().event_tolerance, kDefaultEventTolerance);
  EXPECT_EQ(parse(with(run, implicit_run + "\nevent_tolerance = 0")).run.implicit.event_tolerance, 0.0);
  EXPECT_EQ(parse(with(run, implicit_run + "\nevent_tolerance = 1e-2")).run.implicit.event_tolerance, 1e-2);
  EXPECT_NE(error_of(with(run, implicit_run + "\nevent_tolerance = 0.5")).find(
                "event_tolerance: expected 0 (off) or a fraction of the strength below 0.5, got 0.5"),
            std::string::npos);
  EXPECT_NE(error_of(with(run, implicit_run + "\nevent_tolerance = -1e-3")).find("event_tolerance"), std::string::npos);
  EXPECT_NE(error_of(with(run, run + "\nevent_tolerance = 1e-3")).find("only applies with integrator"),
            std::string::npos);
  // Refused: the keys without the implicit integrator, bad values, AMG.
  EXPECT_NE(error_of(with(run, run + "\nnewton_tolerance = 1e-9")).find("only applies with integrator = \"implicit\""),
            std::string::npos);
  EXPECT_NE(error_of(with(run, implicit_run + "\ncg_tolerance_max = 2")).find("cg_tolerance_max: expected a number in (0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of(with(run, implicit_run + "\nmax_newton_iterations = 0")).find("expected a count >= 1"),
            std::string::npos);
  EXPECT_EQ(sim.implicit_settings().preconditioner, CgPreconditioner::block_jacobi);  // the default
  if (amg_available())
    EXPECT_EQ(parse(with(run, implicit_run + "\npreconditioner = \"amg\"")).run.implicit.preconditioner,
              CgPreconditioner::amg);
  else
    EXPECT_NE(error_of(with(run, implicit_run + "\npreconditioner = \"amg\"")).find("not in this build"),
              std::string::npos);
  EXPECT_EQ(parse(with(run, implicit_run + "\npreconditioner = \"two-level\"")).run.implicit.preconditioner,
            CgPreconditioner::two_level);
  EXPECT_NE(error_of(with(run, implicit_run + "\npreconditioner = \"jacobi\"")).find(
                "preconditioner: expected \"block-jacobi\", \"amg\" or \"two-level\", got \"jacobi\""),
            std::string::npos);
  EXPECT_NE(error_of(with(run, run + "\npreconditioner = \"amg\"")).find("only applies with integrator"),
            std::string::npos);
  // time_step = "auto" as any multiple of the explicit limit (12.5 item 4).
  const std::string fraction = "time_step = \"auto\"\ntime_step_fraction = 50";
  const BuiltScene big = build_scene(parse(with(run, implicit_run).replace(
      with(run, implicit_run).find("time_step = \"auto\""), 18, fraction)));
  EXPECT_NEAR(big.time_step_fraction, 50.0, 1e-12);
  EXPECT_NE(error_of(with("time_step = \"auto\"", fraction)).find("time_step_fraction: expected a number in (0, 1]"),
            std::string::npos);
  // Hertz-Mindlin contact has no Hessian: refused at set-up, naming it.
  const std::string mindlin = with(run, implicit_run);
  std::string t = mindlin;
  t.replace(t.find("law = \"penalty\""), 15, "law = \"hertz-mindlin\"");
  EXPECT_NE(error_of(t).find("gives none"), std::string::npos) << error_of(t);
}
