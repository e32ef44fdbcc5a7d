"""The `sarif` format: `findings.sarif`, SARIF 2.1.0 for code-scanning
dashboards.

One run. `tool.driver` is the auditor, its `rules` the ruleset's rules (id,
summary, the code's meaning from the violation catalogue, clause, code and
severity). One result per finding: level by severity (critical and major
are errors, minor warnings, info notes), the log file and line as its
location, the finding id as a partial fingerprint, table, seq, evidence and
status as properties. With a baseline, `baselineState` is "unchanged" for a
known finding and "new" otherwise; a waived finding carries an external,
accepted suppression whose justification is the waiver's reason.

Volume: GitHub code scanning refuses a run of more than 25,000 results or
10 MB, so by default a run holds at most MAX_RESULTS results and MAX_BYTES
bytes: the new findings first, most severe first, then the known and
waived ones (each group in the findings' order). The findings left out are
counted per rule in the run's `properties.omittedResults`, and a warning
notification (`invocations[0].toolExecutionNotifications`) says how many
and where the full list is. `--sarif-max-results N` sets the count (0: no
limit, of count or size).

JSON-escaped like the `json` format (ASCII only, `<`, `>`, `&` escaped).
Same inputs give the same bytes.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path, PurePosixPath
from urllib.parse import quote

import numpy as np

from auditor import __version__
from auditor.atomic import write_text
from auditor.audit.coverage import scoped
from auditor.codes import CODES, SEVERITY_RANK
from auditor.errors import unshown_path
from auditor.escape import html_safe_json
from auditor.report.json_format import inert_json
from auditor.report.json_text import Template, hole, nested_indented, quote_json
from auditor.report.records import (
    column_texts_at,
    each_once,
    finding_columns,
    finding_records,
    finding_statuses,
    rules_of,
)

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
LEVELS = {"critical": "error", "major": "error", "minor": "warning", "info": "note"}
FINGERPRINT = "auditorFindingId/v1"
#: GitHub code scanning's limits on one run: results, and bytes
MAX_RESULTS = 25_000
MAX_BYTES = 10_000_000


#: A path `shown_path` wrote with its bytes that are not UTF-8 as `\\xNN`
#: (each a byte over 0x7f), no other backslash in it.
_SHOWN_BYTES = re.compile(r"(?:[^\\]|\\x[89a-f][0-9a-f])*")


def artifact_uri(path: str) -> str:
    """A log's path as a URI reference: a relative path stays relative (with
    `/` separators, percent-encoded), an absolute one becomes a file: URI."""
    shown = str(path)
    if "\\x" in shown and _SHOWN_BYTES.fullmatch(shown) and shown[1:2] != ":":  # not UTF-8,
        data = os.fsencode(unshown_path(shown))  # (its bytes: decision 118)
        return ("file://" if data.startswith(b"/") else "") + quote(data, safe="/")
    posix = shown.replace("\\", "/")
    if PurePosixPath(posix).is_absolute():
        return "file://" + quote(posix, safe="/")
    if len(posix) > 1 and posix[1] == ":":  # a Windows drive letter
        return "file:///" + posix[:2] + quote(posix[2:], safe="/")
    return quote(posix, safe="/")


def _rule(rule) -> dict:
    meaning = CODES.get(rule.code, rule.code)
    return {
        "id": rule.id,
        "shortDescription": {"text": rule.summary or meaning},
        "fullDescription": {"text": meaning},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"clause": rule.clause, "code": rule.code, "severity": rule.severity},
    }


#: A result's properties, in order (`site` only where the findings have sites).
PROPERTY_KEYS = ("status", "finding_id", "code", "clause", "severity", "site", "table_id",
                 "seq", "ts", "event", "seat", "actor_role", "actor_id", "evidence")


def _result(rule_id, rule_index, level, message, uri, start_line, finding_id,
            baseline_state, suppression, properties: dict) -> dict:
    """One SARIF result: the one place its shape is written (the results'
    texts are made from it too, `_Texts`). An optional part given as None
    is left out: `rule_index`, `uri` (then `start_line` too), `start_line`,
    `baseline_state`, `suppression` (justification, waiver, expires)."""
    res = {"ruleId": rule_id}
    if rule_index is not None:
        res["ruleIndex"] = rule_index
    res["level"] = level
    res["message"] = {"text": message}
    if uri is not None:
        loc = {"artifactLocation": {"uri": uri}}
        if start_line is not None:
            loc["region"] = {"startLine": start_line}
        res["locations"] = [{"physicalLocation": loc}]
    res["partialFingerprints"] = {FINGERPRINT: finding_id}
    if baseline_state is not None:  # the audit had a baseline
        res["baselineState"] = baseline_state
    if suppression is not None:
        justification, waiver, expires = suppression
        res["suppressions"] = [{
            "kind": "external", "status": "accepted", "justification": justification,
            "properties": {"waiver": waiver, "expires": expires},
        }]
    res["properties"] = properties
    return res


def _baseline_state(in_baseline) -> str | None:
    return None if in_baseline is None else "unchanged" if in_baseline else "new"


def _suppression(status) -> tuple | None:
    """(justification, waiver number, expires) of a waived finding's status."""
    if status.status != "waived":
        return None
    waiver = status.waiver or {}
    return waiver.get("reason", ""), waiver.get("number"), waiver.get("expires")


