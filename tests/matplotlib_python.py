"""The plotting checks' interpreter: ctest runs them as `python3 CHECK.py`, and PATH's python3 may
lack matplotlib where the system one has it (python3-matplotlib, which scripts/ensure_deps.sh
installs for /usr/bin/python3). require() re-runs the check under /usr/bin/python3 then, as
`decode-bench plot` picks its python; with no python3 with matplotlib it fails with the fix."""
import os
import sys


def require():
    try:
        import matplotlib  # noqa: F401
        return
    except ImportError:
        pass
    system = "/usr/bin/python3"
    if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system):
        os.execv(system, [system] + sys.argv)
    print("no python3 with matplotlib (install python3-matplotlib)")
    sys.exit(1)
