"""`Wagers` keeps a table's wagers as integer arrays in the orders a dict
per seat kept (the orders decide the order of what a roll decides, and so
which settlement is matched to which decision): any sequence of operations
leaves it as the same operations leave a {seat: {key: count}} dict."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.game.buffers import ints
from auditor.game.ids import FAMILIES
from auditor.game.wagers import Wagers

PASS, DONT_PASS, COME, DONT_COME = (FAMILIES.index(f)
                                    for f in ("pass", "dont_pass", "come", "dont_come"))
#: The family of each key: pass, don't pass, three come and three don't come.
KEY_FAM = [PASS, DONT_PASS, COME, COME, COME, DONT_COME, DONT_COME, DONT_COME]

seats = st.integers(min_value=1, max_value=6)
keys = st.integers(min_value=0, max_value=len(KEY_FAM) - 1)
operations = st.lists(st.one_of(
    st.tuples(st.just("place"), seats, keys, st.integers(min_value=1, max_value=3)),
    st.tuples(st.just("take"), seats, keys),
    st.tuples(st.just("drop"), seats),
    st.tuples(st.just("snapshot")),
    st.tuples(st.just("restore")),
), max_size=60)


def _wagers() -> Wagers:
    key_fam = ints(len(KEY_FAM))
    for j, fam in enumerate(KEY_FAM):
        key_fam[j] = fam
    return Wagers(len(KEY_FAM), key_fam)


def _apply(op, wagers: Wagers, saved: Wagers, model: dict, saved_model: dict):
    """One operation on both; the model dicts as they are after it."""
    kind = op[0]
    if kind == "place":
        _, s, key, n = op
        wagers.add_seat(s)
        wagers.add(s, key, n)
        held = model.setdefault(s, {})
        held[key] = held.get(key, 0) + n
    elif kind == "take":
        _, s, key = op
        m = wagers.find(s, key)
        assert (m >= 0) == (key in model.get(s, {}))
        if m >= 0:
            wagers.remove_at(s, m)
            del model[s][key]
    elif kind == "drop":
        wagers.drop_seat(op[1])
        model.pop(op[1], None)
    elif kind == "snapshot":
        saved.copy_from(wagers)
        saved_model = copy.deepcopy(model)
    else:
        wagers.copy_from(saved)
        model = copy.deepcopy(saved_model)
    return model, saved_model


@settings(max_examples=300, deadline=None)
@given(operations)
def test_wagers_behave_like_a_dict_per_seat(ops):
    wagers, saved = _wagers(), _wagers()
    model: dict[int, dict[int, int]] = {}
    saved_model: dict[int, dict[int, int]] = {}
    for op in ops:
        model, saved_model = _apply(op, wagers, saved, model, saved_model)
        got = wagers.as_dict()
        # Same seats, keys and counts, in the same orders.
        assert [(s, list(held.items())) for s, held in got.items()] == \
            [(s, list(held.items())) for s, held in model.items()]
        for s in range(1, 7):
            held = model.get(s, {})
            for fam in (PASS, DONT_PASS, COME, DONT_COME):
                first = next((k for k in held if KEY_FAM[k] == fam), None)
                m = wagers.first_of(s, fam)
                assert (None if m < 0 else list(got[s])[m - s * wagers.width]) == first
            assert wagers.holds_line(s) == any(KEY_FAM[k] in (PASS, DONT_PASS) for k in held)
            assert wagers.come_held(s) == sum(n for k, n in held.items()
                                              if KEY_FAM[k] in (COME, DONT_COME))


def test_a_dropped_seat_placing_again_comes_last():
    wagers = _wagers()
    for s in (3, 1, 5):
        wagers.add_seat(s)
        wagers.add(s, 0, 1)
    wagers.drop_seat(3)
    wagers.add_seat(3)
    wagers.add(3, 2, 1)
    assert list(wagers.as_dict()) == [1, 5, 3]
    assert wagers.as_dict()[3] == {2: 1}
