"""`--jobs` workers die with the audit that started them (issue 28): the
main process killed with SIGKILL (a CI hard timeout) leaves no worker
behind holding memory or the report folder's lock, and the next audit
into that folder runs and removes the temporary folders the killed one
left (`auditor.run.scratch`). The workers are stopped (SIGSTOP) before the parent
is killed, so that none can end on its own: only dying with the parent
ends them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditor.run import scratch

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc to find the workers")

AUDITOR = [sys.executable, "-m", "auditor"]


def children(pid: int) -> set[int]:
    out = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out |= {int(x) for x in fh.read().split()}
    except OSError:
        pass
    return out


def cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used (0 when gone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().split(")")[-1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("logs")
    for i in (1, 2):
        subprocess.run([*AUDITOR, "generate", "--tables", "2", "--rolls", "3000",
                        "--seed", str(i), "--first-table", str(2 * i),
                        "--out", str(folder / f"n{i}.csv")], check=True, capture_output=True)
    return folder


#: --jobs's workers, and dask's local cluster's (forked from the audit too).
ENGINES = pytest.mark.parametrize("engine", [[], ["--engine", "dask"]], ids=["jobs", "dask"])


def own_temporary_space(tmp_path: Path) -> dict[str, str]:
    """An environment whose TMPDIR is a fresh folder, to see what is left there."""
    (tmp_path / "tmp").mkdir()
    return {**os.environ, "TMPDIR": str(tmp_path / "tmp")}


@ENGINES
def test_workers_die_with_a_killed_parent_and_free_the_report_folder(logs, tmp_path, engine):
    out = tmp_path / "out"
    env = own_temporary_space(tmp_path)
    parent = subprocess.Popen([*AUDITOR, "check", str(logs), "--ruleset", "nz-table-games",
                               "--jobs", "2", *engine, "--out", str(out), "--format",
                               "parquet"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    workers: set[int] = set()
    try:
        # Until both workers are seen at work (CPU used: past their start,
        # where a worker arranges to die with its parent), or the audit ends.
        for _ in range(6000):
            workers = {c for c in children(parent.pid) if alive(c)}
            if len(workers) >= 2 and all(cpu_seconds(w) >= 0.03 for w in workers) \
                    or parent.poll() is not None:
                break
            time.sleep(0.005)
        assert workers and parent.poll() is None, "the audit ended before its workers were seen"
        for w in workers:
            os.kill(w, signal.SIGSTOP)
        parent.kill()
        parent.wait()
        for _ in range(500):
            if not any(alive(w) for w in workers):
                break
            time.sleep(0.02)
        left = [w for w in workers if alive(w)]
        assert left == [], f"workers outlived their parent: {left}"
    finally:
        for w in workers:
            if alive(w):
                os.kill(w, signal.SIGKILL)
    # (the dask cluster's folder at least; this input is too small for --jobs to spill)
    left_behind = sorted(p.name for p in (tmp_path / "tmp").iterdir())
    assert (left_behind or not engine) and all(n.startswith("auditor-") and f"-{parent.pid}-" in n
                               for n in left_behind), left_behind
    an_hour_ago = time.time() - scratch.STALE_SECONDS - 100  # (swept once unchanged so long)
    for name in left_behind:
        os.utime(tmp_path / "tmp" / name, (an_hour_ago, an_hour_ago))
    again = subprocess.run([*AUDITOR, "check", str(logs), "--ruleset", "nz-table-games",
                            "--jobs", "2", *engine, "--out", str(out), "--format", "parquet"],
                           capture_output=True, text=True, env=env, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "another audit is writing" not in again.stderr
    assert list((tmp_path / "tmp").iterdir()) == []  # the killed audit's folders swept


@ENGINES
def test_an_audit_with_workers_left_alone_ends_whole(logs, tmp_path, engine):
    """The twin: the same audit, not killed, writes its report and leaves
    no worker."""
    run = subprocess.Popen([*AUDITOR, "check", str(logs), "--ruleset", "nz-table-games",
                            "--jobs", "2", *engine, "--out", str(tmp_path / "out"), "--format",
                            "parquet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=own_temporary_space(tmp_path))
    seen: set[int] = set()
    while run.poll() is None:
        seen |= children(run.pid)
        time.sleep(0.01)
    assert run.returncode == 0, run.stderr.read()
    assert (tmp_path / "out" / "findings.parquet").is_file()
    assert not any(alive(w) for w in seen)
    # nothing left in TMPDIR: neither the dice rows' folder nor dask's own
    assert list((tmp_path / "tmp").iterdir()) == []


@pytest.mark.parametrize("work", ["batches", "tables"])
def test_a_worker_killed_mid_run_stops_the_audit_with_one_line_and_no_report(
        logs, tmp_path, monkeypatch, work):
    """A `--jobs` worker killed (by hand, or by the kernel short of memory)
    while it audits a batch of files, or a group of tables of logs loaded
    at once: the audit says so in one line and exits 2 (it read "internal
    error: BrokenProcessPool"), and writes no report; no worker is left."""
    from builder import run_cli

    from auditor.run import local

    if work == "batches":  # (Parquet files: a small input of them is audited in batches)
        folder = tmp_path / "parquet"
        for i in (1, 2):
            assert run_cli("generate", "--tables", "2", "--rolls", "300", "--seed", i,
                           "--first-table", 2 * i, "--out",
                           folder / f"n{i}.parquet").exit_code == 0
        name = "_audit_item"
    else:  # (no batches: the logs loaded at once, their tables shared out)
        folder = logs
        name = "audit_tables"
        monkeypatch.setattr(local.pieces, "split", lambda *args, **kw: None)
    parent = os.getpid()
    real = getattr(local, name)

    def killed(*args, **kw):
        if os.getpid() != parent:  # (in a forked worker)
            os.kill(os.getpid(), signal.SIGKILL)
        return real(*args, **kw)
    monkeypatch.setattr(local, name, killed)
    before = children(parent)
    res = run_cli("check", folder, "--ruleset", "nz-table-games", "--jobs", "2",
                  "--out", tmp_path / "out", "--format", "parquet")
    assert res.exit_code == 2, res.output
    assert res.output.strip().splitlines()[-1] == (
        "error: a worker process of --jobs 2 died while auditing (killed by a signal, or by "
        "the system when memory ran short); the audit stopped and wrote no report: run it "
        "again, with fewer --jobs if memory is short")
    assert "Traceback" not in res.output and "internal error" not in res.output
    assert not (tmp_path / "out").exists()
    for _ in range(500):
        if not any(alive(w) for w in children(parent) - before):
            break
        time.sleep(0.02)
    assert not any(alive(w) for w in children(parent) - before)
