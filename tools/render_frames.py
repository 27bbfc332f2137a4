#!/usr/bin/env python3
"""Render the VTK frames of a dem_torus run to PNG images with VTK.

A run folder holds particles.pvd and bonds.pvd (ParaView collections that
list particles_NNNNNN.vtp / bonds_NNNNNN.vtp with their times). For every
selected frame this draws

  * the particles as spheres of their diameter, coloured by the speed |v|
    (one colour range over all rendered frames, with a scalar bar),
  * the bonds as lines coloured by axial_strain (r/r0 - 1) with a diverging
    colour map and a symmetric range,
  * a label with the time,

seen by one fixed camera fitted to the first frame, and writes
OUT_DIR/frame_NNNNNN.png (NNNNNN: the frame number of particles_NNNNNN.vtp).

VTK renders offscreen but needs an X server: run it as
    xvfb-run -a python3 tools/render_frames.py RUN_DIR
When DISPLAY is not set and xvfb-run is installed, the script restarts itself
under `xvfb-run -a`.
"""

import argparse
import math
import os
import re
import shutil
import sys
import xml.etree.ElementTree as ET

from system_python import rerun_or_exit

_XVFB_GUARD = "DEM_TOOLS_XVFB"
try:
    import numpy as np
    import vtkmodules.vtkRenderingOpenGL2  # noqa: F401  (registers the OpenGL render window)
    import vtkmodules.vtkInteractionStyle  # noqa: F401
    import vtkmodules.vtkRenderingFreeType  # noqa: F401  (text rendering)
    from vtkmodules.vtkCommonCore import vtkCommand, vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkDataObject, vtkPolyData
    from vtkmodules.vtkFiltersCore import vtkGlyph3D
    from vtkmodules.vtkFiltersSources import vtkSphereSource
    from vtkmodules.vtkIOImage import vtkPNGWriter
    from vtkmodules.vtkIOXML import vtkXMLPolyDataReader
    from vtkmodules.vtkRenderingAnnotation import vtkScalarBarActor
    from vtkmodules.vtkRenderingCore import (vtkActor, vtkColorTransferFunction,
                                             vtkPolyDataMapper, vtkRenderer,
                                             vtkRenderWindow, vtkTextActor,
                                             vtkWindowToImageFilter)
    from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
    _VTK_FACTORIES = (vtkmodules.vtkRenderingOpenGL2, vtkmodules.vtkInteractionStyle,
                      vtkmodules.vtkRenderingFreeType)
except ImportError as exc:
    rerun_or_exit(__file__, "render_frames", exc, "python3-vtk9 (VTK's Python bindings)")

PROG = "render_frames"
BACKGROUND = (0.32, 0.34, 0.43)      # ParaView's default blue-grey: suits both colour maps
SPHERE_RESOLUTION = 8                # 8 x 8 sphere: cheap enough for 10^5 glyphs
# Viridis (matplotlib) sampled at 0, 1/4, ..., 1, for the speed.
VIRIDIS = [(0.00, (0.267, 0.005, 0.329)), (0.25, (0.229, 0.322, 0.546)),
           (0.50, (0.128, 0.567, 0.551)), (0.75, (0.369, 0.789, 0.383)),
           (1.00, (0.993, 0.906, 0.144))]
# Moreland's cool-warm diverging map, for the axial strain.
COOL, MID, WARM = (0.230, 0.299, 0.754), (0.865, 0.865, 0.865), (0.706, 0.016, 0.150)


class RenderError(Exception):
    """A problem with the input or the output, reported without a traceback."""


# ----------------------------------------------------------------------------
# Frames: the .pvd collections

class Frame:
    def __init__(self, number, time, particles, bonds=None):
        self.number = number        # NNNNNN of particles_NNNNNN.vtp
        self.time = time            # simulated time, or None when unknown
        self.particles = particles  # path of the particle .vtp
        self.bonds = bonds          # path of the bond .vtp, or None
        self.meshes = None          # path of the mesh walls' .vtp (meshes.pvd), or None


