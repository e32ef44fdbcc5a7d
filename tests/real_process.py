"""Run `auditor` in a real process, optionally under a memory cap, for the
hostile inputs whose failure is a crash or exhausted memory (which a test
runner in the same process could not survive or see)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

#: What the interpreter with pandas, pyarrow and numpy loaded takes of
#: address space (pyarrow's allocator reserves a lot up front): under this cap
#: a run that blows up on hostile input fails fast instead of eating the
#: machine.
DEFAULT_CAP_MIB = 1024



def run_real(*args, memory_mib: int | None = DEFAULT_CAP_MIB, timeout: float = 120,
             cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`python -P -m auditor ARGS...` in a child process whose address space
    is capped at `memory_mib` (None: no cap). The package under test is the
    installed one, as for the rest of the suite."""
    env = dict(os.environ)  # (-P: the installed package, as the rest of the suite)

    def cap():
        if memory_mib is not None:
            limit = memory_mib << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run([sys.executable, "-P", "-m", "auditor", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, check=False,
                          preexec_fn=cap, env=env, cwd=cwd)
