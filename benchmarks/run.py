"""Benchmark `auditor check` end to end: events per second of CPU time, wall
time, peak memory and the time of each stage, per log size, format and engine.

    python benchmarks/run.py                      # 1M and 10M events, Parquet
    python benchmarks/run.py --sizes 1M --formats parquet,csv
    python benchmarks/run.py --sizes 200k --engines jobs1,jobs2
    python benchmarks/run.py --sizes 50M --files 20 --engines jobs1   # a folder of 20 files
    python benchmarks/run.py --sizes 1M --days 7 --engines jobs1,dask  # tables open 7 days
    python benchmarks/run.py --sizes 3.8M --files 8 --engines scale --repeat 3  # scale-out
    python benchmarks/run.py --sizes 7M --files 9 --skew --engines jobs2  # one big file last
    python benchmarks/run.py --sizes 3.6M --sites 10 --tables 20 --engines scale  # 10 casinos
    python benchmarks/run.py --sizes 8.5M --tables 4 --days 120 --nightly --engines jobs1,jobs2
    python benchmarks/run.py --sizes 3.6M --tables 8 --by-time --engines jobs1,jobs2,dask2

`--engines scale` is, in one run: the read floor (`floor`: a fresh process
that only reads every file with pyarrow), `--jobs 1`, `--jobs N` for every N
up to the machine's cores and dask with as many local workers (`jobsN`,
`daskN` name any N); `--repeat R` runs that list R times, interleaved, and
prints the medians and the medians of each round's ratios to `--jobs 1`.

Logs are made by `auditor generate` (a realistic lawful log with every
selection of violations planted, 4 tables per million events) and kept in
`--cache` (default ~/.cache/auditor-benchmarks) for the next run. Each
audit runs in a fresh process doing what `auditor check` does (load, replay,
checks, every report but the GitHub annotations), so one run's memory never
inflates another's:

- `cpu_s`: user + system time of that process and all it started (worker
  processes included), interpreter start-up and imports included;
- `wall_s`: elapsed time of the same;
- `peak_rss_mb`: the audit process's own peak resident memory; with psutil
  installed, `peak_tree_mb` is the peak of it and its workers together
  (proportional set size, so pages a forked worker shares with its parent
  count once; sampled every 0.2 s), and `peak_worker_mb` the largest
  resident size any one worker reached (the memory a worker needs);
- `main_cpu_s`: the audit process's own CPU (user + system, its threads
  included: with dask's local cluster, the scheduler's), without its
  workers': `main_share` is it over `cpu_s`; `main_stages` splits it into
  `start-up` (the interpreter and the imports), `audit` (the plan, the
  workers' pool or cluster, the merge) and `report` (every report);
- `stages`: seconds per stage from the audit's `timings` hook (`load`,
  `replay`, `checks`, `report`; with workers, `parallel` is the elapsed time
  of the shared part and `replay`/`checks` are summed over the workers).

Results are printed as a table and written as JSON (--out, default
benchmarks/results.json). Nothing here is a test: timings are never asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
EVENTS_PER_ROLL = 12.7  # what the generator writes per valid roll, on average
ENGINES = {  # name -> (engine, jobs); also jobsN and daskN for any N, and "floor"
    "jobs1": ("local", 1),
    "jobs2": ("local", 2),
    "dask": ("dask", 2),
}
FLOOR = "floor"  # pyarrow reading every file, nothing else: what no audit can beat


def engine_spec(name: str) -> tuple[str, int]:
    """(engine, jobs) of an engine's name: jobs1, jobsN, dask (2 workers),
    daskN; "floor" is ("floor", 1)."""
    if name in ENGINES:
        return ENGINES[name]
    if name == FLOOR:
        return FLOOR, 1
    for prefix, engine in (("jobs", "local"), ("dask", "dask")):
        if name.startswith(prefix) and name[len(prefix):].isdigit() and int(name[len(prefix):]):
            return engine, int(name[len(prefix):])
    raise ValueError(name)


def scale_engines(cpus: int) -> list[str]:
    """The scale-out set: the read floor, --jobs 1 .. cores, dask on as many."""
    return [FLOOR, *(f"jobs{n}" for n in range(1, cpus + 1)), f"dask{cpus}"]
INJECT = ("dice.set_size,offer.order,settle.wrong_outcome,settle.missing,noroll.missing,"
          "call.wrong_total,shooter.ineligible,dice.not_in_bowl,log.sequence_gap,"
          "log.out_of_order")


def parse_size(text: str) -> int:
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def size_label(n: int) -> str:
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    return f"{n / 1_000_000:g}M" if n % 100_000 == 0 and n > 1_000_000 else f"{n // 1000}k"


def log_for(size: int, fmt: str, cache: Path, seed: int, files: int = 1,
            days: int = 1, tables: int | None = None, skew: bool = False,
            sites: int = 0, nightly: bool = False, by_time: bool = False) -> Path:
    """The cached generated log of about `size` events (made if missing): one
    file, or a folder of `files` files holding different tables (as a state's
    logs would be kept: a file per table and period); with `days` > 1 each
    table is opened and closed once a day (what dask audits a day a task).
    `tables` (default 4 per million events, at least 4) how many tables.
    `skew` (a folder): its last file is one table holding half the events,
    the other files share the other half (a large file that cannot be cut,
    sorting last: what the order work is handed out in decides). `sites` (a
    folder): that many casinos' folders, `casino-NN/night.FMT`, each holding
    the same table ids (T01 ...): audited with `--site-from-path`, as a
    regulator's many casinos are. `nightly` (with `days`): a folder of a
    file a night, each holding that night's session of every table (a
    casino's nightly exports, which the plan links into one group).
    `by_time` (one file): its rows in time order, the tables interleaved
    (a casino's export as its system writes it)."""
    tables = tables or max(4, size // 250_000)
    tables += -tables % (sites or (files - 1 if skew and files > 1 else files))
    rolls = max(1, round(size / tables / days / EVENTS_PER_ROLL))
    name = f"events-{size_label(size)}-t{tables}-s{seed}" + (f"-d{days}" if days > 1 else "")
    if sites:
        folder = cache / f"{name}-sites{sites}-{fmt}"
        for k in range(sites):
            _generate(folder / f"casino-{k + 1:02d}" / f"night.{fmt}", tables // sites, rolls,
                      seed + k, 1, days)
        return folder
    if nightly:
        return _nightly(cache / f"{name}.parquet", cache / f"{name}-nightly-{fmt}", fmt,
                        tables, rolls, seed, days)
    if files == 1 and by_time:
        return _by_time(cache / f"{name}.parquet", cache / f"{name}-by-time.{fmt}", tables,
                        rolls, seed, days)
    if files == 1:
        path = cache / f"{name}.{fmt}"
        _generate(path, tables, rolls, seed, 1, days)
        return path
    if skew:
        folder = cache / f"{name}-f{files}-skew-{fmt}"
        per_file = tables // (files - 1)
        half = max(1, round(size / 2 / per_file / (files - 1) / days / EVENTS_PER_ROLL))
        for j in range(files - 1):
            _generate(folder / f"part-{j + 1:03d}.{fmt}", per_file, half, seed + j,
                      1 + j * per_file, days)
        _generate(folder / f"part-{files:03d}.{fmt}", 1,
                  max(1, round(size / 2 / days / EVENTS_PER_ROLL)), seed + files - 1,
                  1 + tables, days)
        return folder
    folder = cache / f"{name}-f{files}-{fmt}"
    per_file = tables // files
    for j in range(files):
        _generate(folder / f"part-{j + 1:03d}.{fmt}", per_file, rolls, seed + j, 1 + j * per_file,
                  days)
    return folder


def _nightly(source: Path, folder: Path, fmt: str, tables: int, rolls: int, seed: int,
             days: int) -> Path:
    """The log of `source` (generated if missing) cut into a file a night
    (`auditor.generate.by_night`) in `folder`."""
    if folder.exists():
        return folder
    _generate(source, tables, rolls, seed, 1, days)
    print(f"cutting {source.name} into a file a night ...", flush=True)
    _apart(_write_nightly, source, folder, fmt)
    return folder


def _write_nightly(source: Path, folder: Path, fmt: str) -> None:
    import pyarrow.parquet as pq

    from auditor.generate import by_night, write_log

    part = folder.with_name(folder.name + ".part")
    for k, night in enumerate(by_night(pq.read_table(source))):
        write_log(night, part / f"night-{k + 1:03d}.{fmt}")
    part.rename(folder)


def _by_time(source: Path, path: Path, tables: int, rolls: int, seed: int, days: int) -> Path:
    """The log of `source` (Parquet, generated if missing) written to `path`
    (any format) with its rows in time order, ties by table."""
    if path.exists():
        return path
    _generate(source, tables, rolls, seed, 1, days)
    print(f"writing {source.name} in time order ...", flush=True)
    _apart(_write_by_time, source, path)
    return path


def _write_by_time(source: Path, path: Path) -> None:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from auditor.generate import write_log

    log = pq.read_table(source)
    part = path.with_name(path.name + ".part" + path.suffix)
    write_log(log.take(pc.sort_indices(log, [("ts", "ascending"), ("table_id", "ascending")])),
              part)
    part.rename(path)


def _apart(func, *args) -> None:
    """`func(*args)` in a process of its own (spawned): what it holds never
    stays in this one, whose resident peak every audit started from it
    would carry (Linux keeps a process's peak across the fork and exec of a
    child, in the child's own `ru_maxrss`)."""
    import multiprocessing

    child = multiprocessing.get_context("spawn").Process(target=func, args=args)
    child.start()
    child.join()
    if child.exitcode:
        raise SystemExit(f"writing the log failed ({child.exitcode})")


def _generate(path: Path, tables: int, rolls: int, seed: int, first_table: int,
              days: int = 1) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    print(f"generating {path.name} ({tables} tables x {days} day(s) x {rolls} rolls) ...",
          flush=True)
    subprocess.run([sys.executable, "-m", "auditor", "generate", "--tables", str(tables),
                    "--rolls", str(rolls), "--seed", str(seed), "--first-table",
                    str(first_table), "--out", str(path), "--inject", INJECT,
                    *(["--days", str(days)] if days > 1 else [])],
                   check=True, stdout=subprocess.DEVNULL)


# --- one audit, in its own process ---------------------------------------------------

#: The reports written by default: all of them but the GitHub annotations
#: (which go to standard output).
REPORTS = ("parquet", "html", "json", "junit", "sarif")


def audit_once(path: str, engine: str, jobs: int, ruleset_ref: str,
               reports: tuple[str, ...] = REPORTS, site_from_path: bool = False) -> dict:
    """What `auditor check PATH --ruleset R --engine E --jobs J --format ...`
    (`--site-from-path`) does, timed, every report written."""
    from auditor.report.formats import write_reports
    from auditor.report.provenance import provenance
    from auditor.rules.ruleset import load_ruleset

    try:
        from auditor.logs.memory import small_pages  # as `auditor check` does
    except ImportError:  # an older checkout
        try:
            from auditor.logs.load import small_pages
        except ImportError:
            small_pages = contextlib.nullcontext

    timings: dict[str, float] = {}
    main_cpu = {"start-up": _own_cpu()}  # the interpreter and the imports
    ruleset = load_ruleset(ruleset_ref)
    with small_pages():
        try:
            from auditor.run import run_audit
        except ImportError:  # an older checkout: the single-process audit, staged here
            result = _audit_staged(path, ruleset, timings)
        else:
            params = inspect.signature(run_audit).parameters
            extra = {}
            if "job" in params:  # one AuditJob carries the run's options
                from auditor.report.html import COLLECTOR
                from auditor.run import AuditJob

                try:  # what `auditor check` hands the engine (the dice tally too)
                    from auditor.report.formats import collector_for
                except ImportError:
                    try:  # an older checkout's place for it
                        from auditor.app.check import collector_for
                    except ImportError:  # older still
                        collector_for = None
                if collector_for is None:
                    collector = COLLECTOR if "html" in reports else None
                elif "apart" in inspect.signature(collector_for).parameters:
                    collector = collector_for(reports, ruleset,
                                              apart=jobs > 1 or engine == "dask")
                else:
                    collector = collector_for(reports)
                sited = {"site_from_path": True} if site_from_path else {}
                job = AuditJob.of([path], ruleset, jobs=jobs, engine=engine,
                                  collector=collector, **sited)
                result = run_audit(job, timings=timings)
            else:  # an older checkout: the options one by one
                if "collector" in params and "html" in reports:
                    from auditor.report.html import COLLECTOR
                    extra = {"collector": COLLECTOR}
                elif "html_digest" in params:  # an older checkout's flag for the same
                    extra = {"html_digest": "html" in reports}
                result = run_audit([path], ruleset, jobs=jobs, engine=engine,
                                   timings=timings, **extra)
        main_cpu["audit"] = _own_cpu()
        start = time.perf_counter()
        try:  # the regulator's view: gaming days, who answers (as `auditor check`)
            from auditor.audit.responsible import regulated
        except ImportError:  # an older checkout
            pass
        else:
            result = regulated(result)
        # (as `auditor check`: under --jobs N the formats may be written side by side)
        side = {"workers": jobs} if "workers" in inspect.signature(write_reports).parameters \
            else {}  # (an older checkout: one after another)
        with tempfile.TemporaryDirectory() as out:
            write_reports(result, provenance(result), Path(out), reports, **side)
        timings["report"] = time.perf_counter() - start
    main_cpu["report"] = _own_cpu()
    own = resource.getrusage(resource.RUSAGE_SELF)  # this process alone, not its workers
    try:
        from auditor.game.replay import COMPILED
    except ImportError:  # an older checkout
        COMPILED = False
    return {"events": int(result.logs.rows_replayed), "rows_read": int(result.logs.rows_read),
            "replay": "compiled" if COMPILED else "python",
            "findings": len(result.findings), "stages": timings,
            "peak_rss_mb": round(own.ru_maxrss / 1024, 1),
            "main_cpu_s": own.ru_utime + own.ru_stime,
            "main_stages": _differences(main_cpu)}


def _own_cpu() -> float:
    """This process's own CPU seconds so far (its threads, not its workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def _differences(marks: dict[str, float]) -> dict[str, float]:
    """Each mark's CPU since the one before (the first: since the start)."""
    out, before = {}, 0.0
    for name, at in marks.items():
        out[name] = round(at - before, 3)
        before = at
    return out


def read_floor(path: str) -> dict:
    """pyarrow reading every log file under `path`, whole, nothing else (the
    floor no audit can beat: the same bytes decoded once)."""
    import pyarrow as pa

    files = sorted(p for p in Path(path).rglob("*")
                   if p.is_file() and p.suffix in (".parquet", ".csv", ".jsonl", ".ndjson")) \
        if Path(path).is_dir() else [Path(path)]
    rows = 0
    for f in files:
        if f.suffix == ".parquet":
            import pyarrow.parquet as pq
            rows += pq.read_table(f).num_rows
        elif f.suffix == ".csv":
            import pyarrow.csv as pcsv
            rows += pcsv.read_csv(f).num_rows
        else:
            import pyarrow.json as pjson
            rows += pjson.read_json(f).num_rows
    del pa
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {"events": rows, "rows_read": rows, "replay": "-", "findings": 0, "stages": {},
            "peak_rss_mb": round(own.ru_maxrss / 1024, 1),
            "main_cpu_s": own.ru_utime + own.ru_stime}


def _as_the_program(audit):
    """`audit()` run as the `auditor` program runs its command
    (`auditor.run_as_program`), the modules it needs loaded first."""
    try:
        from auditor import run_as_program
    except ImportError:  # an older checkout: as it ran
        return audit()

    def load():
        import auditor.report.formats
        import auditor.run  # noqa: F401
        return audit

    return run_as_program(load)


def _audit_staged(path: str, ruleset, timings: dict[str, float]):
    # (the stages of an older checkout, where `auditor.run.core` held them)
    from auditor.checks import CHECKS  # noqa: I001 - `run.core`: an older checkout's module
    from auditor.checks.context import CheckContext
    from auditor.findings import finalize
    from auditor.game.replay import replay
    from auditor.logs.load import load_logs
    from auditor.run.core import AuditResult, stamp_hits

    t = time.perf_counter()
    logs = load_logs([path])
    timings["load"] = time.perf_counter() - t
    t = time.perf_counter()
    state = replay(logs.events, bar=ruleset.parameters["bar_number"])
    timings["replay"] = time.perf_counter() - t
    t = time.perf_counter()
    ctx = CheckContext(logs.events, state, logs.quarantine)
    parts = [stamp_hits(ctx, CHECKS[r.check].func(ctx, r.params), r, ruleset.id)
             for r in ruleset.rules]
    result = AuditResult(ruleset, logs, finalize(parts))
    timings["checks"] = time.perf_counter() - t
    return result


# --- the driver ----------------------------------------------------------------------

def run_one(path: Path, engine_name: str, ruleset: str, pythonpath: str | None,
            reports: tuple[str, ...] = REPORTS, site_from_path: bool = False) -> dict:
    engine, jobs = engine_spec(engine_name)
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--one", str(path), "--engine",
           engine, "--jobs", str(jobs), "--ruleset", ruleset, "--reports", ",".join(reports),
           *(["--site-from-path"] if site_from_path else [])]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True)
    peak = _watch_tree(proc.pid)
    out, _ = proc.communicate()
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"audit failed ({proc.returncode}): {' '.join(cmd)}")
    got = json.loads(out.strip().splitlines()[-1])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    got.update({
        "engine": engine_name, "jobs": jobs, "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
        "events_per_cpu_s": round(got["events"] / cpu), "events_per_wall_s":
        round(got["events"] / wall), "stages": {k: round(v, 2) for k, v in got["stages"].items()},
        "main_cpu_s": round(got["main_cpu_s"], 3),
        "main_share": round(got["main_cpu_s"] / cpu, 3),
    })
    peak.join()
    if peak.value:
        got["peak_tree_mb"] = round(peak.value / 2**20, 1)
    if getattr(peak, "worker", 0):
        got["peak_worker_mb"] = round(peak.worker / 2**20, 1)
    return got


