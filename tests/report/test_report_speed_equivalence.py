"""The report writers' faster paths give exactly what the plain ones gave
(json_text against json.dumps, the HTML digest and cells against their
first versions, JUnit bytes against ET.tostring, finding records shared by
the formats of one write). Equivalence only: no timings here."""

from __future__ import annotations

import collections
import dataclasses
import enum
import json
import math
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from builder import audit
from hypothesis import given, settings
from hypothesis import strategies as st

from auditor.codes import SEVERITY_RANK
from auditor.report import html as html_report
from auditor.report import html_events, json_format, junit, records, sarif
from auditor.report.html_charts import TIMELINE_BINS, time_bins
from auditor.report.html_events import NO_TIME
from auditor.report.json_text import dumps_indented
from auditor.report.provenance import provenance
from auditor.report.shared import sharing

PLANTED = Path(__file__).resolve().parents[2] / "sample_logs" / "nz-table-games" / \
    "night-planted.csv"


def reference(value, indent: int) -> str:
    return json.dumps(value, ensure_ascii=True, indent=indent, separators=(",", ": "))


def outcome(fn, *args):
    """What a call gives: its text, or its error's type and message."""
    try:
        return ("text", fn(*args))
    except Exception as exc:  # noqa: BLE001 (the error is the outcome)
        return ("error", type(exc), str(exc))


class Colour(enum.IntEnum):
    RED = 1


class Tag(str):
    pass


texts = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12) | \
    st.sampled_from(["", "<script>&</script>", "\u2028\u2029", "\x00\x1f\x7f", "\ud800",
                     "\U0001f3b2", 'q"\\/\b\f\n\r\t'])
floats = st.floats(allow_nan=True, allow_infinity=True) | \
    st.sampled_from([-0.0, 0.0, 1e300, -1e-320, 5e-324, 1e16, 1.5, float("nan")])
ints = st.integers() | st.sampled_from([2**63, -2**64, 10**200])
scalars = st.none() | st.booleans() | ints | floats | texts
keys = texts | ints | floats | st.booleans() | st.none()
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.lists(inner, max_size=4).map(tuple)
    | st.dictionaries(keys, inner, max_size=5),
    max_leaves=40)


@settings(max_examples=1000, deadline=None)
@given(values, st.sampled_from([0, 1, 2, 4]))
def test_dumps_indented_is_json_dumps(value, indent):
    assert dumps_indented(value, indent) == reference(value, indent)


# Values it leaves to json.dumps: subclasses, other types, keys json
# refuses, cycles, too deep or too long; the text or the error is json's.
cyclic_list: list = [1]
cyclic_list.append(cyclic_list)
cyclic_dict: dict = {"a": {}}
cyclic_dict["a"]["b"] = cyclic_dict
deep: list = []
for _ in range(5000):
    deep = [deep]


@pytest.mark.parametrize("value", [
    collections.OrderedDict(b=1, a=[Colour.RED]),
    {"enum": Colour.RED, "tag": Tag("x<y>"), Tag("k"): 1, Colour.RED: 2},
    {"np": np.float64(0.1), "np32": np.float32(0.5)},
    [np.int64(3)],
    {"set": {1, 2}},
    {(1, 2): "tuple key"},
    {"bytes": b"x"},
    cyclic_list,
    cyclic_dict,
    deep,
    [10 ** 5000],
    10 ** 5000,
    Tag("top"),
    Colour.RED,
    "top <text>\u2028",
    float("-inf"),
    None,
], ids=lambda v: type(v).__name__)
def test_dumps_indented_defers_to_json(value):
    assert outcome(dumps_indented, value, 2) == outcome(reference, value, 2)


# --- html_events: times, cells, tables, rows ----------------------------------

def fmt_time_reference(ns: int) -> str:
    """fmt_time as first written: by datetime and strftime."""
    if ns == NO_TIME:
        return ""
    ns = int(ns)
    ts = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=ns // 1000)
    text = ts.strftime("%Y-%m-%d %H:%M:%S")
    if ns % 1_000_000_000:
        text += f".{ts.microsecond:06d}".rstrip("0")
    return text


@settings(max_examples=500, deadline=None)
@given(st.integers(min_value=NO_TIME, max_value=2**63 - 1)
       | st.sampled_from([NO_TIME, 0, -1, 1, 999, 1000, -1000, 86_400_000_000_000 - 1,
                          1_700_000_000_123_456_789, -86_400_000_000_001]))
