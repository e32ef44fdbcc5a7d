"""The `junit` format: `junit.xml` for CI dashboards.

One `<testsuite>` (the ruleset) with one `<testcase>` per rule (classname =
ruleset id, name = "rule id + code"). A new finding at or above the
verdict's `--fail-on` (default major; none under `--fail-on none`) is a
`<failure>` of its rule's test case (message = "table seq N: message",
type = its severity, text = status, table, code, clause, seq, ts, actor,
evidence, source). Every other finding of the rule (below `--fail-on`,
known or waived) is listed in the test case's `<system-out>`, never as a
failure; a rule with such findings only is `<skipped>` when they are all
known or waived; a rule the audit could not evaluate in some file is
`<skipped>` too when nothing fails it (its message says where and why; the
suite's `not_evaluated` properties list them). The size grows with the
findings and the rules, not with tables x rules. Counts: `tests` rules, `failures` rules with a failing
finding, `skipped` rules with only known or waived findings, `errors`
always 0. The suite's properties say the ruleset, its hash, the auditor
version, `fail_on` and the number of tables.

Written as xml.etree.ElementTree writes it (element by element, never a
tree in memory), so `&`, `<`, `>` and quotes are escaped;
characters XML 1.0 cannot carry, other control characters and format
characters (bidirectional overrides) are written as visible `\\uXXXX`
text. Same inputs give the same bytes.
"""

from __future__ import annotations

from pathlib import Path

from auditor.atomic import atomic_path
from auditor.audit.coverage import scoped
from auditor.codes import REPORT_ONLY, SEVERITY_RANK
from auditor.escape import html_safe_json, xml_text
from auditor.report.records import (
    FindingStatus,
    column_texts_at,
    each_once,
    finding_columns,
    finding_statuses,
    rules_of,
    table_label,
)
from auditor.report.summary import incomplete_text, verdict_line

NO_TABLE = "(no table)"


#: A finding's lines in the XML's text (`_details`), a value a line.
_DETAIL_LINES = ("status", "table", "code", "clause", "severity", "seq", "ts", "event", "actor",
                 "evidence", "source", "finding_id")
_DETAIL = "\n".join(f"{key}: {{}}" for key in _DETAIL_LINES).format


def _details(cells: dict, texts: dict, statuses: list[FindingStatus]) -> list[str]:
    """Each finding as lines of `key: value` (and its waiver's line when
    waived), written column by column: a line break in a value written as
    a visible `\\n` (as `one_line` does; `xml_text` then writes every
    other invisible character), so no value (a table id holding a line
    break) starts a line of its own in the XML's text, which a CI log
    prints as it is (`--format junit:-`)."""
    def either(values, missing):
        return [missing if v is None else v for v in values]

    def filled(values):  # (`or`: an empty text is missing too)
        return [v or "-" for v in values]

    columns = [  # (in _DETAIL_LINES' order)
        [s.status for s in statuses], either(cells["table_id"], NO_TABLE), cells["code"],
        cells["clause"], cells["severity"], either(cells["seq"], "-"), filled(cells["ts"]),
        filled(cells["event"]),
        [" ".join(str(v) for v in pair if v) or "-"
         for pair in zip(cells["actor_role"], cells["actor_id"])],
        each_once(html_safe_json, texts["evidence"]),  # (`inert_json` of each evidence)
        [f"{file}:{line}" for file, line in zip(cells["source_file"], cells["source_line"])],
        cells["finding_id"],
    ]
    out = list(map(_DETAIL, *columns))
    for i, status in enumerate(statuses):
        waiver = [f"waiver: {status.waiver['number']}: {status.waiver['reason']}"] \
            if status.waiver else []
        if waiver:
            out[i] += "\n" + waiver[0]
        if out[i].count("\n") >= len(_DETAIL_LINES) + len(waiver):  # a break in a value
            lines = [f"{key}: {column[i]}" for key, column in zip(_DETAIL_LINES, columns)]
            out[i] = "\n".join(line.replace("\n", "\\n") for line in lines + waiver)
    return out


#: What a failure's message says of its finding (`failure_message`).
_MESSAGE = ("site", "table_id", "seq", "message")


def failure_message(rec: dict) -> str:
    table = table_label(rec) or NO_TABLE
    seq = rec["seq"] if rec["seq"] is not None else "-"
    return f"{table} seq {seq}: {rec['message']}"


