// dem_rrp._core: the extension behind the dem_rrp package (docs/python.md).
// The pure-Python package (python/dem_rrp/) wraps _core.Simulation in
// dem_rrp.Simulation; the stepping loop with the GIL released, callbacks
// and Ctrl-C are here.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <array>
#include <exception>
#include <optional>

#include "core/parallel.hpp"
#include "python/py_arrays.hpp"
#include "python/py_simulation.hpp"
#include "run/output_folder.hpp"
#include "scene/scene_spec.hpp"

namespace py = pybind11;
using dem::python::PySimulation;

/// `f(sim, args...)` after PySimulation::require_idle(): nothing reads or
/// changes a simulation while another thread steps it.
template <class R, class... A>
auto idle(R (*f)(PySimulation&, A...)) {
  return [f](PySimulation& s, A... a) -> R {
    s.require_idle();
    return f(s, std::forward<A>(a)...);
  };
}
template <class R, class... A>
auto idle(R (PySimulation::*f)(A...)) {
  return [f](PySimulation& s, A... a) -> R {
    s.require_idle();
    return (s.*f)(std::forward<A>(a)...);
  };
}
template <class R, class... A>
auto idle(R (PySimulation::*f)(A...) const) {
  return [f](const PySimulation& s, A... a) -> R {
    s.require_idle();
    return (s.*f)(std::forward<A>(a)...);
  };
}