def test_fmt_time_is_the_datetime_spelling(ns):
    assert html_events.fmt_time(ns) == fmt_time_reference(ns)
    assert html_events.fmt_time(np.int64(ns)) == fmt_time_reference(ns)


def text_reference(value) -> str:
    """html_events.text as first written (no fast path for plain types)."""
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, np.integer):
        return str(int(value))
    if isinstance(value, np.floating):
        return text_reference(float(value))
    return str(value)


@settings(max_examples=300, deadline=None)
@given(scalars | st.sampled_from([pd.NA, pd.NaT, np.nan, np.int64(-3), np.float32(2.0),
                                  Colour.RED, Tag("t"), True, False, 1.0, -0.0]))
def test_cell_text_is_unchanged(value):
    assert html_events.text(value) == text_reference(value)


def table_events_reference(events: pd.DataFrame) -> list[tuple]:
    """Each table's span, counts and bins as first computed: every time
    converted to UTC ns, each event's table by a search of the run starts."""
    starts, ends, names = html_events.table_runs(events)
    if not names:
        return []
    ts = html_events.utc_ns(events["ts"])
    t0, t1 = np.minimum.reduceat(ts, starts), np.maximum.reduceat(ts, starts)

    def per_slice(rows):
        k = np.searchsorted(starts, rows, side="right") - 1
        slot = k * TIMELINE_BINS + time_bins(ts[rows], t0[k], t1[k] - t0[k], TIMELINE_BINS)
        return np.bincount(slot, minlength=len(starts) * TIMELINE_BINS) \
            .reshape(len(starts), TIMELINE_BINS)

    rolls = per_slice(np.flatnonzero((events["event"] == "roll").to_numpy()))
    accepts = per_slice(np.flatnonzero((events["event"] == "dice_accepted").to_numpy()))
    return sorted((name, int(t0[k]), int(t1[k]), int(ends[k] - starts[k]),
                   rolls[k].tolist(), accepts[k].tolist()) for k, name in enumerate(names))


def as_tuples(tables) -> list[tuple]:
    return [(t.id, t.t0, t.t1, t.events, t.roll_bins.tolist(), t.shooter_bins.tolist())
            for t in tables]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["T1", "T2", "T3"]),
                          st.sampled_from(["roll", "dice_accepted", "marker"]),
                          st.integers(min_value=-2_000_000_000_000, max_value=2_000_000_000_000)
                          | st.none()),
                min_size=1, max_size=40),
       st.sampled_from(["s", "ms", "us", "ns"]), st.booleans(), st.booleans())
def test_table_events_are_unchanged(rows, unit, aware, categorical):
    rows = sorted(rows, key=lambda r: r[0])  # the events are grouped by table
    us = pd.array([r[2] for r in rows], dtype="Int64")
    ts = pd.to_datetime(us, unit="us", utc=aware).as_unit(unit) if unit != "us" \
        else pd.to_datetime(us, unit="us", utc=aware)
    events = pd.DataFrame({"table_id": [r[0] for r in rows], "event": [r[1] for r in rows],
                           "ts": ts})
    if categorical:
        events = events.astype({"table_id": "category", "event": "category"})
    assert as_tuples(html_events.table_events(events)) == table_events_reference(events)


def test_table_events_of_times_out_of_nanosecond_range_fail_as_before():
    events = pd.DataFrame({"table_id": ["T1", "T1"], "event": ["roll", "roll"],
                           "ts": pd.to_datetime(["2020-01-01", "2500-01-01"]).as_unit("s")})
    assert outcome(html_events.table_events, events)[:2] == \
        outcome(table_events_reference, events)[:2]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a.csv", "b.csv"]),
                          st.integers(min_value=0, max_value=6) | st.none()), max_size=30),
       st.lists(st.tuples(st.sampled_from(["a.csv", "b.csv", "c.csv"]),
                          st.integers(min_value=0, max_value=8) | st.none()),
                min_size=1, max_size=8))
def test_event_positions_are_the_first_row_of_each_file_and_line(rows, listed):
    events = pd.DataFrame({
        "source_file": pd.Categorical([f for f, _ in rows]),
        "source_line": pd.array([n for _, n in rows], dtype="Int64")})
    wanted = pd.DataFrame({"source_file": [f for f, _ in listed],
                           "source_line": pd.array([n for _, n in listed], dtype="Int64")})
    first = {}
    for i, key in enumerate(rows):
        if key[1] is not None:
            first.setdefault(key, i)
    expected = [first.get(key, -1) if key[1] is not None else -1 for key in listed]
    assert html_events.event_positions(events, wanted).tolist() == expected


