"""The one split of the distinct `dice` values (`DiceValues`) that the
replay, the checks and the dice tally share: exactly what `str.split(",")`
gives, numbered in the order first named, whether Arrow or Python splits."""

from __future__ import annotations

import numpy as np
import pandas as pd
from builder import STICK, lawful_table

from auditor.checks.common import Shared
from auditor.game.dice_values import DiceValues
from auditor.game.replay import replay
from auditor.logs.load import load_logs

#: values a log may hold: pairs, sets, one die, blanks between commas, an
#: empty cell's text, spaces kept, text beyond ASCII
AWKWARD = ["B2,B1", "A1,A2,A3,A4,A5", "A1", "A1,,A2", "", ",", " A1 , B2", "Ü1,é2", "A1,B2,"]


def _spelled(values: DiceValues) -> list[list[str]]:
    return [[values.serials[x] for x in values.ids[a:a + n].tolist()]
            for a, n in zip(values.starts.tolist(), values.counts.tolist())]


def test_each_value_is_split_as_str_split_splits_it():
    for held in (pd.Index(AWKWARD, dtype="str"), pd.Index(AWKWARD, dtype=object),
                 np.array(AWKWARD, dtype=object)):
        values = DiceValues(held)
        assert _spelled(values) == [v.split(",") for v in AWKWARD] + [[]]  # (code -1: no dice)
        assert len(values) == len(AWKWARD)
        assert values.tuples() == [tuple(v.split(",")) for v in AWKWARD] + [()]


def test_serials_are_numbered_in_the_order_first_named():
    values = DiceValues(pd.Index(["B2,B1", "A1,B2", "B1,C3"], dtype="str"))
    assert values.serials == ["B2", "B1", "A1", "C3"]
    assert values.ids.tolist() == [0, 1, 2, 0, 1, 3]
    assert values.names() == ["B2", "B1", "A1", "B2", "B1", "C3"]


def test_values_arrow_cannot_hold_are_split_in_python_alike():
    """Numbers, and a lone surrogate (no UTF-8 for it): `str` of each, split."""
    numbers = DiceValues(pd.Index([12, 3]))
    assert _spelled(numbers) == [["12"], ["3"], []]
    odd = DiceValues(np.array(["A1,\ud800", "\ud800,B2"], dtype=object))
    assert _spelled(odd) == [["A1", "\ud800"], ["\ud800", "B2"], []]
    assert odd.serials == ["A1", "\ud800", "B2"]


def test_rows_of_spells_out_the_dice_of_each_code_in_order():
    values = DiceValues(pd.Index(["A1,A2", "B1", "C1,C2,C3"], dtype="str"))
    which, ids = values.rows_of(np.array([2, -1, 0, 0], dtype=np.int8))
    assert which.tolist() == [0, 0, 0, 2, 2, 3, 3]
    assert [values.serials[x] for x in ids.tolist()] == ["C1", "C2", "C3", "A1", "A2", "A1",
                                                          "A2"]


def test_the_checks_read_the_replays_own_split(tmp_path):
    """One split per audit: the replay's, handed to the checks' look-ups."""
    b = lawful_table(seats=(2,))
    b.play(2, 4, 2)
    b.add("die_off_table", role=STICK, dice="A1")
    events = load_logs([b.write_csv(tmp_path / "log.csv")]).events
    state = replay(events)
    shared = Shared.of(events, state)
    assert shared.dice_values is state.derived["dice_values"]
    categories = events["dice"].cat.categories
    assert _spelled(shared.dice_values) == [str(c).split(",") for c in categories] + [[]]
    # without the replay's state: split again, alike
    alone = Shared(events, None).dice_values
    assert alone is not shared.dice_values
    assert _spelled(alone) == _spelled(shared.dice_values)
