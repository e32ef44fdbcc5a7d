"""Measure `auditor trend` over 365 daily report folders (issue 29: under
10 s). Not a test: prints the seconds, asserts nothing.

    python benchmarks/trend_365.py [--days 365] [--tables 20]

One day's logs (`--tables` tables of 3 sites, 300 valid rolls each) are
audited once into a report folder; the folder is copied to make the year
(the trend's cost is reading and checking folders, the same for copies),
then `auditor trend` runs over them all in a fresh process, timed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--days", type=int, default=365)
    ap.add_argument("--tables", type=int, default=20)
    args = ap.parse_args()
    from auditor.generate import generate, write_log

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for i, site in enumerate(("alpha", "beta", "gamma")):
            log = generate(tables=max(1, args.tables // 3), rolls=300, seed=i,
                           inject=["shooter.ineligible", "dice.stick_not_used"])
            write_log(log.table, root / "logs" / site / "night.csv")
        auditor = [sys.executable, "-m", "auditor"]
        subprocess.run([*auditor, "check", str(root / "logs"), "--site-from-path",
                        "--ruleset", "nz-table-games", "--out", str(root / "day")],
                       check=False, capture_output=True)
        folders = []
        for d in range(args.days):
            folders.append(root / "year" / f"{d:03d}")
            shutil.copytree(root / "day", folders[-1])
        start = time.perf_counter()
        done = subprocess.run([*auditor, "trend", *map(str, folders), "--out",
                               str(root / "trend")], capture_output=True, text=True, check=False)
        took = time.perf_counter() - start
        size = sum(f.stat().st_size for f in (root / "day").iterdir())
        print(f"auditor trend over {args.days} report folders ({size:,} bytes each): "
              f"{took:.2f} s wall, exit {done.returncode}")
        if done.returncode:
            print(done.stdout, done.stderr)


if __name__ == "__main__":
    main()
