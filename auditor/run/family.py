"""The audit of a ruleset family: each table session judged by the version
in force on its date (`auditor.rules.versions` says which), the versions'
findings merged."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise

import numpy as np
import pandas as pd

from auditor.audit.core import AuditResult
from auditor.audit.exposure import EXPOSURE
from auditor.findings import finalize
from auditor.logs.load import LoadedLogs
from auditor.rules.ruleset import Ruleset
from auditor.rules.versions import Family, Part, assign, sessions, split_by_version


@dataclass
class VersionedAuditResult(AuditResult):
    """An audit under a family: the findings of every version's part, merged.
    `ruleset` is the latest version used; `versions` says which version judged
    each table session (table -> [{id, content_hash, first_seq, date}])."""

    family: str = ""
    rulesets: list[Ruleset] = field(default_factory=list)
    versions: dict[str, list[dict]] = field(default_factory=dict)

    def tables_of(self, ruleset_id: str) -> list[str]:
        return sorted(t for t, used in self.versions.items()
                      if any(u["id"] == ruleset_id for u in used))


def audit_family(logs: LoadedLogs, family: Family,
                 audit_fn: Callable[[LoadedLogs, Ruleset], AuditResult]) -> VersionedAuditResult:
    """Audit each version's part of `logs` with `audit_fn` (the engine the
    caller uses for a single ruleset) and merge the findings."""
    pairs = assign(family, sessions(logs.events))
    parts = split_by_version(logs, pairs)
    results = [audit_fn(p.logs, p.ruleset) for p in parts]
    found = [r.findings for r in results]
    findings = finalize(found + seam_findings(logs, parts, audit_fn, found))
    exposure = EXPOSURE.join([r.exposure for r in results])
    used = [v for v in family.versions if any(p.ruleset.id == v.id for p in parts)]
    versions: dict[str, list[dict]] = {}
    for s, v in sorted(pairs, key=lambda x: (x[0].table, x[0].first_seq)):
        versions.setdefault(s.table, []).append(
            {"id": v.id, "content_hash": v.content_hash, "first_seq": s.first_seq,
             "date": s.day.isoformat()})
    return VersionedAuditResult(used[-1], logs, findings, exposure=exposure,
                                family=family.name, rulesets=used, versions=versions)


#: The log rules that compare an event with the one before it in its table:
#: the ones a cut between two versions' parts would blind.
SEAM_CODES = ("log.sequence_gap", "log.out_of_order")


def seam_findings(logs: LoadedLogs, parts: list[Part], audit_fn,
                  found: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """The `log.*` rules across every seam where one table passes from one
    version's part to another's: the last event before it and the first
    after (with the table's quarantined rows between) audited under the
    later version's log rules. So the log rules see each table whole,
    however the versions split it: events removed just where `nz@v1` ends
    and `nz@v2` begins are a gap, as they are under one version. Seams of
    one table go in separate calls (two seams side by side would make a
    gap of their own); findings the parts already hold are left out."""
    part_of = {id(s): i for i, p in enumerate(parts) for s in p.sessions}
    by_table: dict[str, list] = {}
    for p in parts:
        for s in p.sessions:
            by_table.setdefault(s.table, []).append(s)
    batches: dict[tuple[int, int], list[tuple[int, int, str]]] = {}
    for table, ss in by_table.items():
        ss.sort(key=lambda s: s.start)
        k = 0
        for a, b in pairwise(ss):
            if part_of[id(a)] != part_of[id(b)]:
                batches.setdefault((part_of[id(b)], k), []).append((a.stop - 1, b.start, table))
                k += 1
    if not batches:
        return []
    seen = {(c, str(t), int(q)) for f in found if len(f)
            for c, t, q in zip(f["code"], f["table_id"], f["seq"]) if pd.notna(q)}
    out = []
    for (i, _), seams in sorted(batches.items()):
        rows = np.array([r for a, b, _ in sorted(seams) for r in (a, b)], dtype=np.int64)
        events = logs.events.iloc[rows].reset_index(drop=True)
        result = audit_fn(LoadedLogs(events, _between(logs, seams), logs.inputs),
                          _log_rules_only(parts[i].ruleset))
        f = result.findings
        # (only what the re-read says of each seam's later row: of the row
        # before it, it knows too little, its file-order predecessor among
        # them, and that row's own part has judged it)
        after = {(str(table), int(logs.events["seq"].iat[b])) for _, b, table in seams}
        if len(f):
            out.append(_new_at(f, after, seen))
    return out


def _new_at(found: pd.DataFrame, rows: set[tuple[str, int]],
            seen: set[tuple[str, str, int]]) -> pd.DataFrame:
    """The findings at `rows` (table, seq) not `seen` (code, table, seq)
    already, and those of no seq."""
    keep = [pd.isna(q) or ((str(t), int(q)) in rows and (c, str(t), int(q)) not in seen)
            for c, t, q in zip(found["code"], found["table_id"], found["seq"])]
    return found[np.asarray(keep, dtype=bool)].reset_index(drop=True)


def _between(logs: LoadedLogs, seams: list[tuple[int, int, str]]) -> pd.DataFrame:
    """The quarantined rows of each seam's table whose seq lies across it."""
    q = logs.quarantine
    if not len(q):
        return q
    seq = logs.events["seq"]
    keep = np.zeros(len(q), dtype=bool)
    tables = q["table_id"].astype(object).to_numpy()
    qseq = pd.to_numeric(q["seq"], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    for a, b, table in seams:
        lo, hi = int(seq.iat[a]), int(seq.iat[b])
        keep |= (tables == table) & (qseq > min(lo, hi)) & (qseq < max(lo, hi))
    return q.loc[keep].reset_index(drop=True)


def _log_rules_only(rs: Ruleset) -> Ruleset:
    return dataclasses.replace(rs, rules=[r for r in rs.rules if r.code in SEAM_CODES])
