"""Dice integrity: whether any die's faces, or any session's or set's
totals, depart from fair dice (docs/dice-integrity.md).

The test is Pearson's chi-square goodness of fit against a fair die (six
faces, 5 degrees of freedom) and, for totals, against two fair dice (eleven
totals 2..12, 10 degrees of freedom). It is only run where every expected
count is at least about five, the textbook condition for the chi-square
approximation: a die with fewer than `min_rolls` rolls (default 100: 16.7
expected per face) and a session or set with fewer than TOTALS_MIN_ROLLS
(180: 5 expected twos) are "too few rolls", untested, never a pass. No
exact test is needed above those counts; none is run below them.

The p-values are adjusted by Holm's step-down method across every die
tested in the audit (and, separately, across every session and set tested),
so the chance that a fair die (or fair pair) is flagged anywhere in an
audit is at most the level. A flag is a statistical signal for inspection,
not a violation: it is no finding and does not change the exit code.

The chi-square survival functions are closed forms for these two degrees
of freedom (no scipy): for 5, erfc(sqrt(x/2)) + sqrt(2x/pi) e^(-x/2) (1 + x/3);
for 10, e^(-x/2) times the sum of (x/2)^k / k! for k = 0..4.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.report.dice_tally import FACES, TOTALS, DiceTally, natural_order

#: The ruleset parameters the dice statistics read (`level_of`).
PARAMETERS_READ = ("dice_alpha", "dice_min_rolls")
DEFAULT_ALPHA = 0.01
DEFAULT_MIN_ROLLS = 100
#: Totals of two dice are tested from this many rolls (5 expected 2s and 12s).
TOTALS_MIN_ROLLS = 180
#: The chance of each total 2..12 with two fair dice.
TOTAL_CHANCES = np.array([1, 2, 3, 4, 5, 6, 5, 4, 3, 2, 1], dtype=np.float64) / 36.0


def chi2_sf_5(x: float) -> float:
    """P(X >= x) for X chi-square with 5 degrees of freedom."""
    if x <= 0:
        return 1.0
    return min(1.0, math.erfc(math.sqrt(x / 2)) +
               math.sqrt(2 * x / math.pi) * math.exp(-x / 2) * (1 + x / 3))


def chi2_sf_10(x: float) -> float:
    """P(X >= x) for X chi-square with 10 degrees of freedom."""
    if x <= 0:
        return 1.0
    h = x / 2  # (the series' terms h**k / k!, k = 0..4, added in that order)
    return min(1.0, math.exp(-h) * (1.0 + h + h ** 2 / 2 + h ** 3 / 6 + h ** 4 / 24))


def chi_square(observed: np.ndarray, chances: np.ndarray) -> np.ndarray:
    """Pearson's statistic of each row of `observed` against `chances`."""
    observed = np.asarray(observed, dtype=np.float64).reshape(-1, len(chances))
    expected = observed.sum(axis=1, keepdims=True) * chances
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(expected.sum(axis=1) > 0,
                        ((observed - expected) ** 2 / expected).sum(axis=1), 0.0)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN, not counted)."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full(len(p), np.nan)
    tested = np.flatnonzero(~np.isnan(p))
    m = len(tested)
    if not m:
        return out
    order = tested[np.argsort(p[tested], kind="stable")]
    adjusted = np.minimum(1.0, np.maximum.accumulate(p[order] * (m - np.arange(m))))
    out[order] = adjusted
    return out


@dataclass(frozen=True)
class DiceLevel:
    """What a flag is tested at: the level (the Holm-adjusted p-value must
    be below it) and the fewest rolls a die is tested on."""

    alpha: float = DEFAULT_ALPHA
    min_rolls: int = DEFAULT_MIN_ROLLS


def level_of(ruleset, alpha: float | None = None) -> DiceLevel:
    """The level of a ruleset (its `dice_alpha` and `dice_min_rolls`
    parameters where it sets them), `alpha` (`--dice-alpha`) overriding."""
    params = getattr(ruleset, "parameters", {}) or {}
    return DiceLevel(float(alpha if alpha is not None else params.get("dice_alpha",
                                                                      DEFAULT_ALPHA)),
                     int(params.get("dice_min_rolls", DEFAULT_MIN_ROLLS)))