def read_pvd(path):
    """Returns [(time, absolute file path)] of a ParaView .pvd collection."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise RenderError("%s is not a valid .pvd (XML) file: %s" % (path, exc))
    except OSError as exc:
        raise RenderError("cannot read %s: %s" % (path, exc.strerror or exc))
    base = os.path.dirname(path)
    entries = []
    for ds in root.iter("DataSet"):
        name = ds.get("file")
        if not name:
            raise RenderError("%s: a DataSet without a file attribute" % path)
        try:
            time = float(ds.get("timestep")) if ds.get("timestep") is not None else None
        except ValueError:
            raise RenderError("%s: bad timestep %r for %s" % (path, ds.get("timestep"), name))
        entries.append((time, os.path.join(base, name)))
    return entries


def frame_number(path, position):
    m = re.search(r"_(\d+)\.vtp$", os.path.basename(path))
    return int(m.group(1)) if m else position


def find_frames(run_dir):
    """Lists the run's frames from particles.pvd (or particles_*.vtp) and bonds.pvd."""
    if not os.path.exists(run_dir):
        raise RenderError("no such folder: %s" % run_dir)
    if not os.path.isdir(run_dir):
        raise RenderError("%s is not a folder (give the run's output folder)" % run_dir)
    ppvd = os.path.join(run_dir, "particles.pvd")
    if os.path.exists(ppvd):
        entries = read_pvd(ppvd)
    else:
        # No collection (e.g. a run that was killed): take the files, times unknown.
        names = sorted(f for f in os.listdir(run_dir) if re.match(r"particles_\d+\.vtp$", f))
        entries = [(None, os.path.join(run_dir, f)) for f in names]
        if entries and not os.environ.get(_XVFB_GUARD):  # said once, not again under xvfb-run
            print("%s: warning: no particles.pvd in %s; frame times unknown"
                  % (PROG, run_dir), file=sys.stderr)
    if not entries:
        raise RenderError("no frames in %s (expected particles.pvd listing particles_NNNNNN.vtp;"
                          " was the run made with --vtk-every 0?)" % run_dir)
    frames = [Frame(frame_number(p, i), t, p) for i, (t, p) in enumerate(entries)]

    bpvd = os.path.join(run_dir, "bonds.pvd")
    bond_files = {}
    if os.path.exists(bpvd):
        for i, (_, p) in enumerate(read_pvd(bpvd)):
            bond_files[frame_number(p, i)] = p
    else:
        for f in os.listdir(run_dir):
            if re.match(r"bonds_\d+\.vtp$", f):
                bond_files[frame_number(f, 0)] = os.path.join(run_dir, f)
    for fr in frames:
        fr.bonds = bond_files.get(fr.number)
        # The mesh walls of the frame ([[mesh]] tables: meshes_NNNNNN.vtp).
        mesh = os.path.join(run_dir, "meshes_%06d.vtp" % fr.number)
        fr.meshes = mesh if os.path.exists(mesh) else None
    return frames


def parse_frame_list(text):
    """'0,5,10-20,last' -> list of frame numbers (and the string 'last')."""
    out = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if item == "last":
            out.append("last")
        elif re.fullmatch(r"\d+", item):
            out.append(int(item))
        elif re.fullmatch(r"\d+-\d+", item):
            a, b = (int(x) for x in item.split("-"))
            if b < a:
                raise argparse.ArgumentTypeError("empty range %r" % item)
            out.extend(range(a, b + 1))
        else:
            raise argparse.ArgumentTypeError(
                "bad frame list item %r (use numbers, ranges a-b and 'last', "
                "separated by commas)" % item)
    if not out:
        raise argparse.ArgumentTypeError("empty frame list")
    return out


def select_frames(frames, wanted, every):
    if wanted is not None:
        by_number = {f.number: f for f in frames}
        chosen, missing = [], []
        for w in wanted:
            f = frames[-1] if w == "last" else by_number.get(w)
            if f is None:
                missing.append(str(w))
            elif f not in chosen:
                chosen.append(f)
        if missing:
            raise RenderError("no frame(s) %s in this run (it has frames %d..%d)"
                              % (", ".join(missing[:10]) + (" ..." if len(missing) > 10 else ""),
                                 frames[0].number, frames[-1].number))
        chosen.sort(key=lambda f: f.number)
        frames = chosen
    return frames[::every]


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not m or int(m.group(1)) < 16 or int(m.group(2)) < 16:
        raise argparse.ArgumentTypeError("size must be WIDTHxHEIGHT, e.g. 1280x720 "
                                         "(at least 16x16), got %r" % text)
    return int(m.group(1)), int(m.group(2))