def test_categories_are_those_of_astype_category():
    for series in (pd.Series(["b", "a", None, "b"], dtype="category"),
                   pd.Series(pd.Categorical(["x", "y"], categories=["y", "x", "z"],
                                            ordered=True)),
                   pd.Series(["b", "a", None])):
        fast, plain = html_events._categories(series), series.astype("category").cat
        assert fast.categories.equals(plain.categories)
        assert fast.codes.tolist() == plain.codes.tolist()


# --- html: worst severity per table -------------------------------------------

@pytest.mark.parametrize("severities", [
    ["minor", "critical", "info"], ["info"], [], ["minor", "bogus", "major"],
])
def test_worst_ranks_are_pythons_min(severities):
    keys = pd.Series(["T1", "T2", "T1"][:len(severities)], dtype=object)
    frame = pd.DataFrame({"severity": pd.Series(severities, dtype=object), "key": keys})
    expected = frame.groupby(keys, sort=False)["severity"] \
        .agg(lambda s: min(s.map(SEVERITY_RANK))).to_dict() if len(frame) else {}
    got = html_report._worst_ranks(frame["severity"], keys)
    assert {k: str(v) for k, v in got.items()} == {k: str(v) for k, v in expected.items()}


# --- junit: the serialized bytes ----------------------------------------------

@settings(max_examples=300, deadline=None)
@given(texts | st.just(""), texts, texts)
def test_an_element_is_written_as_elementtree_writes_it(text, message, kind):
    """junit.xml is written element by element (never a tree in memory):
    each as ElementTree's `tostring` writes it, its escaping included."""
    element = ET.Element("failure", {"message": message, "type": kind})
    element.text = text
    assert junit._element("failure", [("message", message), ("type", kind)], text) == \
        ET.tostring(element, encoding="unicode")


# --- the finding records, shared by the formats of one write ------------------

def test_finding_records_are_derived_once_per_write_and_left_unmodified():
    result = audit([str(PLANTED)], "nz-table-games")
    meta = provenance(result)
    fresh = records.finding_records(result.findings)
    assert records.finding_records(result.findings) is not fresh
    with sharing():
        shared_records = records.finding_records(result.findings)
        assert records.finding_records(result.findings) is shared_records
        texts = records.record_texts(result.findings)
        assert records.record_texts(result.findings) is texts
        jsonl = json_format.findings_jsonl(result, meta)
        sarif.sarif_log(result, meta)
        junit.junit_bytes(result, meta)
        assert shared_records == fresh  # no format changed them
    assert jsonl == json_format.findings_jsonl(result, meta)
    assert records.finding_records(result.findings) is not shared_records
    # a line is its record's text with the status and waiver after it
    lines = [json.loads(line) for line in jsonl.splitlines()]
    assert texts == [json_format.compact_json(r) for r in fresh]
    assert lines == [{**r, "status": "new", "waiver": None} for r in fresh]
    assert jsonl == "".join(json_format.inert_json({**r, "status": "new", "waiver": None}) + "\n"
                            for r in fresh)


def test_finding_statuses_are_those_read_row_by_row():
    """Column by column, a status shared by the findings no waiver waived:
    the same statuses, and one waiver object per waiver, as reading each
    row of the triage's columns gives."""
    rng = np.random.default_rng(5)
    n = 500
    status = rng.choice(["new", "known", "waived"], n)
    number = [int(rng.integers(1, 4)) if s == "waived" else None for s in status]
    findings = pd.DataFrame({
        "status": pd.Series(status, dtype=object),
        "in_baseline": pd.Series(rng.choice([True, False, None], n), dtype=object),
        "waiver": pd.array(number, dtype="Int64"),
        "waiver_reason": pd.Series([None if k is None else f"reason {k}" for k in number],
                                   dtype=object),
        "waiver_expires": pd.Series([None if k in (None, 2) else "2027-01-01" for k in number],
                                    dtype=object),
    })
    waivers: dict[int, dict] = {}
    want = []
    for s, b, k, reason, expires in findings.itertuples(index=False, name=None):
        waiver = None
        if records.plain(k) is not None:
            waiver = waivers.setdefault(int(k), {"number": int(k), "reason": reason,
                                                 "expires": records.plain(expires)})
        want.append(records.FindingStatus(str(s), records.plain(b), waiver))
    got = records.finding_statuses(findings)
    assert got == want
    assert len({id(s.waiver) for s in got if s.waiver}) == 3


