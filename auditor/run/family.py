"""The audit of a ruleset family: each table session judged by the version
in force on its date (`auditor.rules.versions` says which), the versions'
findings merged."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from auditor.audit.core import AuditResult
from auditor.findings import finalize
from auditor.logs.load import LoadedLogs
from auditor.rules.ruleset import Ruleset
from auditor.rules.versions import Family, assign, sessions, split_by_version


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
    findings = finalize([audit_fn(p.logs, p.ruleset).findings for p in parts])
    used = [v for v in family.versions if any(p.ruleset.id == v.id for p in parts)]
    versions: dict[str, list[dict]] = {}
    for s, v in sorted(pairs, key=lambda x: (x[0].table, x[0].first_seq)):
        versions.setdefault(s.table, []).append(
            {"id": v.id, "content_hash": v.content_hash, "first_seq": s.first_seq,
             "date": s.day.isoformat()})
    return VersionedAuditResult(used[-1], logs, findings, family=family.name, rulesets=used,
                                versions=versions)
