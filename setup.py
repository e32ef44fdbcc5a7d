"""Build hook: compile the replay, the audit's hot loop, with Cython.

`auditor/game/replay.py` is plain Python and stays the one source of the
game's rules; `auditor/game/replay.pxd` only adds C types to it (Cython's
"pure Python mode"), so the compiled module and the source can never say
different things. Where no C compiler is at hand the build goes on without it
and the same replay runs uncompiled, itself about fifteen times slower (a warning says so
at install time; `auditor.game.replay.COMPILED` tells which one runs).
Set AUDITOR_NO_COMPILE=1 to skip compiling on purpose.
"""

import os

from setuptools import Extension, setup

ext_modules = []
if not os.environ.get("AUDITOR_NO_COMPILE"):
    try:
        from Cython.Build import cythonize
    except ImportError:  # built without the build requirements: stay pure Python
        pass
    else:
        ext_modules = cythonize(
            [Extension("auditor.game.replay", ["auditor/game/replay.py"])],
            compiler_directives={"language_level": 3, "annotation_typing": False},
            quiet=True,
        )
        for ext in ext_modules:
            ext.optional = True  # no compiler: warn and keep the Python module

setup(ext_modules=ext_modules)