# --- SARIF: each result encoded once -----------------------------------------------

def _sarif_as_first_written(result, meta, max_results):
    """The SARIF log as it was first fitted: the whole document encoded
    again at each cut."""
    rules = [sarif._rule(r) for r in records.rules_of(result)]
    recs = records.finding_records(result.findings)
    statuses = records.finding_statuses(result.findings)
    results = sarif.sarif_results(result, rules)
    doc = sarif._document(result, meta, rules, results)
    text = json_format.inert_json(doc, indent=2)
    if not max_results or (len(recs) <= max_results and len(text) < sarif.MAX_BYTES):
        return doc, text
    order = sorted(range(len(recs)), key=lambda i: (
        statuses[i].status != "new", SEVERITY_RANK.get(recs[i]["severity"], 9), i))
    keep = min(max_results, len(recs))
    while True:
        doc = sarif._document(result, meta, rules, [results[i] for i in sorted(order[:keep])],
                              sarif._omitted(dict(zip(*records.finding_columns(
                                  result.findings))), sorted(order[keep:]), max_results))
        text = json_format.inert_json(doc, indent=2)
        if len(text) < sarif.MAX_BYTES or keep == 0:
            return doc, text
        keep = min(keep - 1, int(keep * sarif.MAX_BYTES / len(text) * 0.98))


@pytest.mark.parametrize(("max_results", "room", "kept"), [
    (sarif.MAX_RESULTS, None, "all"),  # within both limits
    (0, 0.0, "all"),  # no limit at all, however small MAX_BYTES
    (3, None, 3),  # cut by count
    (sarif.MAX_RESULTS, 0.5, "some"),  # cut by size alone
    (5, 0.5, "some"),  # by count, then by size (or by count alone)
    (5, 0.0, 0),  # not even the run without results fits: none kept
])
def test_sarif_encoded_once_is_the_document_encoded_whole(monkeypatch, max_results, room,
                                                           kept):
    """`room`: MAX_BYTES between the run's size with no results (0.0) and
    with every result (1.0); None: as it is."""
    result = audit([str(PLANTED)], "nz-table-games")
    meta = provenance(result)
    if room is not None:
        whole = len(sarif._fitted(result, meta, 0))
        rules = [sarif._rule(r) for r in records.rules_of(result)]
        bare = len(json_format.inert_json(sarif._document(result, meta, rules, []), indent=2))
        monkeypatch.setattr(sarif, "MAX_BYTES", int(bare + room * (whole - bare)))
    text = sarif._fitted(result, meta, max_results)
    doc, first = _sarif_as_first_written(result, meta, max_results)
    assert text == first
    assert json.loads(text) == doc
    n = len(doc["runs"][0]["results"])
    total = len(result.findings)
    assert total > 5
    assert {"all": n == total, "some": 0 < n < total}.get(kept, n == kept)
    if max_results and n < total:
        assert len(text) < sarif.MAX_BYTES or n == 0


def test_sarif_of_no_findings_is_the_document_encoded_whole():
    result = audit([str(PLANTED)], "nz-table-games")
    empty = dataclasses.replace(result, findings=result.findings.iloc[:0])
    meta = provenance(empty)
    text = sarif._fitted(empty, meta, sarif.MAX_RESULTS)
    doc = json.loads(text)
    assert doc["runs"][0]["results"] == []
    assert text == json_format.inert_json(doc, indent=2)


# --- SARIF and the records' texts made from templates, on any findings ------------