@dataclass
class DiceStats:
    """The tests of one audit: `dice` (one row a die), `totals` (one row a
    table session and one a dice set), the level, and the valid rolls not
    counted (`unread`)."""

    dice: pd.DataFrame
    totals: pd.DataFrame
    level: DiceLevel
    unread: int
    tally: DiceTally

    @property
    def flagged(self) -> pd.DataFrame:
        return self.dice[self.dice["flagged"]]

    @property
    def totals_flagged(self) -> pd.DataFrame:
        return self.totals[self.totals["flagged"]]


def dice_stats(tally: DiceTally, level: DiceLevel) -> DiceStats:
    """The tests of a joined tally, ordered (site, serial) naturally."""
    return DiceStats(_dice(tally.dice, level), _totals(tally, level), level, tally.unread, tally)


def _order(columns: list[list]) -> np.ndarray:
    """The row order of the natural order of `columns` (their values row by
    row; none last, None and NaN alike; "T2" before "T10"): each column's
    distinct values ranked once, the rows sorted on the ranks (stable)."""
    n = len(columns[0]) if columns else 0
    ranks = []
    for column in columns:
        codes, distinct = pd.factorize(pd.Series(column, dtype=object), use_na_sentinel=True)
        distinct = distinct.tolist()
        rank = np.empty(len(distinct) + 1, dtype=np.int64)
        rank[:-1] = _natural_ranks(distinct)
        rank[-1] = len(distinct)  # (code -1: none, last)
        ranks.append(rank[codes])
    if not ranks or not n:
        return np.arange(n, dtype=np.int64)
    return np.lexsort(ranks[::-1]).astype(np.int64)


def _natural_ranks(values: list) -> np.ndarray:
    """Each of `values`' place in their natural order (`natural_order` for
    text), values whose keys are equal ("T1" and "T01") placed alike, at
    the first of them. Text that is letters and the like then at most 18
    ASCII digits (every serial and table id met so far) is ranked by Arrow
    and numpy on (text, number); anything else by its Python key."""
    keys = _prefix_and_number(values)
    if keys is None:
        keys = [natural_order(v) if isinstance(v, str) else v for v in values]
        order = sorted(range(len(keys)), key=keys.__getitem__)
        new = [at == 0 or keys[j] != keys[order[at - 1]] for at, j in enumerate(order)]
        order, new = np.asarray(order, dtype=np.int64), np.asarray(new, dtype=bool)
    else:
        prefix, number = keys
        order = np.lexsort((number, prefix))  # (stable: as `sorted`)
        new = np.ones(len(order), dtype=bool)
        new[1:] = (prefix[order][1:] != prefix[order][:-1]) | \
            (number[order][1:] != number[order][:-1])
    place = np.maximum.accumulate(np.where(new, np.arange(len(order)), 0)) if len(order) \
        else order
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = place
    return rank


#: Text whose natural key is (text, number, "") or (text,): no digit, then
#: at most 18 digits (ASCII only: Python's \d reads other digits too).
_SIMPLE = r"^(?P<text>[^0-9]*)(?P<digits>[0-9]{0,18})$"


def _prefix_and_number(values: list) -> tuple[np.ndarray, np.ndarray] | None:
    """Keys ordering `values` as `natural_order` does, where every value is
    such text: the rank of its text part and its number (-1 for none: the
    key (text,) comes before (text, 0, "")); None otherwise."""
    if not values or not all(type(v) is str for v in values):
        return None
    try:
        text = pa.array(values, pa.string())
    except (pa.ArrowException, UnicodeError):
        return None
    if not pc.all(pc.string_is_ascii(text)).as_py():
        return None
    parts = pc.extract_regex(text, _SIMPLE)
    if parts.null_count:
        return None
    digits = pc.struct_field(parts, "digits")
    number = pc.cast(pc.if_else(pc.equal(digits, ""), "-1", digits), pa.int64())
    prefix = pc.rank(pc.struct_field(parts, "text"), sort_keys="ascending", tiebreaker="dense")
    return (prefix.to_numpy().astype(np.int64),
            number.to_numpy(zero_copy_only=False).astype(np.int64))