namespace {

/// Steps `sim` up to step count `end`: each step without the GIL (other
/// Python threads run meanwhile), then, on the calling thread with the GIL,
/// the signals (Ctrl-C raises KeyboardInterrupt here, between steps) and,
/// after every `every` steps of this call, callback(arg). An exception of
/// the callback or a signal ends the loop with the state of the last
/// completed step; a failed step raises RunError.
void run_to(PySimulation& sim, std::uint64_t end, const py::object& callback, std::uint64_t every,
            const py::object& arg) {
  if (every == 0) throw std::invalid_argument("run: every must be at least 1");
  sim.begin_run();
  struct RunEnd {
    PySimulation& sim;
    ~RunEnd() { sim.end_run(); }
  } run_end{sim};
  dem::ThreadLimit limit(sim.threads());
  const bool call = !callback.is_none();
  std::uint64_t done = 0;
  while (sim.sim().step_count() < end) {
    std::exception_ptr failure;
    sim.set_stepping(true);
    {
      py::gil_scoped_release release;
      try {
        sim.advance();
      } catch (...) {
        failure = std::current_exception();
      }
    }
    sim.set_stepping(false);
    if (failure) std::rethrow_exception(failure);
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    ++done;
    if (call && done % every == 0) callback(arg);
  }
}

/// The end step of run(t_end, steps): steps from now, the step reaching
/// t_end, or the scene's end.
std::uint64_t end_of_run(const PySimulation& sim, std::optional<double> t_end, std::optional<std::int64_t> steps) {
  if (t_end && steps) throw std::invalid_argument("run: give t_end or steps, not both");
  if (steps) {
    if (*steps < 0) throw std::invalid_argument("run: steps must be >= 0, got " + std::to_string(*steps));
    return sim.sim().step_count() + static_cast<std::uint64_t>(*steps);
  }
  if (t_end) return sim.step_at_time(*t_end);
  return std::max<std::uint64_t>(sim.end_step(), sim.sim().step_count());
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "dem_rrp._core: the engine's simulations for the dem_rrp package (docs/python.md)";

  static py::exception<dem::SceneError> scene_error(m, "SceneError", PyExc_ValueError);
  static py::exception<dem::CheckpointError> checkpoint_error(m, "CheckpointError", PyExc_ValueError);
  static py::exception<dem::OutputFolderError> output_error(m, "OutputFolderError", PyExc_RuntimeError);
  static py::exception<dem::python::RunFailed> run_error(m, "RunError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const dem::SceneError& e) {
      scene_error(e.what());
    } catch (const dem::CheckpointError& e) {
      checkpoint_error(e.what());
    } catch (const dem::OutputFolderError& e) {
      output_error(e.what());
    } catch (const dem::python::RunFailed& e) {
      run_error(e.what());
    }
  });

  py::class_<PySimulation>(m, "Simulation")
      .def_static(
          "from_file",
          [](const std::string& path, std::size_t threads, const std::string& simd) {
            return PySimulation::from_scene({path, "", {}}, true, threads, simd);
          },
          py::arg("path"), py::arg("threads") = 0, py::arg("simd") = "")
      .def_static(
          "from_toml",
          [](const std::string& text, const std::filesystem::path& base_dir, const std::string& name,
             std::size_t threads, const std::string& simd) {
            return PySimulation::from_scene({name, text, base_dir}, false, threads, simd);
          },
          py::arg("text"), py::arg("base_dir"), py::arg("name"), py::arg("threads") = 0, py::arg("simd") = "")
      .def_static("restart", &PySimulation::restart, py::arg("path"), py::arg("threads") = 0)
      .def(
          "run",
          [](PySimulation& s, std::optional<double> t_end, std::optional<std::int64_t> steps,
             const py::object& callback, std::uint64_t every, const py::object& arg) {
            run_to(s, end_of_run(s, t_end, steps), callback, every, arg);
          },
          py::arg("t_end"), py::arg("steps"), py::arg("callback"), py::arg("every"), py::arg("arg"))
      .def_property_readonly("time", [](const PySimulation& s) { return s.sim().time(); })
      .def_property_readonly("step_count", [](const PySimulation& s) { return s.sim().step_count(); })
      .def_property_readonly("time_step", [](const PySimulation& s) { return s.sim().time_step(); })
      .def_property_readonly("n_particles", [](const PySimulation& s) { return s.sim().particles().size(); })
      .def_property_readonly("n_bonds", [](const PySimulation& s) { return s.sim().forces().bonds().size(); })
      .def_property_readonly("n_broken", &PySimulation::broken_count)
      .def_property_readonly("end_step", &PySimulation::end_step)
      .def_property_readonly("layout_version", &PySimulation::layout_version)
      .def_property_readonly("reorder_count", [](const PySimulation& s) { return s.sim().reorder_count(); })
      .def("energy_row", idle(&PySimulation::energy_row))
      .def("failure_rows", idle(&PySimulation::failure_rows))
      .def("group_rows", idle(&PySimulation::group_rows))
      .def(
          "stress_row",
          [](const PySimulation& s, std::array<double, 3> lower, std::array<double, 3> upper) {
            s.require_idle();
            return s.stress_row(dem::Vec3(lower[0], lower[1], lower[2]), dem::Vec3(upper[0], upper[1], upper[2]));
          },
          py::arg("lower"), py::arg("upper"))
      .def_property_readonly("stress_box",
                             [](const PySimulation& s) -> std::optional<std::pair<std::array<double, 3>, std::array<double, 3>>> {
                               if (!s.stress_box()) return std::nullopt;
                               const dem::StressBox& b = *s.stress_box();
                               return std::make_pair(std::array<double, 3>{b.lower.x(), b.lower.y(), b.lower.z()},
                                                     std::array<double, 3>{b.upper.x(), b.upper.y(), b.upper.z()});
                             })
      .def("wall_row", idle(&PySimulation::wall_row))
      .def("particle_fields", &dem::python::particle_field_names)
      .def(
          "view",
          [](py::object self, const std::string& name) {
            PySimulation& s = self.cast<PySimulation&>();
            s.require_idle();
            return dem::python::particle_view(s, name, self);
          },
          py::arg("name"))
      .def("set_vectors", idle(&dem::python::set_particle_vectors), py::arg("name"), py::arg("ids"), py::arg("values"))
      .def("bond_arrays", idle(+[](PySimulation& s) { return dem::python::bond_arrays(s); }))
      .def("open_output", idle(&PySimulation::open_output), py::arg("dir"), py::arg("overwrite") = false)
      .def("close_output", idle(&PySimulation::close_output))
      .def_property_readonly("output_open", &PySimulation::output_open)
      .def("take_log", &PySimulation::take_log)
      .def("write_frame", idle(&PySimulation::write_frame), py::arg("dir"))
      .def("write_checkpoint", idle(&PySimulation::write_checkpoint), py::arg("path"));
}
