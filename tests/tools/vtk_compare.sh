# Sourced by the MPI tests: compare_vtk REF_DIR DIR reads both VTK series
# back with VTK's readers (compare_vtk_series.py: parallel frames with
# vtkXMLPPolyDataReader) and compares them by particle id, bit for bit.
# Needs a python3 with VTK and numpy ($PYTHON, else Debian's, else PATH's;
# Debian: python3-vtk9).
vtk_python=""
for p in "${PYTHON:-}" /usr/bin/python3 python3; do
  [ -n "$p" ] || continue
  if "$p" -c "import numpy, vtkmodules.vtkIOXML" >/dev/null 2>&1; then vtk_python=$p; break; fi
done
[ -n "$vtk_python" ] || { echo "FAIL: no python3 with VTK and numpy (Debian: python3-vtk9)"; exit 2; }
compare_vtk() {  # compare_vtk REF_DIR DIR [LOG]: 0 if equal, else prints why
  local log=${3:-/dev/null}
  if ! "$vtk_python" "$(dirname "${BASH_SOURCE[0]}")/compare_vtk_series.py" "$1" "$2" >"$log" 2>&1; then
    echo "    $(tail -1 "$log")"
    return 1
  fi
}