# ----------------------------------------------------------------------------
# Reading .vtp files

def read_polydata(path):
    if not os.path.isfile(path):
        raise RenderError("missing file %s (listed in the .pvd collection)" % path)
    reader = vtkXMLPolyDataReader()
    errors = []
    reader.AddObserver(vtkCommand.ErrorEvent, lambda obj, ev: errors.append(ev))
    reader.GetExecutive().AddObserver(vtkCommand.ErrorEvent,
                                      lambda obj, ev: errors.append(ev))
    reader.SetFileName(path)
    reader.Update()
    poly = reader.GetOutput()
    if errors or reader.GetErrorCode() != 0 or poly is None:
        raise RenderError("cannot read %s (not a valid VTK XML PolyData file?)" % path)
    return poly


def point_array(poly, name, path, components):
    arr = poly.GetPointData().GetArray(name)
    if arr is None or arr.GetNumberOfComponents() != components:
        raise RenderError("%s has no point array %r with %d component(s)"
                          % (path, name, components))
    return vtk_to_numpy(arr)


COLOR_BY = "speed"  # set from --color-by: "speed", "fragment" or "n_broken"
GOLDEN = 0.6180339887498949


def load_particles(path):
    """Reads a particle frame and adds the point array 'speed': the colour
    value, |velocity| (--color-by speed), the fragment label spread over
    [0, 1) by the golden ratio so that neighbouring labels differ in colour
    and a fragment keeps its colour from frame to frame (--color-by
    fragment), or the failed bonds of the particle (--color-by n_broken)."""
    poly = read_polydata(path)
    slim = vtkPolyData()
    if poly.GetNumberOfPoints() == 0:
        diameter, speed = numpy_to_vtk(np.zeros(0), deep=1), np.zeros(0)
        diameter.SetName("diameter")
        slim.SetPoints(vtkPoints())
    else:
        diameter = poly.GetPointData().GetArray("diameter")
        point_array(poly, "diameter", path, 1)
        if COLOR_BY == "speed":
            v = point_array(poly, "velocity", path, 3)
            speed = np.sqrt(np.einsum("ij,ij->i", v, v))
        else:
            if poly.GetPointData().GetArray(COLOR_BY) is None:
                raise RenderError("%s has no point array '%s' (only runs whose bonds can fail write it)"
                                  % (path, COLOR_BY))
            values = np.asarray(point_array(poly, COLOR_BY, path, 1), dtype=float).reshape(-1)
            speed = np.mod(values * GOLDEN, 1.0) if COLOR_BY == "fragment" else values
        slim.SetPoints(poly.GetPoints())
    arr = numpy_to_vtk(np.ascontiguousarray(speed, dtype=float), deep=1)
    arr.SetName("speed")
    # Only what the glyphs need: vtkGlyph3D copies every point array to every
    # vertex of every sphere, which costs memory for 10^5 particles.
    slim.GetPointData().AddArray(diameter)
    slim.GetPointData().AddArray(arr)
    slim.GetPointData().SetActiveScalars("diameter")  # what the glyphs scale by
    return slim, speed


def load_bonds(path):
    poly = read_polydata(path)
    arr = poly.GetCellData().GetArray("axial_strain")
    if arr is None:
        raise RenderError("%s has no cell array 'axial_strain'" % path)
    return poly, vtk_to_numpy(arr)


def padded_bounds(poly):
    b = list(poly.GetBounds())
    d = poly.GetPointData().GetArray("diameter")
    r = 0.5 * d.GetRange()[1] if d is not None and d.GetNumberOfTuples() else 0.0
    return [b[0] - r, b[1] + r, b[2] - r, b[3] + r, b[4] - r, b[5] + r]


def union(a, b):
    if a is None:
        return list(b)
    return [min(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]),
            max(a[3], b[3]), min(a[4], b[4]), max(a[5], b[5])]


# ----------------------------------------------------------------------------
# The scene

def speed_lut(lo, hi):
    lut = vtkColorTransferFunction()
    if COLOR_BY == "fragment":  # categorical: hues around the circle
        lut.SetColorSpaceToHSV()
        lut.HSVWrapOff()
        for k in range(7):
            x = k / 6.0
            lut.AddHSVPoint(lo + x * (hi - lo), 0.95 * x, 0.75, 0.95)
        return lut
    lut.SetColorSpaceToLab()
    for x, rgb in VIRIDIS:
        lut.AddRGBPoint(lo + x * (hi - lo), *rgb)
    return lut