def fail_limit(meta: dict) -> int:
    """The severity rank at or above which a new finding fails (-1: none
    does), from the verdict recorded in `meta` (major when none is)."""
    fail_on = (meta.get("verdict") or {}).get("fail_on", "major")
    return -1 if fail_on == REPORT_ONLY else SEVERITY_RANK.get(fail_on, SEVERITY_RANK["major"])


def _document(result, meta: dict):
    """The document's parts, worked out before a byte is written (the
    counts stand in its first element): the root's and the suite's
    attributes, the properties, each test case as (attributes, its failing
    findings, its other children: (tag, attributes, text)), and what makes
    a finding's `<failure>` (each made as it is written)."""
    names, columns = finding_columns(result.findings)
    cells = dict(zip(names, columns))
    statuses = finding_statuses(result.findings)
    limit = fail_limit(meta)
    fails = [st.status == "new" and SEVERITY_RANK[severity] <= limit
             for st, severity in zip(statuses, cells["severity"])]

    def details(indices: list[int]) -> list[str]:
        """The details of the findings at `indices`, made together (a
        failing finding's says no waiver)."""
        return _details({name: [column[i] for i in indices] for name, column in cells.items()},
                        column_texts_at(result.findings, indices, ("evidence",)),
                        [FindingStatus(statuses[i].status, statuses[i].in_baseline, None)
                         if fails[i] else statuses[i] for i in indices])
    rules = [(r.id, r.code) for r in rules_of(result)]
    by_rule: dict[str, list[int]] = {}
    for i, rule_id in enumerate(cells["rule_id"]):
        by_rule.setdefault(rule_id, []).append(i)
    known_rules = {rule_id for rule_id, _ in rules}
    rules += sorted({(rule_id, code) for rule_id, code in zip(cells["rule_id"], cells["code"])
                     if rule_id not in known_rules})

    suite_name = xml_text(result.ruleset.id)
    fail_on = (meta.get("verdict") or {}).get("fail_on", "major")
    props = [(name, xml_text(value)) for name, value in (
        ("ruleset", result.ruleset.id), ("ruleset_hash", result.ruleset.content_hash),
        ("auditor_version", meta.get("auditor_version", "")), ("fail_on", fail_on),
        ("tables", str(len(result.tables))))]
    incomplete = incomplete_text(meta.get("not_evaluated", getattr(result, "not_evaluated", [])),
                                 meta.get("not_audited", []))
    if incomplete:  # beside the verdict, as on the terminal
        props.append(("incomplete", xml_text(
            verdict_line(meta.get("verdict") or {"fail_on": fail_on}, incomplete))))
    props += [("not_audited", xml_text(f"{e['file']}: {e['reason']}"))
              for e in meta.get("not_audited", [])]
    unseen: dict[str, list[str]] = {}
    for e in meta.get("not_evaluated", getattr(result, "not_evaluated", [])):
        unseen.setdefault(e["rule"], []).append(f"{scoped(e, e['file'])}: {e['reason']}")
    props += [("not_evaluated", xml_text(f"{rule_id} @ {w}"))
              for rule_id, where in unseen.items() for w in where]
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    cases = []
    seen: set[str] = set()
    for rule_id, code in rules:
        if rule_id in seen:
            continue
        seen.add(rule_id)
        counts["tests"] += 1
        failing, other = [], []
        for i in by_rule.get(rule_id, ()):
            (failing if fails[i] else other).append(i)
        children = []
        if failing:
            counts["failures"] += 1
        elif rule_id in unseen:
            children.append(("skipped", [("message", xml_text(
                "not evaluated: " + "; ".join(unseen[rule_id])))], None))
            counts["skipped"] += 1
        elif other and all(statuses[i].status != "new" for i in other):
            n_known = sum(1 for i in other if statuses[i].status == "known")
            children.append(("skipped", [(
                "message", f"{n_known} known, {len(other) - n_known} waived finding(s)")], None))
            counts["skipped"] += 1
        if other:
            children.append(("system-out", [], lambda other=other: xml_text(
                _not_failing_header([statuses[i] for i in other], fail_on) + "\n\n"
                + "\n\n".join(details(other)))))
        cases.append(([("classname", suite_name), ("name", xml_text(f"{rule_id} {code}"))],
                      failing, children))
    for e in meta.get("not_audited", []):  # a file not read is an error, not a pass
        cases.append(([("classname", suite_name),
                       ("name", xml_text(f"not audited {e['file']}"))], [],
                      [("error", [("type", "not_audited"), ("message", xml_text(
                          f"{e['file']}: not audited: {e['reason']}"))], None)]))
        counts["tests"] += 1
        counts["errors"] += 1

    def failures(indices: list[int]):
        """The `<failure>` of each finding at `indices`, their details made
        FAILURES_A_BLOCK at a time."""
        for start in range(0, len(indices), FAILURES_A_BLOCK):
            block = indices[start:start + FAILURES_A_BLOCK]
            for i, detail in zip(block, details(block)):
                yield _element("failure", [
                    ("message", xml_text(failure_message({key: cells[key][i] for key in _MESSAGE
                                                          if key in cells}))),
                    ("type", xml_text(cells["severity"][i]))], xml_text(detail))

    named = [("name", xml_text(f"auditor {result.ruleset.id}")), *counts.items()]
    return named, [("name", suite_name), *counts.items()], props, cases, failures


