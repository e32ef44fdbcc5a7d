"""`--engine dask` against a real cluster started apart from the audit: a
`dask scheduler` and two `dask worker` processes (one thread each), the
audit a process of its own given `--scheduler`. Its reports are the
`--jobs 1` reports, byte for byte; a worker killed mid-run leaves either the
same reports (dask runs the lost tasks again on the other worker) or exit 2,
one line and no report; a worker that cannot see a log's path says so."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditor.errors import LogFileError
from auditor.generate import INJECTABLE, generate, write_log
from auditor.report.formats import REPORT_FORMATS
from auditor.run import AuditJob, run_audit, stream

distributed = pytest.importorskip("distributed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dask(*args: str, env: dict | None = None) -> subprocess.Popen:
    """`dask ARGS` as a process of its own (its output kept out of the test's)."""
    return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True, env=env)


@contextlib.contextmanager
def external_cluster(workers: int = 2, allowed_failures: int | None = None):
    """(scheduler address, {worker name: its process}): a scheduler on a free
    port (with `allowed_failures`: how often a task may lose its worker
    before dask gives up on it, dask's default 3) and `workers` workers
    without nannies (a killed worker stays dead), one thread each; every
    process is ended when the block ends."""
    address = f"tcp://127.0.0.1:{_free_port()}"
    env = dict(os.environ)
    if allowed_failures is not None:
        env["DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"] = str(allowed_failures)
    procs = [_dask("scheduler", "--host", "127.0.0.1", "--port", address.rsplit(":", 1)[1],
                   "--no-dashboard", env=env)]
    try:
        named = {f"w{k}": _dask("worker", address, "--nthreads", "1", "--no-nanny",
                                "--no-dashboard", "--name", f"w{k}")
                 for k in range(workers)}
        procs += named.values()
        with distributed.Client(address, timeout="60s") as client:
            client.wait_for_workers(workers, timeout=120)
        yield address, named
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait(timeout=30)


def _logs(folder: Path, files: int, tables: int, rolls: int) -> Path:
    """`files` files of `tables` tables each, every injectable code planted."""
    folder.mkdir()
    for j in range(files):
        log = generate(tables, rolls, seed=40 + j, inject=list(INJECTABLE),
                       first_table=1 + j * tables)
        write_log(log.table, folder / f"part-{j + 1}.parquet")
    return folder


#: `auditor check` with every input of several files audited a batch at a
#: time (as inputs over 16 MB are: `auditor.run.stream`), a file a batch.
BATCHED = ("import sys, auditor.run.stream as s; s.STREAM_MIN_BYTES = 0; s.STREAM_EVENTS = 1; "
           "from auditor.__main__ import run; sys.argv[0] = 'auditor'; run()")
#: `auditor check` with a Parquet or JSON Lines file of a few thousand rows
#: split into pieces (as files of millions are: `auditor.run.pieces`): one a
#: worker, or pieces of at most 30,000 rows.
SPLIT = ("import sys, auditor.run.pieces as p; p.PIECE_ROWS = p.TEXT_PIECE_ROWS = 1000; "
         "p.PIECE_BUDGET = 30000; "
         "from auditor.__main__ import run; sys.argv[0] = 'auditor'; run()")
#: How the client plans the work: a task per file and table, a batch of
#: files a task, or a piece of a file a task (Parquet, JSON Lines).
MODES = ["task-per-table", "batches", "split", "split-jsonl"]


def _auditor(mode: str | bool = False) -> list[str]:
    code = {"batches": BATCHED, True: BATCHED, "split": SPLIT, "split-jsonl": SPLIT}.get(mode)
    return [sys.executable, "-P", *(["-c", code] if code else ["-m", "auditor"])]