def strain_lut(s):
    lut = vtkColorTransferFunction()
    lut.SetColorSpaceToDiverging()
    lut.AddRGBPoint(-s, *COOL)
    lut.AddRGBPoint(0.0, *MID)
    lut.AddRGBPoint(s, *WARM)
    return lut


def scalar_bar(lut, title, horizontal, height_px):
    bar = vtkScalarBarActor()
    bar.SetLookupTable(lut)
    bar.SetTitle(title)
    bar.SetNumberOfLabels(5)
    bar.SetLabelFormat("%-#8.3g")
    bar.UnconstrainedFontSizeOn()
    bar.GetTitleTextProperty().SetFontSize(max(9, round(18 * height_px / 720)))
    bar.GetLabelTextProperty().SetFontSize(max(8, round(16 * height_px / 720)))
    for prop in (bar.GetTitleTextProperty(), bar.GetLabelTextProperty()):
        prop.SetColor(1.0, 1.0, 1.0)
        prop.ShadowOff()
        prop.ItalicOff()
        prop.BoldOff()
    if horizontal:
        bar.SetOrientationToHorizontal()
        bar.SetPosition(0.30, 0.01)
        bar.SetWidth(0.40)
        bar.SetHeight(0.13)
    else:
        bar.SetOrientationToVertical()
        bar.SetPosition(0.89, 0.15)
        bar.SetWidth(0.09)
        bar.SetHeight(0.70)
    return bar


def view_axes(bounds, view):
    """(direction from the focal point to the camera, view-up) for --view."""
    if view == "auto":
        extent = [bounds[1] - bounds[0], bounds[3] - bounds[2], bounds[5] - bounds[4]]
        view = "xyz"[min(range(3), key=lambda i: extent[i])]  # look along the thinnest axis
    return {"x": ((1, 0, 0), (0, 0, 1)),
            "y": ((0, -1, 0), (0, 0, 1)),
            "z": ((0, 0, 1), (0, 1, 0)),
            "iso": ((1, -1, 1), (0, 0, 1))}[view]


def set_camera(renderer, bounds, view, azimuth, elevation, zoom):
    direction, up = view_axes(bounds, view)
    centre = [(bounds[0] + bounds[1]) / 2, (bounds[2] + bounds[3]) / 2,
              (bounds[4] + bounds[5]) / 2]
    cam = renderer.GetActiveCamera()
    cam.SetFocalPoint(*centre)
    cam.SetPosition(*(c + d for c, d in zip(centre, direction)))
    cam.SetViewUp(*up)
    cam.Azimuth(azimuth)
    cam.Elevation(elevation)
    cam.OrthogonalizeViewUp()
    renderer.ResetCamera(bounds)
    cam.Zoom(zoom)
    renderer.ResetCameraClippingRange(bounds)


def format_time(t):
    return "t = %.6g" % t if t is not None else "t unknown"


def write_png(window, path, compression):
    grab = vtkWindowToImageFilter()
    grab.SetInput(window)
    grab.SetInputBufferTypeToRGB()
    grab.ReadFrontBufferOff()
    grab.ShouldRerenderOff()  # the caller has just rendered; a second render doubles the time
    grab.Update()
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
    writer = vtkPNGWriter()
    writer.SetCompressionLevel(compression)
    writer.SetFileName(tmp)
    writer.SetInputConnection(grab.GetOutputPort())
    writer.Write()
    if writer.GetErrorCode() != 0 or not os.path.isfile(tmp) or os.path.getsize(tmp) == 0:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise RenderError("cannot write %s" % path)
    os.replace(tmp, path)