#: Failures whose details are made together (`_document`): the details of
#: a million failures are never all in memory at once.
FAILURES_A_BLOCK = 16384


def junit_texts(result, meta: dict):
    """junit.xml's text, a piece at a time: the document ElementTree writes
    for it indented (`ET.indent`, two spaces a level) with its declaration,
    and a line break at the end (tests/report/test_report_speed_equivalence.py
    holds the two the same), written element by element so that a report
    of a million failures is never a tree, nor one text, in memory."""
    root, suite, props, cases, failures = _document(result, meta)
    yield "<?xml version='1.0' encoding='utf-8'?>\n"
    yield f"<testsuites{_attributes(root)}>\n  <testsuite{_attributes(suite)}>"
    yield "\n    <properties>"
    for name, value in props:
        yield f'\n      <property{_attributes([("name", name), ("value", value)])} />'
    yield "\n    </properties>"
    for attributes, failing, children in cases:
        if not failing and not children:
            yield f"\n    <testcase{_attributes(attributes)} />"
            continue
        yield f"\n    <testcase{_attributes(attributes)}>"
        for failure in failures(failing):
            yield "\n      " + failure
        for tag, attrs, text in children:
            yield "\n      " + _element(tag, attrs, text() if callable(text) else text)
        yield "\n    </testcase>"
    yield "\n  </testsuite>\n</testsuites>\n"


def _element(tag: str, attributes, text: str | None) -> str:
    """An element without children as ElementTree writes it."""
    if not text:
        return f"<{tag}{_attributes(attributes)} />"
    return f"<{tag}{_attributes(attributes)}>{_character_data(text)}</{tag}>"


def _attributes(pairs) -> str:
    return "".join(f' {name}="{_attribute_value(str(value))}"' for name, value in pairs)


def _character_data(text: str) -> str:
    """Text escaped as ElementTree escapes an element's text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _attribute_value(text: str) -> str:
    """Text escaped as ElementTree (Python 3.11) escapes an attribute's
    value: the markup characters, the quote, and CR, LF and tab as
    character references (so that a reader does not fold them to spaces)."""
    return _character_data(text).replace('"', "&quot;").replace("\r", "&#13;") \
        .replace("\n", "&#10;").replace("\t", "&#09;")


def _not_failing_header(other: list[FindingStatus], fail_on: str) -> str:
    n_known = sum(1 for st in other if st.status == "known")
    n_waived = sum(1 for st in other if st.status == "waived")
    n_below = len(other) - n_known - n_waived
    below = (f"{n_below} new finding(s), not failing under --fail-on none"
             if fail_on == REPORT_ONLY else f"{n_below} new finding(s) below {fail_on}")
    return f"Not failing: {below}, {n_known} known, {n_waived} waived."


def junit_bytes(result, meta: dict) -> bytes:
    """junit.xml's bytes (a character UTF-8 cannot carry, a lone surrogate,
    as a character reference, as ElementTree writes it)."""
    return "".join(junit_texts(result, meta)).encode("utf-8", "xmlcharrefreplace")


def text(result, meta: dict) -> str:
    return junit_bytes(result, meta).decode("utf-8")


def write(result, meta: dict, out: Path) -> list[str]:
    """The `junit` format: junit.xml, written as it is made."""
    target = out / "junit.xml"
    with atomic_path(target) as tmp, \
            open(tmp, "w", encoding="utf-8", errors="xmlcharrefreplace", newline="") as sink:
        sink.writelines(junit_texts(result, meta))
    return [str(target)]
