"""Measure the dice statistics' false alarms and power over many seeds
(docs/dice-integrity.md). Not a test: nothing is asserted; the table it
prints is the one in the docs.

    python benchmarks/dice_power.py                         # the docs' table (200 seeds)
    python benchmarks/dice_power.py --seeds 1000 --leans "" --out benchmarks/dice_power_fair.json
    python benchmarks/dice_power.py --seeds 400 --alpha 0.05
    python benchmarks/dice_power.py --leans 0.2,0.4 --rolls 500,1000,2000

For each number of valid rolls per night (one table, `auditor generate`
with the given seed):

- fair nights: the share of audits in which any die is flagged (the
  false-alarm rate; Holm keeps it at most the level), and the share in
  which any table session or dice set is flagged on its totals;
- a leaning die (`--inject dice.face_bias --die-lean L`: die A1 shows the
  higher of two fair draws with chance L, the table keeps its first set):
  the share of audits in which A1 is flagged (the power), and the share in
  which any other die is.

Results go to standard output as a table and to --out as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def night_stats(seed: int, rolls: int, lean: float | None, alpha: float, folder: Path):
    """The dice statistics of one generated night."""
    from auditor.audit.core import replay_state
    from auditor.generate import generate, write_log
    from auditor.logs.load import load_logs
    from auditor.report.dice_stats import DiceLevel, dice_stats
    from auditor.report.dice_tally import tally
    from auditor.rules.ruleset import load_ruleset

    inject = ["dice.face_bias"] if lean is not None else []
    log = generate(1, rolls, seed, inject, die_lean=lean if lean is not None else 0.0)
    path = folder / f"night-{seed}-{rolls}-{lean}.parquet"
    write_log(log.table, path)
    logs = load_logs([path])
    path.unlink()
    state = replay_state(logs.events, load_ruleset("nz-table-games"))
    return dice_stats(tally(logs.events, state), DiceLevel(alpha=alpha))


def measure(seeds: int, rolls: list[int], leans: list[float], alpha: float) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n in rolls:
            for lean in [None, *leans]:
                start = time.perf_counter()
                die = other = totals = 0
                a1_rolls = []
                for seed in range(seeds):
                    stats = night_stats(seed, n, lean, alpha, folder)
                    flagged = set(stats.flagged["serial"])
                    if lean is None:
                        die += bool(flagged)
                    else:
                        die += "A1" in flagged
                        other += bool(flagged - {"A1"})
                        a1 = stats.dice[stats.dice["serial"] == "A1"]["rolls"]
                        a1_rolls.append(int(a1.iloc[0]) if len(a1) else 0)
                    totals += bool(stats.totals["flagged"].any())
                row = {"rolls": n, "lean": lean, "seeds": seeds, "alpha": alpha,
                       "die_flagged": round(die / seeds, 4),
                       "other_die_flagged": round(other / seeds, 4) if lean is not None
                       else None,
                       "totals_flagged": round(totals / seeds, 4),
                       "median_a1_rolls": sorted(a1_rolls)[len(a1_rolls) // 2]
                       if a1_rolls else None,
                       "seconds": round(time.perf_counter() - start, 1)}
                rows.append(row)
                _print(row)
    return rows


def _print(row: dict) -> None:
    what = "fair" if row["lean"] is None else f"lean {row['lean']:.2f}"
    label = "any die flagged" if row["lean"] is None else "A1 flagged"
    extra = "" if row["lean"] is None else \
        f"  other die flagged {row['other_die_flagged']:.3f}  A1 rolls ~{row['median_a1_rolls']}"
    print(f"{row['rolls']:>6} rolls  {what:10}  {label} {row['die_flagged']:.3f}  "
          f"totals flagged {row['totals_flagged']:.3f}{extra}  ({row['seeds']} seeds, "
          f"{row['seconds']} s)", flush=True)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=200, help="nights per cell")
    ap.add_argument("--rolls", default="500,2000", help="valid rolls per night")
    ap.add_argument("--leans", default="0.2,0.4,0.6",
                    help="strengths of the leaning die (chance it shows the higher of two "
                         "draws); empty: fair nights only")
    ap.add_argument("--alpha", type=float, default=0.01)
    ap.add_argument("--out", type=Path, default=HERE / "dice_power.json")
    args = ap.parse_args(argv)
    rows = measure(args.seeds, [int(r) for r in args.rolls.split(",")],
                   [float(x) for x in args.leans.split(",") if x.strip()], args.alpha)
    args.out.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
