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

from pathlib import Path, PurePosixPath
from urllib.parse import quote

from auditor import __version__
from auditor.atomic import write_text
from auditor.audit.coverage import scoped
from auditor.codes import CODES, SEVERITY_RANK
from auditor.report.json_format import inert_json
from auditor.report.records import finding_records, finding_statuses, rules_of

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = ("https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/"
                "sarif-schema-2.1.0.json")
LEVELS = {"critical": "error", "major": "error", "minor": "warning", "info": "note"}
FINGERPRINT = "auditorFindingId/v1"
#: GitHub code scanning's limits on one run: results, and bytes
MAX_RESULTS = 25_000
MAX_BYTES = 10_000_000


def artifact_uri(path: str) -> str:
    """A log's path as a URI reference: a relative path stays relative (with
    `/` separators, percent-encoded), an absolute one becomes a file: URI."""
    posix = str(path).replace("\\", "/")
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


def sarif_results(result, rules: list[dict], only: list[int] | None = None) -> list[dict]:
    """One SARIF result per finding, in the findings' order; with `only`,
    for the findings at those positions alone (in the order given)."""
    findings = result.findings
    index = {r["id"]: i for i, r in enumerate(rules)}
    uris: dict[str, str] = {}  # (a few files hold every finding: each made once)
    records, statuses = finding_records(findings), finding_statuses(findings)
    if only is not None:
        records, statuses = [records[i] for i in only], [statuses[i] for i in only]
    results = []
    for rec, (status, in_baseline, waiver) in zip(records, statuses):
        res = {"ruleId": rec["rule_id"]}
        if rec["rule_id"] in index:
            res["ruleIndex"] = index[rec["rule_id"]]
        res["level"] = LEVELS[rec["severity"]]
        res["message"] = {"text": rec["message"] or rec["code"]}
        if rec["source_file"]:
            uri = uris.get(rec["source_file"])
            if uri is None:
                uri = uris[rec["source_file"]] = artifact_uri(rec["source_file"])
            loc = {"artifactLocation": {"uri": uri}}
            if rec["source_line"] is not None and rec["source_line"] >= 1:
                loc["region"] = {"startLine": rec["source_line"]}
            res["locations"] = [{"physicalLocation": loc}]
        res["partialFingerprints"] = {FINGERPRINT: rec["finding_id"]}
        if in_baseline is not None:  # the audit had a baseline
            res["baselineState"] = "unchanged" if in_baseline else "new"
        if status == "waived":
            waiver = waiver or {}
            res["suppressions"] = [{
                "kind": "external", "status": "accepted",
                "justification": waiver.get("reason", ""),
                "properties": {"waiver": waiver.get("number"),
                               "expires": waiver.get("expires")},
            }]
        res["properties"] = {
            "status": status, "finding_id": rec["finding_id"], "code": rec["code"],
            "clause": rec["clause"], "severity": rec["severity"],
            **({"site": rec["site"]} if "site" in rec else {}),
            "table_id": rec["table_id"], "seq": rec["seq"], "ts": rec["ts"],
            "event": rec["event"], "seat": rec["seat"], "actor_role": rec["actor_role"],
            "actor_id": rec["actor_id"], "evidence": rec["evidence"],
        }
        results.append(res)
    return results


def sarif_log(result, meta: dict, max_results: int = MAX_RESULTS) -> dict:
    """The SARIF log, at most `max_results` results and MAX_BYTES (0: no
    limit); see the module's docstring for what is kept."""
    return _fitted(result, meta, max_results)[0]


