"""Dice integrity in the reports: dice_stats.parquet and dice_totals.parquet
(the `parquet` format), the `dice` section of summary.json, the HTML
section and the terminal's line per flagged die.

Every format works the statistics out the same way (`stats_of`, once per
set of reports): from what the engine's collector took of the events
(`auditor.report.dice_tally.COLLECTOR`) or, for a library caller whose
engine took nothing, from the events replayed once more. The level is the
ruleset's (`dice_alpha`, `dice_min_rolls`) unless the format is given
`dice_alpha` (`--dice-alpha`, recorded in the manifest's options so that
`auditor verify` renders the same bytes)."""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from auditor.atomic import atomic_open
from auditor.audit.collect import taken_by
from auditor.audit.core import replay_state
from auditor.escape import one_line
from auditor.findings import missing
from auditor.report.dice_stats import (
    DICE_SCHEMA,
    TOTALS_MIN_ROLLS,
    TOTALS_SCHEMA,
    DiceStats,
    dice_stats,
    level_of,
)
from auditor.report.dice_tally import (
    FACES,
    DiceTally,
    custody_of,
    natural_order,
    shooters_of_die,
    tally,
)
from auditor.report.shared import shared

DICE_FILE = "dice_stats.parquet"
TOTALS_FILE = "dice_totals.parquet"
#: What a flag means, in the reports' own words.
MEANING = ("A flagged die's faces depart from a fair die's by more than chance explains at "
           "the level shown (Holm-adjusted across every die tested in this audit). It is a "
           "statistical signal for inspection of the die, not a breach of a rule: it is no "
           "finding and does not change the exit code.")


def tally_of(result) -> DiceTally:
    """What the engine's collector took, else the events counted now."""
    taken = taken_by(getattr(result.logs, "digest", None), "dice")
    if taken is not None:
        return taken
    events = result.logs.events
    return tally(events, replay_state(events, result.ruleset))


def stats_of(result, dice_alpha: float | None = None) -> DiceStats:
    """The dice statistics of `result` at its level (computed once per set
    of reports written: `auditor.report.shared`)."""
    return shared(_computing(dice_alpha), result)


@functools.cache
def _computing(dice_alpha: float | None):
    def compute(result):
        return dice_stats(shared(tally_of, result), level_of(result.ruleset, dice_alpha))
    return compute


# --- Parquet -------------------------------------------------------------------------

def write_parquet(result, meta: dict, out: Path, dice_alpha: float | None = None) -> list[str]:
    """dice_stats.parquet (one row a die) and dice_totals.parquet (one row a
    table session or dice set), deterministic bytes, the level and the
    provenance in the file metadata."""
    stats = stats_of(result, dice_alpha)
    extra = {"dice_level": {"alpha": stats.level.alpha, "min_rolls": stats.level.min_rolls,
                            "totals_min_rolls": TOTALS_MIN_ROLLS,
                            "unread_rolls": stats.unread, "meaning": MEANING}}
    written = []
    for frame, schema, name in ((stats.dice, DICE_SCHEMA, DICE_FILE),
                                (stats.totals, TOTALS_SCHEMA, TOTALS_FILE)):
        table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
        table = table.replace_schema_metadata({"auditor": json.dumps(
            {**meta, **extra}, sort_keys=True, ensure_ascii=False)})
        with atomic_open(out / name) as sink:
            pq.write_table(table, sink, compression="zstd", write_statistics=True)
        written.append(str(out / name))
    return written


# --- summary.json -----------------------------------------------------------------------

def _number(x):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(x)


def summary_section(result, dice_alpha: float | None = None) -> dict:
    """The `dice` section of summary.json."""
    stats = stats_of(result, dice_alpha)
    dice, totals = stats.dice, stats.totals
    return {
        "meaning": MEANING,
        "alpha": stats.level.alpha,
        "min_rolls": stats.level.min_rolls,
        "test": "Pearson chi-square against a fair die (5 df); totals against two fair dice "
                "(10 df); Holm adjustment across the dice tested, and across the sessions "
                "and sets tested",
        "dice": len(dice),
        "tested": int((dice["status"] != "too few rolls").sum()),
        "too_few_rolls": int((dice["status"] == "too few rolls").sum()),
        "unread_rolls": stats.unread,
        "flagged": [_die_record(r) for r in dice[dice["flagged"]].itertuples(index=False)],
        "totals_tested": int((totals["status"] != "too few rolls").sum()),
        "totals_flagged": [{
            "kind": r.kind, "site": r.site, "table_id": r.table_id,
            "session_seq": int(r.session_seq), "set": int(r.set), "dice": r.dice,
            "rolls": int(r.rolls), "p_value": _number(r.p_value),
            "p_adjusted": _number(r.p_adjusted)}
            for r in totals[totals["flagged"]].itertuples(index=False)],
    }


