"""Report formats written side by side: under `--jobs N` (N > 1), a run of
many findings writes each format that makes files in a process of its own,
at most N at once, the heaviest first.

Why: a format's work grows with the findings (each one's record, its JSON
line, its SARIF result, its JUnit detail), and it was all done in the audit's
main process once the workers had finished: at 53,000 findings, 3.4 s of
CPU, half of a `--jobs 2` run's, which no number of workers shortened. The
formats read the same finished audit and write files of their own, so they
can be written at once.

How: the writers are forked, so each inherits the audit's result as it
stands (nothing is sent to them); each writes its files as it would in the
main process (`atomic_path`) but holds back their renames
(`auditor.atomic.held_renames`) and hands them to the main process, which
puts them in its own `commit_together` block in the order the formats were
asked for: the report folder is swapped in whole or not at all, as before,
and its bytes are those written one format after another. A writer that
fails has its files removed; the error of the first format (in the order
asked) that failed is raised, and the files of the others are removed too.
A writer killed by a signal ends the run with that error (its half-written
temporary file lies in the staging folder, which is removed with it).

Where processes cannot be forked, or under APART_FINDINGS findings (where
starting a process costs about what it saves), the formats are written one
after another in the main process.
"""

from __future__ import annotations

import gc
import os
from concurrent.futures import BrokenExecutor, ProcessPoolExecutor
from pathlib import Path

from auditor.atomic import adopt_renames, discard_renames, held_renames, release_inherited_locks
from auditor.compat import die_with_parent, fork_context, stop_pool
from auditor.errors import OutputError
from auditor.report.records import column_texts, finding_columns, finding_statuses, record_texts
from auditor.report.rollups import rollups_of
from auditor.report.shared import sharing

#: Findings from which the formats are written side by side (`--jobs` > 1).
APART_FINDINGS = 10_000

#: The formats in the order their writers start: the heaviest first, so that
#: the last to finish is not one started late (measured at 53,000 findings,
#: each alone with what it derives: html 1.0 s, csv, sarif 0.45 s, junit and
#: json 0.4 s, parquet 0.1 s).
HEAVIEST_FIRST = ("html", "csv", "sarif", "junit", "json", "parquet")


def _page_carries(result) -> bool:
    """Whether the HTML page reads the record texts: only when it carries
    the findings it does not list (decision 119); past that, made before
    the fork they would hold up every writer for the json format's sake."""
    from auditor.report.html import carries_unlisted  # (the page's modules: only for it)

    return carries_unlisted(result.findings)


#: What several formats derive from the same audit, and which formats do:
#: worked out once in the main process before the writers fork (they
#: inherit it) when two or more of those formats are written apart, rather
#: than by each writer again (the records' columns and their JSON texts
#: are 0.2 s at 53,000 findings, and five formats read them). It costs the
#: run no wall time: the writer that needs it most (the HTML page) would
#: wait for it anyway. Each with the formats that read it, and for a format
#: that reads it only sometimes, when (a test of the result; None: always).
SHARED = (
    (lambda result: (finding_columns(result.findings), finding_statuses(result.findings)),
     dict.fromkeys(("html", "json", "sarif", "junit", "csv"))),
    (lambda result: column_texts(result.findings), dict.fromkeys(("html", "json", "sarif",
                                                                  "junit"))),
    (lambda result: record_texts(result.findings), {"html": _page_carries, "json": None}),
    (rollups_of, dict.fromkeys(("parquet", "html", "json"))),
)


#: What the forked writers inherit: (result, meta, folder, options).
_JOB: tuple | None = None


def apart_formats(result, formats, workers: int) -> tuple[str, ...]:
    """Which of `formats` (each a format making files) to write side by side
    in up to `workers` processes: none when one process would do as well."""
    if workers < 2 or len(formats) < 2 or fork_context() is None:
        return ()
    if len(result.findings) < APART_FINDINGS:
        return ()
    return tuple(formats)


def write_apart(result, meta: dict, out: Path, formats, options: dict,
                workers: int) -> dict[str, list[str]]:
    """Write each of `formats` in a forked process, at most `workers` at
    once: the files each wrote (by format); their renames held by the
    enclosing `commit_together` block (or done now, outside one). Called
    inside a `sharing()` block, which the writers share (SHARED)."""
    global _JOB
    order = sorted(formats, key=lambda f: HEAVIEST_FIRST.index(f)
                   if f in HEAVIEST_FIRST else len(HEAVIEST_FIRST))
    for derive, users in SHARED:  # (inside the caller's `sharing()` block: inherited)
        readers = [f for f in order if f in users]
        if len(readers) > 1 and sum(users[f] is None or users[f](result) for f in readers) > 1:
            derive(result)
    _JOB = (result, meta, out, options)
    pool = ProcessPoolExecutor(max_workers=min(workers, len(order)),
                               mp_context=fork_context(),
                               initializer=_writer_start, initargs=(os.getpid(),))
    outcomes: dict[str, tuple] = {}
    try:
        futures = {name: pool.submit(_write_format, name) for name in order}
        for name, future in futures.items():
            try:
                outcomes[name] = ("written", *future.result())
            except Exception as exc:  # noqa: BLE001 - raised below, in the order asked
                outcomes[name] = ("failed", exc)
        pool.shutdown(wait=True)
    except BaseException:  # an interruption: no writer goes on, nothing is kept
        stop_pool(pool)
        _discard_written(outcomes)
        raise
    finally:
        _JOB = None
    failed = [name for name in formats if outcomes[name][0] == "failed"]
    if failed:
        _discard_written(outcomes)
        error = outcomes[failed[0]][1]
        if isinstance(error, BrokenExecutor):  # a writer was killed: say which went unwritten
            unwritten = [f for f in failed if isinstance(outcomes[f][1], BrokenExecutor)]
            raise OutputError(f"a process writing the reports ended before it had finished "
                              f"(killed?): {', '.join(unwritten)} not written; no report "
                              "was kept")
        raise error
    for name in formats:  # in the order asked, as writing them in turn holds them
        adopt_renames(outcomes[name][2])
    return {name: outcomes[name][1] for name in formats}


def _discard_written(outcomes: dict[str, tuple]) -> None:
    """The files of the writers that finished, removed (the run keeps none)."""
    for outcome in outcomes.values():
        if outcome[0] == "written":
            discard_renames(outcome[2])


def _write_format(name: str) -> tuple[list[str], list]:
    """In a writer: the format's files written, their renames held back."""
    from auditor.report.formats import REPORT_FORMATS  # (the module that imports this one)

    result, meta, out, options = _JOB
    module = REPORT_FORMATS[name].load()
    with held_renames() as pending, sharing():
        written = module.write(result, meta, out, **options.get(name, {}))
    return written, pending


def _writer_start(parent: int) -> None:
    """A writer dies with the audit and holds none of its folder locks; the
    objects it inherited are left out of its garbage collections (they are
    the audit's, alive in it: traversing them again in each writer, and
    copying the pages it touched, was CPU spent for nothing)."""
    die_with_parent(parent)
    release_inherited_locks()
    gc.freeze()