def _check(*args: str, batched: str | bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([*_auditor(batched), "check", *args, "-q"],
                          capture_output=True, text=True, timeout=600, check=False)


def _logs_for(mode: str, folder: Path, files: int, tables: int, rolls: int) -> Path:
    """`_logs`, or for "split" the same tables in one file (rows of one
    table together, row groups of 1,000 rows cutting through them); for
    "split-jsonl" in one JSON Lines file."""
    if not mode.startswith("split"):
        return _logs(folder, files, tables, rolls)
    import pyarrow.parquet as pq

    folder.mkdir()
    log = generate(files * tables, rolls, seed=40, inject=list(INJECTABLE))
    if mode == "split-jsonl":
        write_log(log.table, folder / "night.jsonl")
    else:
        pq.write_table(log.table, folder / "night.parquet", row_group_size=1000)
    return folder


def _every_format(out: Path) -> list[str]:
    """Every format that writes a file into `out`."""
    return ["--out", str(out), *[a for f in REPORT_FORMATS.values() if f.files
                                 for a in ("--format", f.name)]]


def _report(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def _same_reports(dask_out: Path, local_out: Path) -> None:
    local, remote = _report(local_out), _report(dask_out)
    assert "findings.parquet" in local and len(local) > 5
    assert sorted(remote) == sorted(local)
    assert [n for n in local if remote[n] != local[n]] == []


@pytest.mark.parametrize("batched", MODES)
def test_an_external_cluster_writes_the_jobs_1_reports_byte_for_byte(tmp_path, batched):
    logs = _logs_for(batched, tmp_path / "logs", files=3, tables=2, rolls=150)
    local = _check(str(logs), "-r", "nz-table-games", *_every_format(tmp_path / "local"))
    assert local.returncode == 1, local.stderr
    with external_cluster() as (address, _):
        remote = _check(str(logs), "-r", "nz-table-games", *_every_format(tmp_path / "dask"),
                        "--engine", "dask", "--scheduler", address, batched=batched)
    assert remote.returncode == 1, remote.stderr
    _same_reports(tmp_path / "dask", tmp_path / "local")


def _busy_worker(address: str, audit: subprocess.Popen, deadline: float) -> str | None:
    """The name of a worker auditing a table or a batch (a task of a second
    or so), once one is (None if the audit ends first)."""
    with distributed.Client(address, timeout="30s") as client:
        while audit.poll() is None and time.monotonic() < deadline:
            busy = [addr for addr, keys in client.processing().items()
                    if any(str(k).startswith(("_audit_table", "_audit_batch", "_audit_piece"))
                           for k in keys)]
            if busy:
                return client.scheduler_info()["workers"][busy[0]]["name"]
            time.sleep(0.02)
    return None


@pytest.mark.parametrize("batched", MODES)
@pytest.mark.parametrize("allowed_failures", [None, 0], ids=["retried", "given-up"])
def test_a_worker_killed_mid_run_leaves_the_same_reports_or_one_line_and_none(
        tmp_path, allowed_failures, batched):
    # dask's default: the killed worker's tasks run again on the other one,
    # and the audit completes; allowed-failures 0: dask gives up on the
    # task at once, and the audit stops with exit 2, one line, no report.
    logs = _logs_for(batched, tmp_path / "logs", files=4, tables=2, rolls=2500)
    local = _check(str(logs), "-r", "nz-table-games", *_every_format(tmp_path / "local"))
    assert local.returncode == 1, local.stderr
    out = tmp_path / "dask"
    with external_cluster(allowed_failures=allowed_failures) as (address, workers):
        audit = subprocess.Popen(
            [*_auditor(batched), "check", str(logs), "-r", "nz-table-games",
             *_every_format(out), "-q", "--engine", "dask", "--scheduler", address],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            victim = _busy_worker(address, audit, time.monotonic() + 300)
            assert victim is not None and audit.poll() is None, "the audit ended before a kill"
            os.kill(workers[victim].pid, signal.SIGKILL)
            _stdout, stderr = audit.communicate(timeout=600)
        finally:
            if audit.poll() is None:
                audit.kill()
                audit.wait()
        assert workers[victim].wait(timeout=30) == -signal.SIGKILL
    if allowed_failures == 0:  # stopped: one line, and no report at all
        assert audit.returncode == 2, stderr
        assert len(stderr.strip().splitlines()) == 1, stderr
        assert stderr.startswith("error: dask gave up on task _audit_")
        assert "wrote no report" in stderr
        assert not out.exists() or not any(out.iterdir())
    else:  # completed on the other worker: the same reports
        assert audit.returncode == 1, stderr
        _same_reports(out, tmp_path / "local")


@pytest.mark.parametrize("batched", [False, True], ids=["task-per-table", "batches"])
def test_a_worker_that_cannot_see_a_log_says_so_in_one_line(tmp_path, monkeypatch, batched):
    if batched:  # planned by the client: its files audited a batch at a time
        monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
        monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
        monkeypatch.setattr(stream, "scan", lambda path, *options: stream.Scanned(
            frozenset({path.name}), 10))  # (the vanished file is not scanned either)
    logs = _logs(tmp_path / "logs", files=2, tables=1, rolls=40)
    from auditor.rules.ruleset import load_ruleset

    with external_cluster(workers=1) as (address, _):
        job = AuditJob.of([logs], load_ruleset("nz-table-games"), engine="dask",
                          scheduler=address)
        (logs / "part-2.parquet").unlink()  # found by the client, not there for the worker
        with pytest.raises(LogFileError) as raised:
            run_audit(job)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(str(logs / "part-2.parquet") + ": ")
    assert "dask worker" in message and "same absolute path" in message


@pytest.mark.parametrize("address", ["x", "tcp://", "127.0.0.1"])
def test_a_scheduler_address_dask_cannot_read_is_one_line(tmp_path, address):
    """(Was an internal error: dask's ValueError reading the address.)"""
    from builder import run_cli

    logs = _logs(tmp_path / "logs", files=1, tables=1, rolls=5)
    res = run_cli("check", logs, "-r", "nz-table-games", "--out", tmp_path / "out",
                  "--engine", "dask", "--scheduler", address)
    assert res.exit_code == 2, res.output
    assert res.output.startswith(f"error: --scheduler {address}: not a dask scheduler's "
                                 f"address (")
    assert res.output.rstrip().endswith("e.g. tcp://10.0.0.5:8786)")
    assert "internal error" not in res.output and not (tmp_path / "out").exists()