def _fitted(result, meta: dict, max_results: int) -> tuple[dict, str]:
    """The SARIF log within the limits, and its text. Each result is
    encoded once (`_Encoded`): cutting an over-large run down to MAX_BYTES
    joins the texts of fewer results again, it does not encode them again."""
    rules = [_rule(r) for r in rules_of(result)]
    records, statuses = finding_records(result.findings), finding_statuses(result.findings)
    made = None
    if not max_results or len(records) <= max_results:
        made = _Encoded(sarif_results(result, rules), range(len(records)))
        doc, text = _assembled(result, meta, rules, made, range(len(records)))
        if not max_results or len(text) < MAX_BYTES:
            return doc, text
    # Over the limits: only the results kept are made (at 650,000 findings,
    # making every one to keep 25,000 took seconds).
    order = sorted(range(len(records)), key=lambda i: (
        statuses[i].status != "new",
        SEVERITY_RANK.get(records[i]["severity"], len(SEVERITY_RANK)), i))
    keep = min(max_results, len(records))
    if made is None:  # (the most that can be kept: what is cut later is among them)
        first = sorted(order[:keep])
        made = _Encoded(sarif_results(result, rules, first), first)
    while True:
        doc, text = _assembled(result, meta, rules, made, sorted(order[:keep]),
                               _omitted(records, sorted(order[keep:]), max_results))
        if len(text) < MAX_BYTES or keep == 0:
            return doc, text
        # the kept results share what is over the limit in proportion; 2% to spare
        keep = min(keep - 1, int(keep * MAX_BYTES / len(text) * 0.98))


#: Where the run's keys stand in the document's text (three levels of two
#: spaces in), the key of its results, and each result's lines (one deeper).
_RUN_LINE = "\n      "
_RESULTS_KEY = _RUN_LINE + '"results": '
_RESULT_LINE = _RUN_LINE + "  "


class _Encoded:
    """SARIF results made once, and each one's text as it stands in the
    document (`inert_json(doc, indent=2)` writes the same bytes: the text of
    a value nested N levels deep is its own text with N indents after each
    line break, since JSON text holds no line break inside a string)."""

    def __init__(self, results: list[dict], positions):
        self.results = results
        self.texts = [inert_json(r, indent=2).replace("\n", _RESULT_LINE) for r in results]
        #: a finding's position in the findings -> its result's here
        self.at = {p: k for k, p in enumerate(positions)}

    def of(self, positions) -> tuple[list[dict], list[str]]:
        ks = [self.at[p] for p in positions]
        return [self.results[k] for k in ks], [self.texts[k] for k in ks]


def _assembled(result, meta: dict, rules: list[dict], made: _Encoded, positions,
               omitted: dict | None = None) -> tuple[dict, str]:
    """The document of the results of the findings at `positions`, and its
    text: the document's own text written with no results, theirs put in
    its place."""
    results, texts = made.of(positions)
    doc = _document(result, meta, rules, results, omitted)
    run = doc["runs"][0]
    head, key, tail = inert_json({**doc, "runs": [{**run, "results": []}]},
                                 indent=2).partition(_RESULTS_KEY + "[]")
    if not key or _RESULTS_KEY in tail:  # (never: other keys at that depth are the run's)
        raise AssertionError("the SARIF run's results are not where they were expected")
    body = ("[" + _RESULT_LINE + ("," + _RESULT_LINE).join(texts) + _RUN_LINE + "]"
            if texts else "[]")
    return doc, head + _RESULTS_KEY + body + tail


def _omitted(records: list[dict], left_out: list[int], max_results: int) -> dict:
    """The findings a capped run leaves out (positions in `records`, the
    finding records): how many, per rule and severity."""
    by_rule: dict[str, dict[str, int]] = {}
    for i in left_out:
        severity = records[i]["severity"]
        counts = by_rule.setdefault(records[i]["rule_id"], {})
        counts[severity] = counts.get(severity, 0) + 1
    return {"total": len(left_out), "max_results": max_results, "max_bytes": MAX_BYTES,
            "by_rule": {rule: {"total": sum(c.values()), "by_severity": c}
                        for rule, c in sorted(by_rule.items())}}


def _document(result, meta: dict, rules: list[dict], results: list[dict],
              omitted: dict | None = None) -> dict:
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
        total = len(results) + omitted["total"]
        invocation["toolExecutionNotifications"].append({
            "level": "warning",
            "message": {"text": (
                f"{total} findings: {len(results)} are results here (new findings "
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
    return _fitted(result, meta, max_results)[1] + "\n"


def write(result, meta: dict, out: Path, max_results: int = MAX_RESULTS) -> list[str]:
    """The `sarif` format: findings.sarif."""
    target = out / "findings.sarif"
    write_text(target, text(result, meta, max_results))
    return [str(target)]
