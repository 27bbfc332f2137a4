#include "python/py_arrays.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "bonds/bond_potential.hpp"

namespace py = pybind11;

namespace dem::python {

namespace {

/// The numpy view of one store array: (N, 3) doubles for Vec3, (N, 4) for
/// Quat (x, y, z, w), (N,) otherwise.
template <class T>
py::array view_of(const std::vector<T>& v, py::handle owner) {
  const auto n = static_cast<py::ssize_t>(v.size());
  py::array a;
  if constexpr (std::is_same_v<T, Vec3> || std::is_same_v<T, Quat>) {
    constexpr py::ssize_t width = std::is_same_v<T, Vec3> ? 3 : 4;
    static_assert(sizeof(T) == width * sizeof(double), "no padding in the store's vectors");
    a = py::array(py::dtype::of<double>(), {n, width},
                  {static_cast<py::ssize_t>(sizeof(T)), static_cast<py::ssize_t>(sizeof(double))},
                  reinterpret_cast<const double*>(v.data()), owner);
  } else {
    a = py::array(py::dtype::of<T>(), {n}, {static_cast<py::ssize_t>(sizeof(T))}, v.data(), owner);
  }
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

}  // namespace

std::vector<std::string> particle_field_names(const PySimulation& sim) {
  std::vector<std::string> names;
  sim.sim().particles().for_each_field([&](const char* name, const auto&) { names.emplace_back(name); });
  return names;
}

py::array particle_view(PySimulation& sim, const std::string& name, py::handle owner) {
  py::array out;
  bool found = false;
  sim.sim().particles().for_each_field([&](const char* field, const auto& v) {
    if (found || name != field) return;
    out = view_of(v, owner);
    found = true;
  });
  if (!found) {
    std::string known;
    for (const std::string& n : particle_field_names(sim)) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("no particle field '" + name + "' (the fields are " + known + ")");
  }
  return out;
}

void set_particle_vectors(PySimulation& sim, const std::string& name, const py::object& ids,
                          const py::object& values) {
  ParticleStore& s = sim.sim().particles();
  std::vector<Vec3>* target = name == "velocity"           ? &s.velocity
                              : name == "angular_velocity" ? &s.angular_velocity
                              : name == "position"         ? &s.position
                                                           : nullptr;
  if (target == nullptr) throw std::invalid_argument("set: no settable vector field '" + name + "'");
  const auto id = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(ids);
  if (!id || id.ndim() != 1)
    throw std::invalid_argument("set_" + name + ": ids must be a one-dimensional sequence of particle ids");
  const auto k = static_cast<std::size_t>(id.shape(0));
  const auto v = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(values);
  const bool one = v && v.ndim() == 1 && v.shape(0) == 3;
  if (!v || !(one || (v.ndim() == 2 && static_cast<std::size_t>(v.shape(0)) == k && v.shape(1) == 3)))
    throw std::invalid_argument("set_" + name + ": values must have shape (" + std::to_string(k) +
                                ", 3) or (3,), one vector per id");
  const double* pv = v.data();
  const std::size_t count = one ? 3 : 3 * k;
  for (std::size_t c = 0; c < count; ++c)
    if (!std::isfinite(pv[c]))
      throw std::invalid_argument("set_" + name + ": value " + std::to_string(c / 3) + " (particle id " +
                                  std::to_string(id.data()[one ? 0 : c / 3]) + ") is not finite");
  const std::vector<std::uint32_t> slots = sim.slots_of({id.data(), k});
  for (std::size_t i = 0; i < k; ++i) {
    const double* p = one ? pv : pv + 3 * i;
    (*target)[slots[i]] = Vec3(p[0], p[1], p[2]);
  }
  if (target == &s.position) sim.sim().positions_changed();
}

py::dict bond_arrays(const PySimulation& sim) {
  const ParticleStore& s = sim.sim().particles();
  const BondList& bonds = sim.sim().forces().bonds();
  const std::span<const std::uint8_t> live = sim.sim().forces().bond_live();
  const auto m = static_cast<py::ssize_t>(bonds.size());
  py::array_t<std::uint32_t> ends({m, py::ssize_t{2}});
  py::array_t<bool> broken(m);
  py::array_t<double> rest(m), strain(m), bend(m);
  auto pe = ends.mutable_unchecked<2>();
  auto pb = broken.mutable_unchecked<1>();
  auto pr = rest.mutable_unchecked<1>();
  auto ps = strain.mutable_unchecked<1>();
  auto pa = bend.mutable_unchecked<1>();
  for (py::ssize_t b = 0; b < m; ++b) {
    const std::size_t i = bonds.first[b], j = bonds.second[b];
    pe(b, 0) = s.id[i];
    pe(b, 1) = s.id[j];
    pb(b) = !live.empty() && live[b] == 0;
    pr(b) = bonds.rest_length[b];
    // As the VTK frames derive them (io/vtk_writer.cpp).
    ps(b) = (s.position[i] - s.position[j]).norm() / bonds.rest_length[b] - 1.0;
    pa(b) = bond_rotation_vector(s.attitude[i] * s.reference_attitude[i].conjugate(),
                                 s.attitude[j] * s.reference_attitude[j].conjugate())
                .norm();
  }
  py::dict d;
  d["ends"] = ends;
  d["broken"] = broken;
  d["rest_length"] = rest;
  d["axial_strain"] = strain;
  d["bend_angle"] = bend;
  return d;
}

}  // namespace dem::python