def _sarif_results_row_by_row(result, rules):
    """SARIF's results as they were first written: a dict a finding."""
    index = {r["id"]: i for i, r in enumerate(rules)}
    out = []
    for rec, (status, in_baseline, waiver) in zip(
            records.finding_records(result.findings), records.finding_statuses(result.findings)):
        res = {"ruleId": rec["rule_id"]}
        if rec["rule_id"] in index:
            res["ruleIndex"] = index[rec["rule_id"]]
        res["level"] = sarif.LEVELS[rec["severity"]]
        res["message"] = {"text": rec["message"] or rec["code"]}
        if rec["source_file"]:
            loc = {"artifactLocation": {"uri": sarif.artifact_uri(rec["source_file"])}}
            if rec["source_line"] is not None and rec["source_line"] >= 1:
                loc["region"] = {"startLine": rec["source_line"]}
            res["locations"] = [{"physicalLocation": loc}]
        res["partialFingerprints"] = {sarif.FINGERPRINT: rec["finding_id"]}
        if in_baseline is not None:
            res["baselineState"] = "unchanged" if in_baseline else "new"
        if status == "waived":
            waiver = waiver or {}
            res["suppressions"] = [{
                "kind": "external", "status": "accepted",
                "justification": waiver.get("reason", ""),
                "properties": {"waiver": waiver.get("number"), "expires": waiver.get("expires")},
            }]
        res["properties"] = {
            "status": status, "finding_id": rec["finding_id"], "code": rec["code"],
            "clause": rec["clause"], "severity": rec["severity"],
            **({"site": rec["site"]} if "site" in rec else {}),
            "table_id": rec["table_id"], "seq": rec["seq"], "ts": rec["ts"],
            "event": rec["event"], "seat": rec["seat"], "actor_role": rec["actor_role"],
            "actor_id": rec["actor_id"], "evidence": rec["evidence"],
        }
        out.append(res)
    return out


maybe_texts = st.none() | texts | st.sampled_from(["T1", "T1", "r-1", ""])
whole = st.none() | st.integers(-3, 3) | st.sampled_from([2**40, -2**40])
evidence = st.none() | st.just("") | values.map(
    lambda v: json.dumps(v if isinstance(v, dict) else {"v": v}, allow_nan=True))
finding_rows = st.fixed_dictionaries({
    "finding_id": texts, "code": maybe_texts, "rule_id": maybe_texts, "clause": maybe_texts,
    "severity": st.sampled_from(list(sarif.LEVELS)), "table_id": maybe_texts, "seq": whole,
    "ts": st.none() | st.integers(0, 2**40), "event": maybe_texts, "seat": whole,
    "actor_role": maybe_texts, "actor_id": maybe_texts, "message": maybe_texts,
    "evidence": evidence, "source_file": maybe_texts, "source_line": whole,
    "site": maybe_texts, "status": st.sampled_from(["new", "known", "waived"]),
    "in_baseline": st.none() | st.booleans(), "waiver": st.none() | st.integers(1, 3),
})


def _findings_of(rows, with_sites: bool) -> pd.DataFrame:
    frame = pd.DataFrame({c: pd.Series([r[c] for r in rows], dtype=object)
                          for c in ("finding_id", "code", "rule_id", "clause", "severity",
                                    "table_id", "event", "actor_role", "actor_id", "message",
                                    "evidence", "source_file", "status", "in_baseline")})
    frame["ruleset"] = "r"
    frame["caveat"] = None
    for c in ("seq", "seat", "source_line"):
        frame[c] = pd.array([r[c] for r in rows], dtype="Int64")
    frame["ts"] = pd.to_datetime(pd.Series([r["ts"] for r in rows], dtype="Int64"),
                                 unit="us", utc=True)
    if with_sites:
        frame.insert(frame.columns.get_loc("table_id"), "site",
                     pd.Series([r["site"] for r in rows], dtype=object))
    number = [r["waiver"] if r["status"] == "waived" else None for r in rows]
    frame["waiver"] = pd.array(number, dtype="Int64")
    frame["waiver_reason"] = pd.Series([None if n is None else f"<why {n}>" for n in number],
                                       dtype=object)
    frame["waiver_expires"] = pd.Series([None if n in (None, 2) else "2027-01-01"
                                         for n in number], dtype=object)
    return frame


@settings(max_examples=150, deadline=None)
@given(st.lists(finding_rows, max_size=12), st.booleans())
def test_sarif_and_record_texts_from_templates_are_those_written_whole(rows, with_sites):
    planted = _planted()
    rules = [sarif._rule(r) for r in records.rules_of(planted)]
    known = [r["id"] for r in rules]
    for k, row in enumerate(rows):  # some rule ids the ruleset has
        if k % 2:
            row["rule_id"] = known[k % len(known)]
    result = dataclasses.replace(planted, findings=_findings_of(rows, with_sites))
    meta = provenance(planted)

    def whole():
        doc = sarif._document(result, meta, rules, _sarif_results_row_by_row(result, rules))
        return json_format.inert_json(doc, indent=2)

    # (the same text, or the same error: a lone surrogate in a file's name
    # is no URI)
    assert outcome(sarif._fitted, result, meta, 0) == outcome(whole)
    if outcome(whole)[0] == "text":
        results = sarif.sarif_results(result, rules)
        assert json_format.inert_json(sarif._document(result, meta, rules, results),
                                      indent=2) == whole()
    assert records.record_texts(result.findings) == [
        json_format.compact_json(r) for r in records.finding_records(result.findings)]


