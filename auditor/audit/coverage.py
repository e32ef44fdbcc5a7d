"""What the audit could not look at: for each rule and input file, whether
the file holds what the rule's check needs (`auditor.checks.registry.Needs`).

A rule that could not be evaluated in a file is listed (`not_evaluated`:
rule, file, reason) in the provenance, the summary and every report, and
reports nothing at that file's rows: a finding there would rest on what the
file does not record. A report never looks clean because it could not look.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from auditor.checks import CHECKS
from auditor.logs.site import shown_table


def not_evaluated(rulesets, inputs) -> list[dict]:
    """Per input file (in input order), each rule of `rulesets` (one, or a
    family's versions: a rule id once) whose check cannot judge that file:
    {rule, code, file, reason}. Files alike in columns and event types are
    judged once."""
    rules = {}
    for rs in rulesets:
        for rule in rs.rules:
            rules.setdefault(rule.id, rule)
    judged: dict[tuple, list[tuple]] = {}
    out = []
    for f in inputs:
        key = (frozenset(f.columns), frozenset(f.events),
               frozenset(getattr(f, "never_filled", ())))
        if key not in judged:
            judged[key] = [(rule, why) for rule in rules.values()
                           if (why := CHECKS[rule.check].needs.missing(*key))]
        out += [{"rule": rule.id, "code": rule.code, "file": f.path, "reason": "; ".join(why)}
                for rule, why in judged[key]]
    return out


def drop_unjudged(findings: pd.DataFrame, entries: list[dict]) -> pd.DataFrame:
    """`findings` less those of a rule at a file it could not be evaluated in."""
    if not entries or not len(findings):
        return findings
    pairs = {(e["rule"], e["file"]) for e in entries}
    rules = findings["rule_id"].astype(object).to_numpy()
    files = findings["source_file"].astype(object).to_numpy()
    keep = np.fromiter(((r, str(f)) not in pairs for r, f in zip(rules, files)),
                       dtype=bool, count=len(findings))
    return findings if keep.all() else findings[keep].reset_index(drop=True)


def scope(entry: dict) -> str:
    """Where at a file a rule was not evaluated, when that is less than the
    whole file (a table starting or ending mid-session): `T01 seq 638-1275`;
    "" for a whole file. Every report says it beside the rule (raw text:
    each format escapes it)."""
    if entry.get("table") is None:
        return ""
    seqs = f"{entry['seq_from']}-{entry['seq_to']}" if entry["seq_to"] != entry["seq_from"] \
        else f"{entry['seq_from']}"
    return f"{shown_table(entry['table'])} seq {seqs}"


def scoped(entry: dict, text: str) -> str:
    """`text` with " at SCOPE" after it when the entry has a scope."""
    where = scope(entry)
    return f"{text} at {where}" if where else text


def coverage_line(entries: list[dict]) -> str:
    """One line for the terminal: how many rules were not evaluated, and why
    (grouped by reason), or "" when every rule was."""
    if not entries:
        return ""
    by_reason: dict[str, dict[str, set[str]]] = {}
    for e in entries:
        for why in e["reason"].split("; "):
            got = by_reason.setdefault(why, {"rules": set(), "files": set(), "listed": set()})
            got["rules"].add(e["rule"])
            got["listed"].add(scoped(e, e["rule"]))
            got["files"].add(e["file"])
    rules = {e["rule"] for e in entries}
    files = {e["file"] for e in entries}
    parts = [f"{why} ({len(g['rules'])} rule(s), {len(g['files'])} file(s): "
             f"{', '.join(sorted(g['listed']))})" for why, g in by_reason.items()]
    return (f"NOT EVALUATED: {len(rules)} rule(s) in {len(files)} file(s): "
            + "; ".join(parts) + ". Their findings there are not in the report.")
