"""The vectorised helpers behind the checks and findings give exactly what
the straightforward versions they replaced gave (random inputs, edge cases
included). Nothing here is timed."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from auditor.checks.common import (
    Shared,
    in_sorted,
    next_after,
    rows_where,
    searchsorted_ascending,
)
from auditor.checks.log import _file_order, _utc_texts
from auditor.checks.offer import _next_clockwise, next_clockwise
from auditor.codes import SEVERITY_RANK
from auditor.findings import (
    FINDING_COLUMNS,
    SITE_SEPARATOR,
    _jsonable,
    evidence_json,
    evidence_jsons,
    finalize,
    joined_sites,
    merge_sorted,
    sort_findings,
)


def test_next_clockwise_of_many_masks_matches_one_by_one():
    rng = np.random.default_rng(1)
    masks = [0, 1, 1 << 62, (1 << 62) | 2, 0b100100, sum(1 << s for s in range(1, 63))]
    masks += [int(m) & ~1 for m in rng.integers(0, 1 << 62, 300)]
    afters = [-3, -1, 0, 1, 5, 61, 62, 63, 70]
    pairs = [(m, a) for m in masks for a in afters]
    got = _next_clockwise(np.array([m for m, _ in pairs], dtype=np.int64),
                          np.array([a for _, a in pairs], dtype=np.int64))
    assert got.tolist() == [next_clockwise(m, a) for m, a in pairs]


def test_utc_texts_print_as_pandas_timestamps():
    rng = np.random.default_rng(2)
    us = np.concatenate([rng.integers(0, 253402300799999999, 500),
                         rng.integers(0, 2 ** 50, 500) // 1_000_000 * 1_000_000,
                         [0, 1, 999_999, 1_000_000, 253402300799999999]]).astype(np.int64)
    want = [str(pd.Timestamp(v, unit="us", tz="UTC")) for v in us.tolist()]
    assert _utc_texts(us) == want
    before_1970 = np.array([-1, -1_000_000, 5], dtype=np.int64)
    assert _utc_texts(before_1970) == [str(pd.Timestamp(v, unit="us", tz="UTC"))
                                       for v in before_1970.tolist()]


@pytest.mark.parametrize("order", [
    np.random.default_rng(3).permutation(1000),
    np.random.default_rng(4).permutation(1000) * 3 + 7,        # gaps
    np.random.default_rng(5).integers(0, 50, 1000),            # repeats
    np.random.default_rng(6).integers(0, 10 ** 12, 1000),      # far apart
    np.array([5, -2, 3, -2, 0]),                               # negative
])
def test_file_order_is_the_stable_argsort(order):
    order = np.asarray(order, dtype=np.int64)
    assert _file_order(order).tolist() == np.argsort(order, kind="stable").tolist()


def _events(tables: list[str], events: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"table_id": pd.Categorical(tables), "event": pd.Categorical(events),
                         "seq": pd.array(range(1, len(tables) + 1), dtype="Int64")})


def _latest_reference(table, anchor, resets):
    n = len(anchor)
    start = np.ones(n, dtype=bool)
    start[1:] = table[1:] != table[:-1]
    if resets is not None:
        start |= resets
    stretch = np.cumsum(start)
    last = np.maximum.accumulate(np.where(anchor, np.arange(n), -1))
    found = last >= 0
    found[found] = stretch[last[found]] == stretch[found]
    return np.where(found, last, -1)


def test_latest_and_event_rows_match_the_row_by_row_versions():
    rng = np.random.default_rng(7)
    n = 3000
    tables = np.sort(rng.choice(["T1", "T2", "T3", "T4"], n)).tolist()
    names = ["roll", "wager_settled", "table_open", "no_roll"]
    events = rng.choice(names, n, p=[0.3, 0.5, 0.05, 0.15]).tolist()
    sh = Shared(_events(tables, events), None)
    ev = np.array(events)
    for name in names:
        assert sh.event_rows(name).tolist() == np.flatnonzero(ev == name).tolist()
    both = np.flatnonzero((ev == "roll") | (ev == "table_open")).tolist()
    assert sh.event_rows("roll", "table_open").tolist() == both
    assert sh.event_rows("ruling").tolist() == []
    table = pd.Categorical(tables).codes
    rolls, opens = sh.event_rows("roll"), sh.event_rows("table_open")
    queries = np.arange(n)
    for resets in (None, opens):
        want = _latest_reference(table, ev == "roll",
                                 None if resets is None else ev == "table_open")
        assert sh.latest(rolls, queries, resets).tolist() == want.tolist()
    ends = [next((j for j in range(r + 1, n) if tables[j] != tables[r]), n) for r in range(n)]
    assert sh.table_end(queries).tolist() == ends


@pytest.mark.parametrize("steps", [1, 2, 8])
def test_next_event_is_next_after_those_events(steps):
    """`Shared.next_event` steps a few rows forward, then searches: the
    same rows as a search among every row of the events, whatever the gap."""
    rng = np.random.default_rng(9)
    n = 4000
    names = ["roll", "wager_settled", "table_open", "dice_offered", "no_roll"]
    events = rng.choice(names, n, p=[0.05, 0.6, 0.01, 0.3, 0.04]).tolist()
    sh = Shared(_events(["T1"] * n, events), None)
    rows = np.concatenate([rng.integers(0, n, 600), [0, n - 2, n - 1]])
    for wanted in (("roll",), ("roll", "table_open"), ("ruling",), ("wager_settled",)):
        assert sh.next_event(rows, *wanted, steps=steps).tolist() == \
            next_after(sh.event_rows(*wanted), rows, n).tolist()


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_ascending_is_numpys(side):
    rng = np.random.default_rng(10)
    for a_size, v_size in ((50, 3000), (3000, 50), (0, 10), (10, 0), (400, 400)):
        a = np.sort(rng.integers(0, 500, a_size))
        v = np.sort(rng.integers(-5, 505, v_size))
        assert searchsorted_ascending(a, v, side).tolist() == \
            np.searchsorted(a, v, side=side).tolist()


def test_row_and_membership_helpers():
    rng = np.random.default_rng(8)
    values = rng.integers(0, 5, 700_000)
    assert rows_where(len(values), lambda a, b: values[a:b] == 3).tolist() == \
        np.flatnonzero(values == 3).tolist()
    assert rows_where(len(values), lambda a, b: values[a:b] > values[a - 1:b - 1],
                      start=1).tolist() == (np.flatnonzero(values[1:] > values[:-1]) + 1).tolist()
    sorted_rows = np.sort(rng.choice(1000, 300, replace=False))
    rows = rng.integers(0, 1000, 500)
    want = np.isin(rows, sorted_rows).tolist()
    assert in_sorted(sorted_rows, rows).tolist() == want
    assert in_sorted(sorted_rows, rows, 1000).tolist() == want
    assert in_sorted(np.empty(0, dtype=np.int64), rows).tolist() == [False] * len(rows)
    after = next_after(sorted_rows, rows, -5).tolist()
    assert after == [next((s for s in sorted_rows.tolist() if s > r), -5) for r in rows.tolist()]


def _dumps(evidence):
    return json.dumps(evidence, sort_keys=True, ensure_ascii=False, default=_jsonable,
                      separators=(",", ":"))


def test_evidence_json_is_json_dumps():
    samples = [{}, {"b": 1, "a": [1, 2.5, None, True]}, {"z": "é\n\"", "y": np.int64(3)},
               {"n": float("nan"), "t": pd.Timestamp("2026-03-01", tz="UTC"),
                "s": {3, 1}, "f": np.float64(0.1), "nested": {"k": ("x", 1)}}]
    assert [evidence_json(e) for e in samples] == [_dumps(e) for e in samples]
    assert evidence_jsons(samples) == [_dumps(e) for e in samples]


def _finalize_reference(parts):
    """The row-by-row finalize the fast one replaced."""
    frame = pd.concat([p for p in parts if len(p)], ignore_index=True)
    frame["_sev"] = frame["severity"].map(SEVERITY_RANK)
    frame["_seqkey"] = frame["seq"].fillna(-1).astype("int64")
    frame = frame.sort_values(
        ["table_id", "_seqkey", "source_file", "source_line", "_sev", "code", "rule_id"],
        kind="stable", na_position="first").reset_index(drop=True)
    keys = (frame["ruleset"].astype(str) + "|" + frame["rule_id"].astype(str) + "|"
            + frame["table_id"].astype(object).fillna("").astype(str) + "|"
            + frame["seq"].astype(object).where(frame["seq"].notna(), None).map(
                lambda v: "" if v is None else str(int(v))))
    no_seq = frame["seq"].isna()
    if no_seq.any():
        keys = keys.where(~no_seq, keys + "|" + frame["source_file"].astype(str).map(
            lambda p: p.replace("\\", "/").rsplit("/", 1)[-1]) + ":"
            + frame["source_line"].astype(str))
    dup = keys.groupby(keys).cumcount()
    keys = keys.where(dup == 0, keys + "#" + dup.astype(str))
    frame["finding_id"] = keys.map(lambda k: hashlib.sha256(k.encode()).hexdigest()[:20])
    return frame


def _random_parts(rng, n: int, count: int, tables: list) -> list[pd.DataFrame]:
    """`count` parts of `n` stamped findings each, on `tables` (None: no
    table), with repeated keys, unread seqs and ties."""
    parts = []
    for k in range(count):
        seq = pd.array([None if rng.random() < 0.1 else int(s)
                        for s in rng.integers(1, 30, n)], dtype="Int64")
        parts.append(pd.DataFrame({
            "table_id": pd.Series([None if rng.random() < 0.05 else t
                                   for t in rng.choice(tables, n)], dtype=object),
            "seq": seq,
            "ts": pd.Series(pd.to_datetime(rng.integers(0, 10 ** 9, n), unit="s", utc=True)),
            "event": pd.Series(["roll"] * n, dtype=object),
            "seat": pd.array([None] * n, dtype="Int64"),
            "actor_role": pd.Series([None] * n, dtype=object),
            "actor_id": pd.Series([None] * n, dtype=object),
            "source_file": pd.Series(rng.choice(["logs/a.csv", "b\\c.jsonl"], n), dtype=object),
            "source_line": pd.array(rng.integers(1, 5, n), dtype="Int64"),
            "code": pd.Series(rng.choice(["x.b", "x.a"], n), dtype=object),
            "rule_id": pd.Series(rng.choice(["R2", "R1", "R10"], n), dtype=object),
            "ruleset": pd.Series([f"rs{k}"] * n, dtype=object),
            "clause": pd.Series(["1"] * n, dtype=object),
            "severity": pd.Series(rng.choice(list(SEVERITY_RANK), n), dtype=object),
            "message": pd.Series([f"m{i}" for i in range(n)], dtype=object),
            "evidence": pd.Series(["{}"] * n, dtype=object),
            "caveat": pd.Series([None] * n, dtype=object),
        }))
    return parts


def test_finalize_orders_and_names_findings_as_before():
    parts = _random_parts(np.random.default_rng(9), 400, 3, ["T2", "T10", "T1"])
    got = finalize(parts)
    want = _finalize_reference(parts)
    assert list(got.columns) == list(FINDING_COLUMNS)
    for column in FINDING_COLUMNS:
        assert got[column].astype(str).tolist() == want[column].astype(str).tolist(), column


@pytest.mark.parametrize("seed", range(6))
def test_findings_sorted_where_found_merge_as_one_finalize(seed):
    """Each batch's findings sorted and named in its worker, then merged in
    the main process (`sort_findings`, `merge_sorted`): the same rows, order
    and ids as one finalize of every part, in batch order. Each table is in
    one batch; rows of no table (or table "") in any, their ids' counters
    running across batches; some tables keyed by site."""
    rng = np.random.default_rng(seed)
    tables = ["T2", "T10", "T1", "", f"casino-b{SITE_SEPARATOR}T1",
              f"casino-a{SITE_SEPARATOR}T10", "T3"]
    parts = _random_parts(rng, 300, 4, tables)
    batches = int(rng.integers(1, 5))
    home = {t: int(rng.integers(0, batches)) for t in tables if t}
    split: list[list[pd.DataFrame]] = [[] for _ in range(batches)]
    for part in parts:  # (a part's rows of no table go to a batch by chance)
        where = np.array([home[t] if isinstance(t, str) and t else int(rng.integers(0, batches))
                          for t in part["table_id"]])
        for b in range(batches):
            if (where == b).any():
                split[b].append(part[where == b].reset_index(drop=True))
    merged = merge_sorted([sort_findings(b) for b in split])
    whole = finalize([p for b in split for p in b])
    assert merged.equals(whole)
    assert merged.columns[0] == "finding_id" and "site" in merged.columns
    want = _finalize_reference([p for b in split for p in b])
    joined = joined_sites(merged)
    for column in FINDING_COLUMNS:
        assert joined[column].astype(str).tolist() == want[column].astype(str).tolist(), column
    assert merged["finding_id"].is_unique


def test_a_table_found_in_two_batches_is_ordered_and_named_again():
    """A safeguard (no engine cuts a table): findings of one table sorted in
    two batches merge as one finalize of both."""
    parts = _random_parts(np.random.default_rng(3), 200, 2, ["T1", "T2"])
    merged = merge_sorted([sort_findings([parts[0]]), sort_findings([parts[1]])])
    assert merged.equals(finalize(parts))