_PLANTED_RESULT: list = []


def _planted():
    if not _PLANTED_RESULT:
        _PLANTED_RESULT.append(audit([str(PLANTED)], "nz-table-games"))
    return _PLANTED_RESULT[0]


@settings(max_examples=150, deadline=None)
@given(st.lists(finding_rows, max_size=12), st.booleans(),
       st.sampled_from(["major", "minor", "none"]), st.booleans())
def test_junit_is_the_document_elementtree_writes(rows, with_sites, fail_on, left_out):
    """The whole junit.xml, read back and written again by ElementTree
    (indented, with its declaration), is the same bytes: the streamed
    writer's indentation, escaping and empty elements are ElementTree's."""
    planted = _planted()
    known = [r.id for r in records.rules_of(planted)]
    for k, row in enumerate(rows):  # some rule ids the ruleset has (every finding has one)
        row["rule_id"] = known[k % len(known)] if k % 2 else row["rule_id"] or "r-1"
        row["code"] = row["code"] or "log.malformed"
    result = dataclasses.replace(planted, findings=_findings_of(rows, with_sites))
    meta = {**provenance(planted), "verdict": {"fail_on": fail_on}}
    if left_out:
        meta["not_audited"] = [{"file": "a<&\n.csv", "reason": 'x"y\tz'}]
        meta["not_evaluated"] = [{"rule": known[0], "file": "f.csv", "reason": "<absent>"}]
    data = junit.junit_bytes(result, meta)
    root = ET.fromstring(data)
    ET.indent(root)
    assert data == ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
    whole_blocks = junit.FAILURES_A_BLOCK
    try:  # a rule's failures made a few at a time: the same document
        junit.FAILURES_A_BLOCK = 2
        assert junit.junit_bytes(result, meta) == data
    finally:
        junit.FAILURES_A_BLOCK = whole_blocks


@settings(max_examples=150, deadline=None)
@given(st.lists(finding_rows, min_size=1, max_size=12), st.booleans(), st.data())
def test_texts_of_some_findings_are_those_of_every_finding_taken(rows, with_sites, data):
    """SARIF's kept results make their texts alone (`column_texts_at`), or
    take them from a write's shared texts of every finding: the same
    texts either way."""
    findings = _findings_of(rows, with_sites)
    positions = sorted(data.draw(st.sets(st.integers(0, len(rows) - 1))))
    every = records.column_texts(findings)
    taken = {name: [column[p] for p in positions] for name, column in every.items()}
    assert records.column_texts_at(findings, positions) == taken
    assert records.column_texts_at(findings, positions, ("evidence",)) == \
        {"evidence": taken["evidence"]}
    with sharing():
        records.column_texts(findings)  # (made by another format of the write)
        assert records.column_texts_at(findings, positions) == taken
        assert records.column_texts_at(findings, positions, ("evidence",)) == \
            {"evidence": taken["evidence"]}


@settings(max_examples=150, deadline=None)
@given(st.lists(finding_rows, max_size=12), st.booleans(), st.integers(1, 5),
       st.sampled_from(["none", "columns", "records"]))
def test_record_texts_a_block_at_a_time_are_the_records_texts(rows, with_sites, size, made):
    """The json format's records a block at a time: made for each block,
    or sliced from what another format of the write made (each cell's
    texts, or every record's), they are `record_texts` in order."""
    findings = _findings_of(rows, with_sites)
    whole = records.record_texts(findings)
    with sharing():
        if made == "columns":
            records.column_texts(findings)
        elif made == "records":
            records.record_texts(findings)
        blocks = list(records.record_texts_blocks(findings, size))
    assert [len(b) for b in blocks] == [min(size, len(whole) - a)
                                        for a in range(0, len(whole), size)]
    assert [t for block in blocks for t in block] == whole
