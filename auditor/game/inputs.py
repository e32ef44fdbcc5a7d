"""How the replay's input columns are prepared, once per distinct value and
vectorised, before the loop reads them (`Inputs`), and handed to the loop a
chunk of rows at a time. Plain Python: nothing here runs per event (a few
rare events look a value up by row, `Inputs.value`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.compat import masked_arrays
from auditor.game.buffers import COMPILED, ints
from auditor.game.dice_values import DiceValues
from auditor.game.ids import FAMILIES, OUTCOMES
from auditor.game.wagers import Decisions, bet_info
from auditor.logs.arrays import category_codes
from auditor.logs.schema import EVENTS

#: Rows per chunk of per-row Python lists (memory stays flat on long logs).
CHUNK_ROWS = 1 << 18


def distinct(column: pd.Series):
    """Codes (-1 for nothing recorded) and the distinct values they index
    (a categorical's categories as they are held, not copied)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return category_codes(column), column.cat.categories
    return pd.factorize(column.astype(object), use_na_sentinel=True)


def coded(column: pd.Series, parse=None, missing=None) -> tuple[np.ndarray, list]:
    """Codes (-1 for nothing recorded) and the distinct values they index,
    each through `parse` when given, then `missing` last (where -1 finds it)."""
    codes, values = distinct(column)
    if isinstance(values, pd.Index) and pd.api.types.is_string_dtype(values.dtype):
        values = values.to_numpy(dtype=object).tolist()  # (not one Arrow value at a time)
    return codes, [*(values if parse is None else map(parse, values)), missing]


def values_and_nulls(column: pd.Series) -> tuple[np.ndarray, np.ndarray | None]:
    """A whole-number column as pandas holds it, not copied: a nullable
    column's values and null mask (`compat.masked_arrays`), else its
    values, nulls as 0."""
    masked = masked_arrays(column.array)
    if masked is not None:
        values, nulls = masked
        if values.dtype.kind in "iu" and len(values) == len(column):
            return values, nulls
    return column.to_numpy(dtype=np.int64, na_value=0), None


class Inputs:
    """The columns the replay reads, prepared once, vectorised; `chunk` gives
    rows [a, b) as whole numbers for the loop: integer columns, and text
    columns as codes into a list of values (`dice`, `role`, `outcome`) or
    into what was worked out once per distinct bet (`bet_*`). A code of -1
    (nothing recorded) indexes the last position, which holds the value for
    nothing (negative indexing, of lists and of the typed memoryviews alike:
    `replay.pxd` must not turn Cython's `wraparound` off)."""

    #: Read by few events (inspections, rulings, markers): looked up by row
    #: (`value`) instead of being put in the chunks.
    RARE = ("actor_id", "reason", "flags")

    def __init__(self, events: pd.DataFrame, bar: int):
        self.event = category_codes(events["event"]) \
            if isinstance(events["event"].dtype, pd.CategoricalDtype) else \
            events["event"].map({e: c for c, e in enumerate(EVENTS)}).fillna(-1) \
            .to_numpy(dtype=np.int64)
        self.ints = {name: values_and_nulls(events[name]) for name in ("seat", "die1", "die2")}
        self.rare = {name: coded(events[name]) for name in self.RARE}
        self.codes = {}
        self.codes["role"], self.roles = coded(events["actor_role"])
        self.player = self.roles.index("player") if "player" in self.roles else -2
        self.codes["outcome"], self.outcomes = coded(events["outcome"])
        self.outcome_id = ints(len(self.outcomes))  # as OUTCOMES, -1 for the rest
        for j, value in enumerate(self.outcomes):
            self.outcome_id[j] = OUTCOMES.index(value) if value in OUTCOMES else -1
        # The dice each distinct value names, split once (`DiceValues`: the
        # checks and the dice tally read the same split, `dice_values`).
        self.codes["dice"], values = distinct(events["dice"])
        self.dice_values = DiceValues(values)
        self.dice = self.dice_values.tuples()
        # Per distinct dice value: its dice (`TableReplay.dies_of`), and the
        # generation of the table's dice they were looked up in.
        self.die_cache: list = [None] * len(self.dice)
        self.die_generation = ints(len(self.dice))
        for j in range(len(self.dice)):
            self.die_generation[j] = -1
        self.generations = 0
        self.serial_names: list[str] = []  # the dice received, by id (`serial_id`)
        self.serial_ids: dict[str, int] = {}
        self.codes["bet"], values = coded(events["bet"])
        bets = [bet_info(str(v)) for v in values[:-1]]
        self.decisions = Decisions(bar, [key for _, _, key, tracked in bets if tracked])
        # Per distinct bet: its key (-1 for a bet the replay does not decide),
        # family and number.
        self.bet_key, self.bet_fam, self.bet_num = (ints(len(bets) + 1) for _ in range(3))
        self.bet_key[len(bets)] = self.bet_fam[len(bets)] = -1
        for j, (fam, num, key, tracked) in enumerate(bets):
            self.bet_key[j] = self.decisions.index[key] if tracked else -1
            self.bet_fam[j] = FAMILIES.index(fam) if tracked else -1
            self.bet_num[j] = num
        self.buffers = {name: np.empty(min(CHUNK_ROWS, len(self.event)), dtype=np.int64)
                        for name in (*self.ints, *self.codes, "event")}

    def chunk(self, a: int, b: int) -> dict:
        """Rows [a, b) (at most CHUNK_ROWS). The codes are written into the
        same arrays chunk after chunk: arrays made afresh each time would be
        memory the kernel zeroes again each time (the previous chunk's
        replay is over when the next is asked for)."""
        out = {}
        for name, (values, nulls) in self.ints.items():
            out[name] = self.buffers[name][:b - a]
            if nulls is None:
                np.copyto(out[name], values[a:b], casting="unsafe")
            else:  # nothing recorded: 0 (a multiplication: numpy's masked copy is slower)
                np.multiply(values[a:b], ~nulls[a:b], out=out[name], casting="unsafe")
        for name, codes in self.codes.items():
            # (-1, nothing recorded, indexes the last entry of the values)
            out[name] = self.buffers[name][:b - a]
            np.copyto(out[name], codes[a:b], casting="unsafe")
        out["event"] = self.buffers["event"][:b - a]
        np.copyto(out["event"], self.event[a:b], casting="unsafe")
        return out if COMPILED else {name: values.tolist() for name, values in out.items()}

    def serial_id(self, serial: str) -> int:
        """The id of a serial the replay received (the first time: the next)."""
        got = self.serial_ids.get(serial)
        if got is None:
            got = self.serial_ids[serial] = len(self.serial_names)
            self.serial_names.append(serial)
        return got

    def next_generation(self) -> int:
        """A number no table's dice have had yet (see `TableReplay.dies_of`)."""
        self.generations += 1
        return self.generations

    def value(self, name: str, row: int):
        """The value of a `RARE` column at `row` (None if nothing recorded)."""
        codes, lut = self.rare[name]
        return lut[codes[row]]