def _die_record(r) -> dict:
    return {"site": r.site, "serial": r.serial, "rolls": int(r.rolls),
            "faces": [int(getattr(r, f)) for f in FACES],
            "statistic": _number(r.statistic), "p_value": _number(r.p_value),
            "p_adjusted": _number(r.p_adjusted)}


# --- the terminal ---------------------------------------------------------------------------

def flagged_lines(result, dice_alpha: float | None = None) -> list[str]:
    """One line per flagged die, and per flagged session or set."""
    stats = stats_of(result, dice_alpha)
    lines = []
    for r in stats.flagged.itertuples(index=False):
        die = f"{r.site}/{r.serial}" if r.site is not None else r.serial
        faces = " ".join(str(int(getattr(r, f))) for f in FACES)
        lines.append(one_line(
            f"DICE: die {die} flagged for inspection: faces 1-6 {faces} in {int(r.rolls)} "
            f"rolls, p={r.p_value:.2g} (Holm-adjusted {r.p_adjusted:.2g} < "
            f"{stats.level.alpha:g}); a statistical signal, not a finding"))
    for r in stats.totals_flagged.itertuples(index=False):
        table = f"{r.site}/{r.table_id}" if r.site is not None else r.table_id
        what = f"set {r.dice}" if r.kind == "set" else "session"
        lines.append(one_line(
            f"DICE: totals of {what} at table {table} (session from seq {int(r.session_seq)}) "
            f"flagged for inspection: {int(r.rolls)} rolls, p={r.p_value:.2g} "
            f"(Holm-adjusted {r.p_adjusted:.2g} < {stats.level.alpha:g})"))
    return lines


# --- HTML -------------------------------------------------------------------------------------

def html_context(result, dice_alpha: float | None = None) -> dict:
    """What the page's dice section shows: the counts, and for each flagged
    die its bar chart (face counts beside the fair line), where it was
    thrown and its custody record."""
    stats = stats_of(result, dice_alpha)
    tally_ = stats.tally
    flagged = []
    for r in stats.flagged.itertuples(index=False):
        counts = [int(getattr(r, f)) for f in FACES]
        fair = r.rolls / 6
        top = max(max(counts), fair) or 1
        scale = 100 / top  # bars up to 100 units tall, their feet at y = 120
        sessions = tally_.sessions_of.of(r.site, r.serial)
        shooters = shooters_of_die(tally_.shooters_of, r.site, r.serial)
        kept = custody_of(tally_.custody, r.site, r.serial)
        flagged.append({
            "die": f"{r.site}/{r.serial}" if r.site is not None else r.serial,
            "rolls": int(r.rolls), "p_value": f"{r.p_value:.3g}",
            "p_adjusted": f"{r.p_adjusted:.3g}",
            "bars": [{"face": k + 1, "count": c, "x": 12 + 39 * k,
                      "y": round(120 - c * scale, 2), "height": round(c * scale, 2)}
                     for k, c in enumerate(counts)],
            "fair": round(fair, 1), "fair_y": round(120 - fair * scale, 2),
            "tables": sorted(set(sessions["table_id"]), key=natural_order),
            "sessions": [f"{t} from seq {s}: {n}" for t, s, n in sorted(
                zip(sessions["table_id"], sessions["session_seq"].tolist(),
                    sessions["rolls"].tolist()), key=lambda x: (natural_order(x[0]), x[1]))],
            "shooters": [f"{s or '(not recorded)'}: {n}" for s, n in sorted(
                zip(shooters["shooter"], shooters["rolls"].tolist()),
                key=lambda x: natural_order(x[0]))],
            "custody": [{"table": c.table_id, "seq": int(c.seq), "event": _text(c.event),
                         "role": _text(c.actor_role), "actor": _text(c.actor_id),
                         "outcome": _text(c.outcome)}
                        for c in kept.itertuples(index=False)],
        })
    dice = stats.dice
    return {
        "meaning": MEANING, "alpha": f"{stats.level.alpha:g}",
        "min_rolls": stats.level.min_rolls,
        "count": len(dice),
        "tested": int((dice["status"] != "too few rolls").sum()),
        "too_few": int((dice["status"] == "too few rolls").sum()),
        "unread": stats.unread,
        "flagged": flagged,
        "totals_tested": int((stats.totals["status"] != "too few rolls").sum()),
        "totals_flagged": [{
            "what": f"set {r.dice}" if r.kind == "set" else "session",
            "table": f"{r.site}/{r.table_id}" if r.site is not None else r.table_id,
            "session_seq": int(r.session_seq), "rolls": int(r.rolls),
            "p_adjusted": f"{r.p_adjusted:.3g}"}
            for r in stats.totals_flagged.itertuples(index=False)],
    }


def _text(value) -> str:
    return "" if missing(value) else str(value)
