"""What each newer part of the audit costs: the same build audited with and
without it, in fresh processes, alternated, so that what is measured is that
part alone and not whatever else changed between two versions.

    python benchmarks/feature_cost.py                    # 10M events, 5 rounds
    python benchmarks/feature_cost.py --size 1M --rounds 9

Each round audits the benchmark log (`benchmarks/run.py`'s, made by
`auditor generate` and cached) once as `auditor check` does (every report
but the GitHub annotations), then once without each part:

- `dice`: the dice tally and statistics (issue 26): no dice collector, an
  empty tally reported;
- `exposure`: the valid rolls per session and duty (issue 29): no exposure
  collected, so no roll-ups, rates or gaming days beyond empty ones;
- `marks`: each table's first and last rows and markers per file (issue 24's
  mid-session reading): none taken, so no table reads as mid-session.

A part is left out by replacing it, in that process only, with what does
nothing (`_leave_out`); nothing in the package changes. The cost of a part
is the median CPU time (user + system, the process and all it started) of
the full audit less that of the audit without it, as a share of the latter.
Nothing here is a test: timings are never asserted.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import run as bench

PARTS = ("dice", "exposure", "marks")


class _Nothing:
    """A collector that takes and joins nothing."""

    needs_findings = False

    def take(self, events, findings, state):
        return None

    def join(self, taken):
        return None


def _leave_out(part: str) -> None:
    """Replace `part` of the audit (several joined by "+"), in this process,
    by what does nothing."""
    if "+" in part:
        for one in part.split("+"):
            _leave_out(one)
    elif part == "dice":
        from auditor.audit.collect import Collectors
        from auditor.report import dice_report, html
        from auditor.report.dice_tally import DiceTally
        from auditor.report.html_events import EventCollector

        html.COLLECTOR = Collectors(html=EventCollector(html.MAX_FINDINGS_PER_TABLE_CODE))
        dice_report.tally_of = lambda result: DiceTally()
    elif part == "exposure":
        import auditor.run

        auditor.run.EXPOSURE = _Nothing()
    elif part == "marks":
        import auditor.logs.load

        auditor.logs.load.table_marks = lambda events: {}
    elif part != "none":
        raise SystemExit(f"unknown part {part!r}; choose from {PARTS}")


def child(part: str, path: str, ruleset: str) -> None:
    """One audit as the program runs it, `part` left out once the program's
    modules are loaded (earlier, numpy would load before the program's own
    settings: OpenBLAS threads spinning, the collector walking the imports)."""
    from auditor import run_as_program

    def load():
        import auditor.report.formats
        import auditor.run  # noqa: F401
        _leave_out(part)
        return lambda: bench.audit_once(path, "local", 1, ruleset)

    got = run_as_program(load)
    print(json.dumps({"findings": got["findings"], "events": got["events"]}))


def cpu_of(part: str, path: Path, ruleset: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-P", __file__, "--child", part, str(path),
                    "--ruleset", ruleset], check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="10M")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--parts", default=",".join(PARTS),
                    help="the parts to leave out, one at a time (comma-separated); "
                         "several at once joined by + (dice+exposure+marks)")
    ap.add_argument("--ruleset", default="nz-table-games")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child[0], args.child[1], args.ruleset)
    cache = Path.home() / ".cache" / "auditor-benchmarks"
    path = bench.log_for(bench.parse_size(args.size), "parquet", cache, args.seed)
    parts = ["none", *(p for p in args.parts.split(",") if p)]
    cpu: dict[str, list[float]] = {p: [] for p in parts}
    for r in range(args.rounds):
        for p in parts:
            cpu[p].append(cpu_of(p, path, args.ruleset))
        print(f"round {r + 1}: " + "  ".join(f"{p} {cpu[p][-1]:.2f}" for p in parts),
              flush=True)
    full = statistics.median(cpu["none"])
    print(f"\n{path.name}: the whole audit {full:.2f} CPU s (median of {args.rounds})")
    print(f"{'part':10} {'without it':>11} {'its cost':>9} {'share':>7}")
    for p in parts[1:]:
        without = statistics.median(cpu[p])
        print(f"{p:10} {without:>11.2f} {full - without:>+9.2f} "
              f"{(full - without) / without:>+7.1%}")


if __name__ == "__main__":
    main()
