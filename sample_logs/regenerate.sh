#!/usr/bin/env bash
# Rebuild the generated sample logs (deterministic: same seeds, same bytes).
# Each jurisdiction's night plants every violation its ruleset enforces that
# the generator can plant; FILE.planted.json lists where.
set -euo pipefail
cd "$(dirname "$0")"

codes_for() {  # the injectable codes a shipped ruleset enforces, less any named after it
  python3 - "$@" <<'PY'
import sys
from auditor.generate import INJECTABLE
from auditor.rules.ruleset import load_ruleset
rules = {r.code for r in load_ruleset(sys.argv[1]).rules}
print(",".join(c for c in INJECTABLE if c in rules and c not in sys.argv[2:]))
PY
}

auditor generate --tables 2 --rolls 120 --seed 11 --out nz-table-games/night-clean.csv
auditor generate --tables 2 --rolls 150 --seed 12 --first-table 3 \
  --out nz-table-games/night-planted.csv \
  --inject "$(codes_for nz-table-games)"
auditor generate --tables 1 --rolls 150 --seed 21 --offer-role dealer \
  --out nz-1996/night-planted.jsonl --inject "$(codes_for nz-1996)"
auditor generate --tables 2 --rolls 150 --seed 31 --out sd-20-18-33/night-planted.parquet \
  --inject "$(codes_for sd-20-18-33)"
auditor generate --tables 1 --rolls 150 --seed 41 --out nsw-1992/night-planted.csv.gz \
  --inject "$(codes_for nsw-1992 offer.order offer.wrong_role)"
# (NSW's offer rules govern only the start of play, rule 3.2; the generator
# plants offer breaches after a relinquishment, which rule 3.8, not read, covers.)