def _starts(source_line) -> bool:
    return source_line is not None and source_line >= 1


def sarif_results(result, rules: list[dict], only: list[int] | None = None) -> list[dict]:
    """One SARIF result per finding, in the findings' order; with `only`,
    for the findings at those positions alone (in the order given). (The
    report's text is made by `_Texts`, the same results written at once.)"""
    findings = result.findings
    index = {r["id"]: i for i, r in enumerate(rules)}
    records, statuses = finding_records(findings), finding_statuses(findings)
    if only is not None:
        records, statuses = [records[i] for i in only], [statuses[i] for i in only]
    results = []
    for rec, status in zip(records, statuses):
        source = rec["source_file"]
        results.append(_result(
            rec["rule_id"], index.get(rec["rule_id"]), LEVELS[rec["severity"]],
            rec["message"] or rec["code"], artifact_uri(source) if source else None,
            rec["source_line"] if _starts(rec["source_line"]) else None, rec["finding_id"],
            _baseline_state(status.in_baseline), _suppression(status),
            {key: status.status if key == "status" else rec[key]
             for key in PROPERTY_KEYS if key != "site" or "site" in rec}))
    return results


def sarif_log(result, meta: dict, max_results: int = MAX_RESULTS) -> dict:
    """The SARIF log, at most `max_results` results and MAX_BYTES (0: no
    limit); see the module's docstring for what is kept."""
    return json.loads(_fitted(result, meta, max_results))


def _fitted(result, meta: dict, max_results: int) -> str:
    """The SARIF log's text within the limits. Each result is written once
    (`_Texts`): cutting an over-large run down to MAX_BYTES joins the texts
    of fewer results again, it does not write them again."""
    rules = [_rule(r) for r in rules_of(result)]
    names, columns = finding_columns(result.findings)
    cells = dict(zip(names, columns))
    count = len(result.findings)
    made = None
    if not max_results or count <= max_results:
        made = _Texts(result, rules, range(count))
        text = _assembled(result, meta, rules, made, range(count))
        if not max_results or len(text) < MAX_BYTES:
            return text
    # Over the limits: only the results kept are made (at 650,000 findings,
    # making every one to keep 25,000 took seconds). New first, then the
    # most severe, each group in the findings' order.
    ranks = {s: SEVERITY_RANK.get(s, len(SEVERITY_RANK)) for s in set(cells["severity"])}
    order = np.lexsort((np.arange(count),
                        np.fromiter(map(ranks.__getitem__, cells["severity"]), np.int64, count),
                        np.array([s.status != "new" for s in finding_statuses(result.findings)],
                                 dtype=bool))).tolist()
    keep = min(max_results, count)
    if made is None:  # (the most that can be kept: what is cut later is among them)
        made = _Texts(result, rules, sorted(order[:keep]))
    while True:
        text = _assembled(result, meta, rules, made, sorted(order[:keep]),
                          _omitted(cells, sorted(order[keep:]), max_results))
        if len(text) < MAX_BYTES or keep == 0:
            return text
        # the kept results share what is over the limit in proportion; 2% to spare
        keep = min(keep - 1, int(keep * MAX_BYTES / len(text) * 0.98))


