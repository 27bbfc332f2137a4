"""Shared start-up of the tools: Debian's python3-matplotlib and python3-vtk9
live in /usr/lib/python3/dist-packages, which a python3 from
pyenv/conda/venv does not see, so a tool whose imports fail reruns itself
once with /usr/bin/python3 before giving up."""

import os
import sys

SYSTEM_PYTHON = "/usr/bin/python3"
_REEXEC_GUARD = "DEM_TOOLS_REEXEC"


def rerun_or_exit(script, prog, exc, package_hint):
    """After an ImportError `exc` in `script`: exec the script again with the
    system Python (once), else exit naming the missing module and package."""
    if (os.environ.get(_REEXEC_GUARD) is None and os.path.exists(SYSTEM_PYTHON)
            and os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON)):
        os.environ[_REEXEC_GUARD] = "1"
        # The program that is running, which need not be `script`: a tool
        # that imports another (compare_bending.py imports plot_fracture)
        # must rerun itself, not the module it imported.
        program = sys.argv[0] if sys.argv and os.path.isfile(sys.argv[0]) else script
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, os.path.abspath(program)] + sys.argv[1:])
    sys.exit("%s: cannot import %s (%s); install the Debian package %s"
             % (prog, exc.name, exc, package_hint))
