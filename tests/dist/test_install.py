#!/usr/bin/env python3
"""[install] What the README's install step builds: `meson setup` with no option configures btfslim, its
manual and its completions, and no test suite nor the benchmark's tools (they are built where asked for,
-Dtests=all, as scripts/setup.sh does); -Dtests=unit adds only the unit tests. Each setup is made in a
fresh directory from this source tree (meson writes nothing into it) and read with `meson introspect`;
nothing is compiled."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from runner import SOURCE_DIR, Checks, temp_dir  # noqa: E402

c = Checks()
root = temp_dir("btfslim-install-")


def targets(options):
    """The targets of a fresh setup with `options`, as (directory of their meson.build, name)."""
    build = os.path.join(root, "build" + "".join(options).replace("=", "-"))
    setup = subprocess.run(["meson", "setup", build, SOURCE_DIR, "--prefix=/usr"] + options,
                           capture_output=True, text=True)
    if not c.check(setup.returncode == 0, f"meson setup {' '.join(options)}", setup.stdout[-3000:] + setup.stderr[-3000:]):
        sys.exit(c.finish())
    listed = json.loads(subprocess.run(["meson", "introspect", build, "--targets"], capture_output=True, text=True,
                                       check=True).stdout)
    return {(os.path.relpath(os.path.dirname(t["defined_in"]), SOURCE_DIR), t["name"]) for t in listed}


# The README's step: an install.
install = targets([])
dirs = sorted({d for d, _ in install})
c.check((".", "btfslim") in install, "the default setup builds btfslim", str(sorted(install)))
c.equal([d for d in dirs if d.split(os.sep)[0] in ("tests", "bench", "fuzz")], [],
        "the default setup builds no test, benchmark or fuzz target")
c.check(len(install) < 20, f"the default setup has a handful of targets ({len(install)})", str(sorted(install)))

# The readme's install line is that setup, with nothing to ask for tests.
readme = open(os.path.join(SOURCE_DIR, "README.md")).read()
c.check("meson setup build --prefix=/usr && ninja -C build && meson install -C build" in readme,
        "README: the install step is a plain meson setup")
c.check("-Dtests=none` is the default" in readme, "README: the install step says the tests are not built")

# Asked for: the unit tests alone, or everything the test scripts and the benchmark use.
unit = targets(["-Dtests=unit"])
c.check(("tests", "btfslim-unit-tests") in unit, "-Dtests=unit builds the unit tests")
c.check(("tests", "btfslim-e2e-tests") not in unit, "-Dtests=unit builds no end-to-end tests")
everything = targets(["-Dtests=all"])
for want in [("tests", "btfslim-e2e-tests"), ("tests", "btfslim-unit-tests"), ("bench", "btf_parse")]:
    c.check(want in everything, f"-Dtests=all builds {want[1]}")

# The scripts that need the tests ask for them.
setup_sh = open(os.path.join(SOURCE_DIR, "scripts", "setup.sh")).read()
c.check("-Dtests=all" in setup_sh, "scripts/setup.sh configures -Dtests=all")

sys.exit(c.finish())
