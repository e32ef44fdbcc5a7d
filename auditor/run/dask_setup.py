"""Set-up of a local cluster's dask worker forked from the audit
(`auditor.run.dask_engine`, a dask preload: `dask_setup` runs in each worker
as it starts). A forked worker inherits the audit's open files, the report
folder's lock among them: it closes that lock (only the audit holds it) and
ends when the audit ends, however it ends (a SIGKILL included), as the
`--jobs` workers do (`auditor.run.local`)."""

from __future__ import annotations

import os

from auditor.atomic import release_inherited_locks
from auditor.compat import die_with_parent


def dask_setup(worker) -> None:  # (dask's preload signature: the worker unused)
    release_inherited_locks()
    die_with_parent(os.getppid())