def _tested(counts: np.ndarray, chances: np.ndarray, minimum: int, sf, alpha: float) -> dict:
    """The test columns of `counts` (a row a die, session or set)."""
    rolls = counts.sum(axis=1).astype(np.int64)
    statistic = chi_square(counts, chances) if len(counts) else np.empty(0)
    enough = rolls >= minimum
    p = np.full(len(counts), np.nan)
    tested = np.flatnonzero(enough)
    p[tested] = [sf(x) for x in statistic[tested].tolist()]
    adjusted = holm(p)
    flagged = enough & (np.nan_to_num(adjusted, nan=1.0) < alpha)
    status = np.where(~enough, "too few rolls",
                      np.where(flagged, "flagged", "consistent with fair")).astype(object)
    return {"statistic": np.where(enough, statistic, np.nan), "p_value": p,
            "p_adjusted": adjusted, "flagged": flagged,
            "status": pd.Series(status, dtype=object, copy=False)}


def _objects(values) -> pd.Series:
    return pd.Series(np.asarray(values, dtype=object), dtype=object, copy=False)


def _dice(frame: pd.DataFrame, level: DiceLevel) -> pd.DataFrame:
    site, serial = frame["site"].tolist(), frame["serial"].tolist()
    order = _order([site, serial])
    counts = frame[list(FACES)].to_numpy(dtype=np.int64).reshape(-1, 6)[order]
    columns = {"site": _objects(site)[order].reset_index(drop=True),
               "serial": _objects(serial)[order].reset_index(drop=True),
               "rolls": counts.sum(axis=1).astype(np.int64),
               **{f: counts[:, j] for j, f in enumerate(FACES)},
               **_tested(counts, np.full(6, 1 / 6), level.min_rolls, chi2_sf_5, level.alpha)}
    return pd.DataFrame(columns)


def _totals(tally: DiceTally, level: DiceLevel) -> pd.DataFrame:
    sessions, sets = tally.sessions, tally.sets
    n, m = len(sessions), len(sets)
    values = {
        "kind": ["session"] * n + ["set"] * m,
        "site": sessions["site"].tolist() + sets["site"].tolist(),
        "table_id": sessions["table_id"].tolist() + sets["table_id"].tolist(),
        "session_seq": sessions["session_seq"].tolist() + sets["session_seq"].tolist(),
        "set": [-1] * n + sets["set"].tolist(),
        "dice": [""] * n + sets["dice"].tolist(),
    }
    order = _order([values[k] for k in ("site", "table_id", "session_seq", "kind", "set")])
    counts = np.concatenate([sessions[list(TOTALS)].to_numpy(dtype=np.int64).reshape(-1, 11),
                             sets[list(TOTALS)].to_numpy(dtype=np.int64).reshape(-1, 11)])
    counts = counts[order]
    columns = {k: _objects(values[k])[order].reset_index(drop=True)
               for k in ("kind", "site", "table_id", "dice")}
    columns = {"kind": columns["kind"], "site": columns["site"],
               "table_id": columns["table_id"],
               "session_seq": np.asarray(values["session_seq"], dtype=np.int64)[order],
               "set": np.asarray(values["set"], dtype=np.int64)[order],
               "dice": columns["dice"], "rolls": counts.sum(axis=1).astype(np.int64),
               **{t: counts[:, j] for j, t in enumerate(TOTALS)},
               **_tested(counts, TOTAL_CHANCES, TOTALS_MIN_ROLLS, chi2_sf_10, level.alpha)}
    return pd.DataFrame(columns)


DICE_SCHEMA = pa.schema([
    ("site", pa.string()), ("serial", pa.string()), ("rolls", pa.int64()),
    *((f, pa.int64()) for f in FACES),
    ("statistic", pa.float64()), ("p_value", pa.float64()), ("p_adjusted", pa.float64()),
    ("flagged", pa.bool_()), ("status", pa.string()),
])
TOTALS_SCHEMA = pa.schema([
    ("kind", pa.string()), ("site", pa.string()), ("table_id", pa.string()),
    ("session_seq", pa.int64()), ("set", pa.int64()), ("dice", pa.string()),
    ("rolls", pa.int64()), *((t, pa.int64()) for t in TOTALS),
    ("statistic", pa.float64()), ("p_value", pa.float64()), ("p_adjusted", pa.float64()),
    ("flagged", pa.bool_()), ("status", pa.string()),
])