class _Peak(threading.Thread):
    """Peak memory of a process and its descendants (psutil): the sum of
    their proportional set sizes (resident sizes where PSS is not known)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.value = pid, 0
        #: the largest resident size of any one process below the audit's
        #: (a `--jobs` or dask worker): what "memory per worker" means
        self.worker = 0

    def run(self) -> None:
        import psutil

        try:
            root = psutil.Process(self.pid)
            while root.is_running() and root.status() != psutil.STATUS_ZOMBIE:
                procs = [root, *root.children(recursive=True)]
                total = 0
                for p in procs:
                    try:
                        info = p.memory_full_info()
                        total += getattr(info, "pss", 0) or info.rss
                        if p is not root:
                            self.worker = max(self.worker, info.rss)
                    except psutil.Error:
                        pass
                self.value = max(self.value, total)
                time.sleep(0.2)
        except psutil.Error:
            pass


def _watch_tree(pid: int) -> threading.Thread:
    try:
        import psutil  # noqa: F401  (optional: only for the process tree's memory)
    except ImportError:
        t = threading.Thread(target=lambda: None)
        t.value = 0
        t.start()
        return t
    t = _Peak(pid)
    t.start()
    return t


def print_row(r: dict) -> None:
    s = r["stages"]
    stages = " ".join(f"{k}={s[k]:.2f}" for k in ("load", "replay", "checks", "report",
                                                   "parallel") if k in s)
    mem = f"{r['peak_rss_mb']:.0f}" + (f"/{r['peak_tree_mb']:.0f}"
                                       if "peak_tree_mb" in r else "")
    main = " ".join(f"{k}={v:.2f}" for k, v in r.get("main_stages", {}).items())
    print(f"{r['size']:>5} {r['format']:8} {r['engine']:6} {r['events']:>10,} "
          f"{r['events_per_cpu_s']:>9,} {r['cpu_s']:>7.2f} {r['wall_s']:>7.2f} {mem:>11} "
          f"{100 * r['main_share']:>5.0f}%  {stages}" + (f"  main: {main}" if main else ""),
          flush=True)


def _median(values: list[float]) -> float:
    v = sorted(values)
    return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2


def scale_table(engines: list[str], rounds: list[dict[str, dict]]) -> list[str]:
    """The scale-out table as Markdown: per engine the median wall and CPU
    seconds over the rounds, and the medians of each round's ratios to that
    round's `--jobs 1` (speed-up: its wall over this one's; CPU: this one's
    over its) and of the main process's own share of the CPU."""
    base = "jobs1" if "jobs1" in engines else None
    lines = [("| run | wall s | CPU s | speed-up | CPU / `--jobs 1` | main process's CPU "
              "| peak MB: main / a worker |"),
             "|---|---:|---:|---:|---:|---:|---:|"]
    for e in engines:
        rs = [r[e] for r in rounds]
        wall = _median([r["wall_s"] for r in rs])
        cpu = _median([r["cpu_s"] for r in rs])
        if base and e != FLOOR:
            speed = f"{_median([r[base]['wall_s'] / r[e]['wall_s'] for r in rounds]):.2f}x"
        else:
            speed = "-"
        ratio = f"{_median([r[e]['cpu_s'] / r[base]['cpu_s'] for r in rounds]):.2f}x" \
            if base else "-"
        share = "-" if e == FLOOR else f"{100 * _median([r['main_share'] for r in rs]):.0f} %"
        own = _median([r["peak_rss_mb"] for r in rs])
        workers = [r["peak_worker_mb"] for r in rs if "peak_worker_mb" in r]
        memory = f"{own:.0f} / {_median(workers):.0f}" if workers else f"{own:.0f}"
        lines.append(f"| {describe(e)} | {wall:.2f} | {cpu:.2f} | {speed} | {ratio} | {share} "
                     f"| {memory} |")
    return lines


