#pragma once
/// \file py_arrays.hpp
/// numpy views and copies of a PySimulation's particles and bonds
/// (docs/python.md "Particle views").
///
/// Views: every per-particle array of the store (ParticleStore's field list:
/// position, velocity, attitude, angular_velocity, force, moment, mass,
/// inertia, radius, reference_position, reference_attitude, id, material)
/// as a read-only numpy array on the store's own memory (no copy), shaped
/// (N,) for numbers and ids, (N, 3) for vectors, (N, 4) for attitudes
/// (unit quaternions stored as Eigen stores them: x, y, z, w), in slot
/// order (the particles are re-ordered along a Morton curve at neighbour
/// rebuilds: `id` says which particle is in each slot). Each view's base is
/// the Python object that owns the simulation, so the simulation lives as
/// long as any view of it. A view is valid until the next re-ordering or
/// reallocation (PySimulation::layout_version; the Python wrapper checks
/// it, dem_rrp/_views.py).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>
#include <vector>

#include "python/py_simulation.hpp"

namespace dem::python {

/// The names of the particle fields, in the store's order.
std::vector<std::string> particle_field_names(const PySimulation& sim);

/// The read-only view of field `name`, with `owner` (the Python object that
/// holds `sim`) as its base. Throws std::invalid_argument (ValueError) for
/// an unknown name, listing the known ones.
pybind11::array particle_view(PySimulation& sim, const std::string& name, pybind11::handle owner);

/// Sets field `name` ("velocity", "angular_velocity" or "position") of the
/// particles `ids` (int array-like, shape (k,)) to `values` (shape (k, 3),
/// or (3,) for the same vector for all): checks the shapes, the finiteness
/// of every value and the ids (PySimulation::slots_of) before changing
/// anything; std::invalid_argument (ValueError) naming the problem. Setting
/// positions marks every list for rebuild (Simulation::positions_changed).
void set_particle_vectors(PySimulation& sim, const std::string& name, const pybind11::object& ids,
                          const pybind11::object& values);

/// The bonds as copies, in the bond list's order: "ends" (M, 2) particle
/// ids, "broken" (M,) bool, "rest_length" (M,), and what the VTK frames
/// carry per bond, "axial_strain" r/r0 - 1 and "bend_angle" |theta_ij|
/// (radians), (M,) each.
pybind11::dict bond_arrays(const PySimulation& sim);

}  // namespace dem::python