def render(frames, args, out_dir):
    # Pass 1: colour ranges over all rendered frames, and the camera bounds.
    speed_lo, speed_hi, strain_max = math.inf, -math.inf, 0.0
    fit_bounds = None
    first_poly, _ = load_particles(args.all_frames[0].particles)
    if first_poly.GetNumberOfPoints() == 0:
        raise RenderError("%s has no particles" % args.all_frames[0].particles)
    first_bounds = padded_bounds(first_poly)
    have_bonds = not args.no_bonds and any(f.bonds for f in frames)
    if not args.no_bonds and not all(f.bonds for f in frames):
        print("%s: warning: no bond file for some frames; they are drawn without bonds"
              % PROG, file=sys.stderr)
    need_pass = (args.speed_range is None or (have_bonds and args.strain_range is None)
                 or args.fit == "all")
    if need_pass:
        for f in frames:
            poly, speed = load_particles(f.particles)
            if speed.size:
                speed_lo = min(speed_lo, float(np.nanmin(speed)))
                speed_hi = max(speed_hi, float(np.nanmax(speed)))
                fit_bounds = union(fit_bounds, padded_bounds(poly))
            if have_bonds and f.bonds and args.strain_range is None:
                _, strain = load_bonds(f.bonds)
                if strain.size:
                    strain_max = max(strain_max, float(np.nanmax(np.abs(strain))))
    if args.speed_range is not None:
        speed_lo, speed_hi = args.speed_range
    if COLOR_BY == "fragment":
        speed_lo, speed_hi = 0.0, 1.0
    if not math.isfinite(speed_lo) or not math.isfinite(speed_hi):
        speed_lo, speed_hi = 0.0, 1.0
    if speed_hi - speed_lo <= 1e-12 * max(1.0, abs(speed_hi)):
        # One speed everywhere (e.g. a single frame of a rigid throw).
        pad = 0.5 * abs(speed_hi) if speed_hi != 0.0 else 1.0
        speed_lo, speed_hi = speed_lo - pad, speed_hi + pad
    if args.strain_range is not None:
        strain_max = args.strain_range
    if not math.isfinite(strain_max) or strain_max < 1e-9:
        strain_max = 1e-9  # unstrained (round-off only): a pale, not a noisy, colouring
    bounds = fit_bounds if (args.fit == "all" and fit_bounds is not None) else first_bounds

    # The pipeline, built once; each frame swaps the input data.
    sphere = vtkSphereSource()
    sphere.SetRadius(0.5)  # diameter 1, scaled by the 'diameter' array
    sphere.SetThetaResolution(SPHERE_RESOLUTION)
    sphere.SetPhiResolution(SPHERE_RESOLUTION)
    glyph = vtkGlyph3D()
    glyph.SetSourceConnection(sphere.GetOutputPort())
    glyph.SetInputArrayToProcess(0, 0, 0, vtkDataObject.FIELD_ASSOCIATION_POINTS, "diameter")
    glyph.SetScaleModeToScaleByScalar()
    glyph.SetScaleFactor(1.0)
    glyph.ClampingOff()
    glyph.OrientOff()
    glyph.SetColorModeToColorByScalar()
    glyph.SetInputArrayToProcess(3, 0, 0, vtkDataObject.FIELD_ASSOCIATION_POINTS, "speed")
    glyph.SetOutputPointsPrecision(1)  # vtkAlgorithm::SINGLE_PRECISION: half the memory

    slut = speed_lut(speed_lo, speed_hi)
    pmapper = vtkPolyDataMapper()
    pmapper.SetInputConnection(glyph.GetOutputPort())
    pmapper.SetScalarModeToUsePointFieldData()
    pmapper.SelectColorArray("speed")
    pmapper.SetLookupTable(slut)
    pmapper.SetScalarRange(speed_lo, speed_hi)
    pmapper.ScalarVisibilityOn()
    pactor = vtkActor()
    pactor.SetMapper(pmapper)
    pactor.GetProperty().SetSpecular(0.3)
    pactor.GetProperty().SetSpecularPower(20)

    renderer = vtkRenderer()
    renderer.SetBackground(*BACKGROUND)
    renderer.AddActor(pactor)
    if COLOR_BY != "fragment":  # fragment colours are labels, not values
        title = "speed |v|" if COLOR_BY == "speed" else "failed bonds of the particle"
        renderer.AddActor2D(scalar_bar(slut, title, False, args.size[1]))

    bmapper = bactor = None
    if have_bonds:
        blut = strain_lut(strain_max)
        bmapper = vtkPolyDataMapper()
        bmapper.SetScalarModeToUseCellFieldData()
        bmapper.SelectColorArray("axial_strain")
        bmapper.SetLookupTable(blut)
        bmapper.SetScalarRange(-strain_max, strain_max)
        bmapper.ScalarVisibilityOn()
        bactor = vtkActor()
        bactor.SetMapper(bmapper)
        bactor.GetProperty().SetLineWidth(args.bond_width)
        bactor.GetProperty().LightingOff()
        renderer.AddActor(bactor)
        renderer.AddActor2D(scalar_bar(blut, "axial strain r/r0 - 1", True, args.size[1]))

    # The mesh walls, as a light grey surface.
    mmapper = vtkPolyDataMapper()
    mmapper.ScalarVisibilityOff()
    mactor = vtkActor()
    mactor.SetMapper(mmapper)
    mactor.GetProperty().SetColor(0.75, 0.75, 0.78)
    mactor.GetProperty().SetSpecular(0.5)
    mactor.GetProperty().SetSpecularPower(30)
    mactor.VisibilityOff()
    renderer.AddActor(mactor)

    label = vtkTextActor()
    font = max(10, round(24 * args.size[1] / 720))
    label.GetTextProperty().SetFontSize(font)
    label.GetTextProperty().SetColor(1.0, 1.0, 1.0)
    label.SetPosition(font // 2, args.size[1] - font // 2 - font)
    renderer.AddActor2D(label)

    window = vtkRenderWindow()
    window.SetOffScreenRendering(1)
    window.SetSize(*args.size)
    window.AddRenderer(renderer)
    # No FXAA: with Mesa under Xvfb it leaves the 3D scene black.
    set_camera(renderer, bounds, args.view, args.azimuth, args.elevation, args.zoom)

    for k, f in enumerate(frames):
        poly, _ = (first_poly, None) if f is args.all_frames[0] else load_particles(f.particles)
        glyph.SetInputData(poly)
        if bactor is not None:
            if f.bonds:
                bpoly, _ = load_bonds(f.bonds)
                bmapper.SetInputData(bpoly)
                bactor.VisibilityOn()
            else:
                bactor.VisibilityOff()
        if f.meshes:
            mmapper.SetInputData(read_polydata(f.meshes))
            mactor.VisibilityOn()
        else:
            mactor.VisibilityOff()
        text = format_time(f.time)
        if args.label:
            text = args.label + "    " + text
        label.SetInput("%s    (frame %d, %d particles)" % (text, f.number, poly.GetNumberOfPoints()))
        window.Render()
        out = os.path.join(out_dir, "frame_%06d.png" % f.number)
        write_png(window, out, args.compression)
        if not args.quiet:
            print("%s: [%d/%d] %s -> %s" % (PROG, k + 1, len(frames), format_time(f.time), out))
    window.Finalize()
    return speed_lo, speed_hi, strain_max if have_bonds else None


# ----------------------------------------------------------------------------

def restart_under_xvfb(size):
    """Without an X display, re-runs this script under `xvfb-run -a`."""
    if os.environ.get("DISPLAY"):
        return
    if os.environ.get(_XVFB_GUARD):
        raise RenderError("still no DISPLAY under xvfb-run; cannot render")
    xvfb = shutil.which("xvfb-run")
    if xvfb is None:
        raise RenderError("no X display (DISPLAY is not set) and xvfb-run is not installed: "
                          "install the Debian packages xvfb and xauth, or run under an X server")
    os.environ[_XVFB_GUARD] = "1"
    screen = "-screen 0 %dx%dx24" % (max(size[0], 1280), max(size[1], 1024))
    os.execv(xvfb, [xvfb, "-a", "-s", screen, sys.executable,
                    os.path.abspath(__file__)] + sys.argv[1:])


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="render_frames.py",
        description="Render the VTK frames of a dem_torus run (particles.pvd, bonds.pvd) to "
                    "PNG: particles as spheres of their diameter coloured by speed |v|, bonds "
                    "as lines coloured by axial strain, the time as a label, one fixed camera.",
        epilog="Needs an X server for VTK's OpenGL: run it as `xvfb-run -a python3 "
               "tools/render_frames.py RUN_DIR`; without DISPLAY the script restarts itself "
               "under `xvfb-run -a` when that is installed. Colour ranges are the same for "
               "all frames rendered in one call. Exit status: 0 on success, 1 on a bad or "
               "missing input or an output error, 2 on bad usage.")
    parser.add_argument("run_dir", metavar="RUN_DIR",
                        help="the run's output folder (holds particles.pvd, bonds.pvd)")
    parser.add_argument("-o", "--output-dir", metavar="OUT_DIR",
                        help="folder for frame_NNNNNN.png (default: RUN_DIR/png; created)")
    parser.add_argument("--every", type=int, default=1, metavar="N",
                        help="render every N-th frame of the selection (default 1: all)")
    parser.add_argument("--frames", type=parse_frame_list, metavar="LIST",
                        help="frame numbers to render (the NNNNNN of particles_NNNNNN.vtp): "
                             "numbers, ranges a-b and 'last', comma-separated, e.g. 0,10-20,last")
    parser.add_argument("--size", type=parse_size, default=(1280, 720), metavar="WxH",
                        help="image size in pixels (default 1280x720)")
    parser.add_argument("--view", choices=["auto", "x", "y", "z", "iso"], default="auto",
                        help="camera direction: along the x, y or z axis (looking from +x, -y, "
                             "+z), an oblique 'iso' view, or 'auto': along the axis in which "
                             "the first frame is thinnest (default)")
    parser.add_argument("--azimuth", type=float, default=0.0, metavar="DEG",
                        help="then turn the camera by DEG about the view-up axis")
    parser.add_argument("--elevation", type=float, default=0.0, metavar="DEG",
                        help="then tilt the camera up by DEG")
    parser.add_argument("--zoom", type=float, default=1.0, metavar="F",
                        help="zoom factor after fitting the camera (default 1)")
    parser.add_argument("--fit", choices=["first", "all"], default="first",
                        help="fit the camera to the first frame of the run (default) or to "
                             "all rendered frames (for bodies that fly far)")
    parser.add_argument("--color-by", choices=["speed", "fragment", "n_broken"], default="speed",
                        help="colour the particles by speed |v| (default), by fragment (the pieces of a "
                             "run whose bonds fail, each its own colour) or by n_broken (failed bonds)")
    parser.add_argument("--speed-range", type=float, nargs=2, metavar=("MIN", "MAX"),
                        help="colour range of the speed (default: min..max over the frames)")
    parser.add_argument("--strain-range", type=float, metavar="S",
                        help="colour range -S..S of the axial strain (default: largest "
                             "|axial_strain| over the frames)")
    parser.add_argument("--no-bonds", action="store_true", help="leave out the bonds")
    parser.add_argument("--bond-width", type=float, default=2.0, metavar="PX",
                        help="bond line width in pixels (default 2)")
    parser.add_argument("--label", metavar="TEXT", help="text put before the time label")
    parser.add_argument("--compression", type=int, default=9, choices=range(10),
                        metavar="0-9", help="PNG compression level (default 9)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no line per frame")
    args = parser.parse_args(argv)
    global COLOR_BY
    COLOR_BY = args.color_by
    if args.every < 1:
        parser.error("--every must be >= 1, got %d" % args.every)
    if args.zoom <= 0.0:
        parser.error("--zoom must be > 0")
    if args.speed_range is not None and not args.speed_range[1] > args.speed_range[0]:
        parser.error("--speed-range needs MIN < MAX")
    if args.strain_range is not None and not args.strain_range > 0.0:
        parser.error("--strain-range must be > 0")

    out_dir = args.output_dir or os.path.join(args.run_dir, "png")
    try:
        all_frames = find_frames(args.run_dir)
        frames = select_frames(all_frames, args.frames, args.every)
        restart_under_xvfb(args.size)
        args.all_frames = all_frames
        try:
            os.makedirs(out_dir, exist_ok=True)
        except OSError as exc:
            raise RenderError("cannot create %s: %s" % (out_dir, exc.strerror or exc))
        lo, hi, smax = render(frames, args, out_dir)
    except RenderError as exc:
        print("%s: error: %s" % (PROG, exc), file=sys.stderr)
        return 1
    except OSError as exc:
        print("%s: error: %s" % (PROG, exc), file=sys.stderr)
        return 1
    print("%s: %d frame(s) -> %s (speed %.4g..%.4g%s)"
          % (PROG, len(frames), out_dir, lo, hi,
             ", axial strain -%.3g..%.3g" % (smax, smax) if smax is not None else ", no bonds"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
