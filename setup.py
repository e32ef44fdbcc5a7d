"""Build hook: compile the replay, the audit's hot loop, with Cython.

`auditor/game/replay.py` and the modules it is cut into (`COMPILED`) are
plain Python and stay the one source of the game's rules; each one's `.pxd`
only adds C types to it (Cython's "pure Python mode"), so the compiled
modules and the sources can never say different things. Where no C compiler
is at hand the build goes on without it and the same replay runs uncompiled,
much slower (a warning says so at install time;
`auditor.game.replay.COMPILED` tells which one runs).
Set AUDITOR_NO_COMPILE=1 to skip compiling on purpose.

It also compiles the HTML report's template into the package being built
(`auditor/report/page.py`), so an installed auditor does not compile it in
every process; where jinja2 cannot be imported at build time, or in an
editable install, the template is compiled at run time instead, as before.
"""

import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class build_py_and_page(build_py):
    """The package's files, and the HTML report's templates compiled beside them."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):  # the checkout is the package
            return
        sys.path.insert(0, str(HERE))  # (this checkout's auditor, for its page module)
        try:
            from auditor.report.page import write_all_compiled
        except ImportError:  # no jinja2 where the package is built: compiled at run time
            return
        finally:
            sys.path.remove(str(HERE))
        write_all_compiled(Path(self.build_lib) / "auditor" / "report" / "templates")


#: The replay's modules, compiled each from its `.py` with the C types of its
#: `.pxd` (as `auditor.game.replay.COMPILED_MODULES` lists them).
COMPILED = ("buffers", "dice_places", "wagers", "table_state", "replay")

ext_modules = []
if not os.environ.get("AUDITOR_NO_COMPILE"):
    try:
        from Cython.Build import cythonize
    except ImportError:  # built without the build requirements: stay pure Python
        pass
    else:
        ext_modules = cythonize(
            [Extension(f"auditor.game.{name}", [f"auditor/game/{name}.py"])
             for name in COMPILED],
            compiler_directives={"language_level": 3, "annotation_typing": False},
            quiet=True,
        )
        for ext in ext_modules:
            ext.optional = True  # no compiler: warn and keep the Python module

setup(ext_modules=ext_modules, cmdclass={"build_py": build_py_and_page})