#: Where the run's keys stand in the document's text (three levels of two
#: spaces in), the key of its results, and each result's lines (one deeper).
_RUN_LINE = "\n      "
_RESULTS_KEY = _RUN_LINE + '"results": '
_RESULT_LINE = _RUN_LINE + "  "


class _Texts:
    """The results of the findings at `positions`, each as its text stands
    in the document (`inert_json(doc, indent=2)` writes the same bytes),
    written at once: the findings of one shape (the optional parts of
    `_result` they have) fill one template, column by column, from their
    cells' texts (`column_texts`: each distinct text quoted once). At
    53,000 findings each result written whole was half of the report."""

    def __init__(self, result, rules: list[dict], positions):
        positions = list(positions)
        findings = result.findings
        names, columns = finding_columns(findings)
        cells = {name: [column[p] for p in positions] for name, column in zip(names, columns)}
        texts = column_texts_at(findings, positions)
        every = finding_statuses(findings)
        statuses = [every[p] for p in positions]
        index = {r["id"]: str(i) for i, r in enumerate(rules)}
        # each hole's texts, in the order of `positions` (None: the part left out)
        holes = {
            "rule_id": texts["rule_id"],
            "rule_index": [index.get(rule) for rule in cells["rule_id"]],
            "level": each_once(lambda severity: quote_json(LEVELS[severity]), cells["severity"]),
            "message": [text if message else code for message, text, code
                        in zip(cells["message"], texts["message"], texts["code"])],
            "uri": each_once(lambda source: quote_json(artifact_uri(source)) if source else None,
                             cells["source_file"]),
            "start_line": [text if _starts(line) else None
                           for line, text in zip(cells["source_line"], texts["source_line"])],
            "finding_id": texts["finding_id"],
            "baseline_state": each_once(lambda known: None if known is None else
                                        quote_json(_baseline_state(known)),
                                        [s.in_baseline for s in statuses]),
            "status": each_once(quote_json, [s.status for s in statuses]),
            **{key: texts[key] for key in PROPERTY_KEYS if key in texts},
        }
        suppressions = [_suppression(s) for s in statuses]
        keys = [key for key in PROPERTY_KEYS if key != "site" or "site" in cells]
        optional = ("rule_index", "uri", "start_line", "baseline_state")
        shapes: dict[tuple, list[int]] = {}
        for k in range(len(positions)):
            shape = (*(holes[name][k] is not None for name in optional),
                     suppressions[k] is not None)
            shapes.setdefault(shape, []).append(k)
        self.texts: list[str] = [""] * len(positions)
        for shape, ks in shapes.items():
            has = dict(zip((*optional, "suppression"), shape))
            template = Template(_result(
                hole("rule_id"), hole("rule_index") if has["rule_index"] else None,
                hole("level"), hole("message"), hole("uri") if has["uri"] else None,
                hole("start_line") if has["start_line"] else None, hole("finding_id"),
                hole("baseline_state") if has["baseline_state"] else None,
                (hole("justification"), hole("waiver"), hole("expires"))
                if has["suppression"] else None,
                {key: hole(key) for key in keys}), 2, _RESULT_LINE)
            filled = []
            for name in template.names:
                nl = template.nl_of[name]
                if name == "evidence":  # (an object: written at its line's depth)
                    filled.append(each_once(lambda value, nl=nl: nested_indented(value, 2, nl),
                                            [cells["evidence"][k] for k in ks], by_id=True))
                elif name in _SUPPRESSION:
                    part = _SUPPRESSION.index(name)
                    filled.append([nested_indented(suppressions[k][part], 2, nl) for k in ks])
                else:
                    filled.append([holes[name][k] for k in ks])
            for k, text in zip(ks, template.fill(filled, len(ks))):
                self.texts[k] = html_safe_json(text)
        #: a finding's position in the findings -> its result's here
        self.at = {p: k for k, p in enumerate(positions)}

    def of(self, positions) -> list[str]:
        return [self.texts[self.at[p]] for p in positions]


_SUPPRESSION = ("justification", "waiver", "expires")