def describe(engine_name: str) -> str:
    """How the table names a run."""
    if engine_name == FLOOR:
        return "pyarrow reading every file (the read floor)"
    engine, jobs = engine_spec(engine_name)
    if engine == "dask":
        return f"`--engine dask --jobs {jobs}` (local cluster)"
    return f"`--jobs {jobs}`"


def print_scale(path: Path, engines: list[str], rounds: list[dict[str, dict]]) -> None:
    events = next(r["events"] for r in rounds[0].values() if r["engine"] != FLOOR) \
        if any(e != FLOOR for e in engines) else rounds[0][engines[0]]["events"]
    print(f"\n{path.name}: {events:,} events, medians of {len(rounds)} round(s), "
          f"{os.cpu_count()} core(s), {time.strftime('%Y-%m-%d')}\n")
    print("\n".join(scale_table(engines, rounds)), flush=True)
    print("\n".join(paired_lines(engines, rounds)), flush=True)


def paired_lines(engines: list[str], rounds: list[dict[str, dict]]) -> list[str]:
    """Dask against `--jobs` with as many workers (medians of each round's
    ratios), and the main process's own CPU by part (medians): start-up
    (the interpreter and the imports), audit (plan, pool, merge), report."""
    lines = [""]
    for e in engines:
        engine, jobs = engine_spec(e) if e != FLOOR else ("", 0)
        local = f"jobs{jobs}"
        if engine == "dask" and local in engines:
            cpu = _median([r[e]["cpu_s"] / r[local]["cpu_s"] for r in rounds])
            wall = _median([r[e]["wall_s"] / r[local]["wall_s"] for r in rounds])
            lines.append(f"{describe(e)} / `--jobs {jobs}`: CPU {cpu:.2f}x, wall {wall:.2f}x")
    for e in engines:
        parts = [r[e].get("main_stages") for r in rounds]
        if e == FLOOR or not all(parts):
            continue
        shown = ", ".join(f"{k} {_median([p[k] for p in parts]):.3f}" for k in parts[0])
        lines.append(f"{describe(e)}, the main process's own CPU s: {shown}")
    return lines


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1M,10M", help="event counts, e.g. 200k,1M,10M")
    ap.add_argument("--formats", default="parquet", help="parquet, csv, jsonl (comma-separated)")
    ap.add_argument("--files", type=int, default=1,
                    help="split each log into this many files of different tables (a folder)")
    ap.add_argument("--tables", type=int,
                    help="tables in all (default: 4 per million events, at least 4)")
    ap.add_argument("--skew", action="store_true",
                    help="with --files: the last file one table of half the events, the "
                         "others sharing the rest")
    ap.add_argument("--sites", type=int, default=0,
                    help="a folder of this many casinos' folders, each a file of the same "
                         "table ids, audited with --site-from-path")
    ap.add_argument("--repeat", type=int, default=1,
                    help="run the engines this many times, interleaved (medians printed)")
    ap.add_argument("--days", type=int, default=1,
                    help="sessions per table, one a day (dask audits such a table a day "
                         "a task)")
    ap.add_argument("--nightly", action="store_true",
                    help="with --days: a file a night, each holding every table's session "
                         "of that night (a casino's nightly exports)")
    ap.add_argument("--by-time", action="store_true",
                    help="one file, its rows in time order (every table interleaved with "
                         "the others, as a casino's system writes them)")
    ap.add_argument("--engines", default=",".join(ENGINES),
                    help=f"of {', '.join(ENGINES)}, jobsN, daskN, floor, or scale: the "
                         "read floor, jobs1 .. jobs<cores> and dask<cores> (comma-separated)")
    ap.add_argument("--ruleset", default="nz-table-games")
    ap.add_argument("--reports", default=",".join(REPORTS),
                    help="report formats written by each audit (comma-separated)")
    ap.add_argument("--cache", type=Path, help="where generated logs are kept "
                    "(default: ~/.cache/auditor-benchmarks)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=HERE / "results.json")
    ap.add_argument("--append", action="store_true",
                    help="add these runs to those already in --out")
    ap.add_argument("--pythonpath", help="audit with the auditor found here (another checkout)")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--engine", default="local", help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--site-from-path", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one and args.engine == FLOOR:  # the read floor, in its own process
        print(json.dumps(read_floor(args.one)))
        return
    if args.one:  # a single audit, in the process the driver started
        print(json.dumps(_as_the_program(lambda: audit_once(
            args.one, args.engine, args.jobs, args.ruleset, tuple(args.reports.split(",")),
            args.site_from_path))))
        return
    cache = args.cache or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) \
        / "auditor-benchmarks"
    sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
    formats = [f.strip() for f in args.formats.split(",") if f.strip()]
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    engines = [x for e in engines for x in (scale_engines(os.cpu_count() or 1)
                                            if e == "scale" else [e])]
    unknown = []
    for e in engines:
        try:
            engine_spec(e)
        except ValueError:
            unknown.append(e)
    if unknown:
        raise SystemExit(f"unknown engine(s) {unknown}; choose from {list(ENGINES)}")
    print(f"{'size':>5} {'format':8} {'engine':6} {'events':>10} {'ev/cpu-s':>9} {'cpu s':>7} "
          f"{'wall s':>7} {'peak MB':>11} {'main':>6}  stages (s)   [peak MB: own/with workers; "
          "main: the audit process's own share of the CPU]",
          flush=True)
    runs = []
    for size in sizes:
        for fmt in formats:
            path = log_for(size, fmt, cache, args.seed, args.files, args.days, args.tables,
                           args.skew, args.sites, args.nightly, args.by_time)
            rounds = []
            for i in range(args.repeat):
                done = {}
                for engine in engines:
                    r = run_one(path, engine, args.ruleset, args.pythonpath,
                                tuple(args.reports.split(",")), bool(args.sites))
                    r.update({"size": size_label(size), "format": fmt, "log": path.name,
                              "files": args.files, "skew": args.skew, "days": args.days,
                              "nightly": args.nightly, "by_time": args.by_time,
                              "sites": args.sites,
                              "reports": args.reports, "round": i + 1})
                    print_row(r)
                    runs.append(r)
                    done[engine] = r
                rounds.append(done)
            if len(engines) > 1 or args.repeat > 1:
                print_scale(path, engines, rounds)
    command = "python benchmarks/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    commands = [command]
    if args.append and args.out.exists():
        before = json.loads(args.out.read_text(encoding="utf-8"))
        commands = before.get("commands", []) + commands
        runs = before.get("runs", []) + runs
    result = {
        "commands": commands,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(), "processor": platform.processor()},
        "ruleset": args.ruleset,
        "runs": runs,
    }
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.out}")


if __name__ == "__main__":
    main()