def _assembled(result, meta: dict, rules: list[dict], made: _Texts, positions,
               omitted: dict | None = None) -> str:
    """The document's text with the results of the findings at `positions`:
    the document's own text written with no results, theirs put in its
    place."""
    texts = made.of(positions)
    doc = _document(result, meta, rules, [], omitted, kept=len(texts))
    head, key, tail = inert_json(doc, indent=2).partition(_RESULTS_KEY + "[]")
    if not key or _RESULTS_KEY in tail:  # (never: other keys at that depth are the run's)
        raise AssertionError("the SARIF run's results are not where they were expected")
    body = ("[" + _RESULT_LINE + ("," + _RESULT_LINE).join(texts) + _RUN_LINE + "]"
            if texts else "[]")
    return head + _RESULTS_KEY + body + tail


def _omitted(cells: dict, left_out: list[int], max_results: int) -> dict:
    """The findings a capped run leaves out (positions in `cells`, the
    records' columns, `finding_columns`): how many, per rule and severity."""
    by_rule: dict[str, dict[str, int]] = {}
    severities, rule_ids = cells["severity"], cells["rule_id"]
    for i in left_out:
        severity = severities[i]
        counts = by_rule.setdefault(rule_ids[i], {})
        counts[severity] = counts.get(severity, 0) + 1
    return {"total": len(left_out), "max_results": max_results, "max_bytes": MAX_BYTES,
            "by_rule": {rule: {"total": sum(c.values()), "by_severity": c}
                        for rule, c in sorted(by_rule.items())}}


def _document(result, meta: dict, rules: list[dict], results: list[dict],
              omitted: dict | None = None, kept: int | None = None) -> dict:
    """The SARIF log of `results`; with `kept`, the log of that many results
    whose texts are put in later (`results` then empty)."""
    run = {
        "tool": {"driver": {
            "name": "auditor",
            "fullName": "auditor, craps compliance auditor",
            "version": meta.get("auditor_version", __version__),
            "rules": rules,
            "properties": {"ruleset": result.ruleset.id,
                           "ruleset_hash": result.ruleset.content_hash},
        }},
    }
    invocation = _invocation(meta.get("not_evaluated", getattr(result, "not_evaluated", [])),
                             meta.get("not_audited", []))
    if omitted:
        kept = len(results) if kept is None else kept
        total = kept + omitted["total"]
        invocation["toolExecutionNotifications"].append({
            "level": "warning",
            "message": {"text": (
                f"{total} findings: {kept} are results here (new findings "
                f"first, most severe first); the other {omitted['total']} are "
                f"counted per rule in this run's properties.omittedResults. The "
                f"full list is in findings.parquet (or --format json, csv).")},
        })
    if invocation["toolExecutionNotifications"]:  # only what needs saying
        run["invocations"] = [invocation]
    run["results"] = results
    run["properties"] = {"provenance": meta}
    if omitted:
        run["properties"]["omittedResults"] = omitted
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _invocation(not_evaluated: list[dict], not_audited: list[dict] = ()) -> dict:
    """The run's invocation: an error notification per file not audited (the
    run is then not successful), a warning notification per rule and file
    the audit could not evaluate (what a dashboard shows beside the results)."""
    unread = [{"level": "error", "descriptor": {"id": "not_audited"},
               "message": {"text": f"{e['file']} not audited: {e['reason']}"},
               "locations": [{"physicalLocation": {"artifactLocation": {
                   "uri": artifact_uri(e["file"])}}}]} for e in not_audited]
    return {"executionSuccessful": not not_audited, "toolExecutionNotifications": unread + [
        {"level": "warning", "descriptor": {"id": "not_evaluated"},
         "associatedRule": {"id": e["rule"]},
         "message": {"text": scoped(e, f"rule {e['rule']} ({e['code']}) not evaluated in "
                                    f"{e['file']}") + f": {e['reason']}"},
         "locations": [{"physicalLocation": {"artifactLocation": {
             "uri": artifact_uri(e["file"])}}}],
         **({"properties": {k: e[k] for k in ("table", "seq_from", "seq_to")}}
            if e.get("table") is not None else {})}
        for e in not_evaluated]}


def text(result, meta: dict, max_results: int = MAX_RESULTS) -> str:
    return _fitted(result, meta, max_results) + "\n"


def write(result, meta: dict, out: Path, max_results: int = MAX_RESULTS) -> list[str]:
    """The `sarif` format: findings.sarif."""
    target = out / "findings.sarif"
    write_text(target, text(result, meta, max_results))
    return [str(target)]
