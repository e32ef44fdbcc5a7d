"""The audit of a ruleset family: each table session judged by the version
in force on its date (`auditor.rules.versions` says which), the versions'
findings merged."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from itertools import pairwise

import numpy as np
import pandas as pd

from auditor.audit.core import AuditResult, replay_state
from auditor.audit.exposure import EXPOSURE
from auditor.findings import finalize
from auditor.logs.identity import check_events
from auditor.logs.load import LoadedLogs
from auditor.logs.memory import release_memory
from auditor.rules.ruleset import Ruleset
from auditor.rules.versions import Family, Part, assign, sessions, split_by_version
from auditor.run import by_table, stream
from auditor.run.partition import quarantine_owners
from auditor.run.progress import NoProgress


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
                 audit_fn: Callable[..., AuditResult],
                 collector=None) -> VersionedAuditResult:
    """Audit each version's part of `logs` with `audit_fn` (the engine the
    caller uses for a single ruleset) and merge the findings. With a
    report's `collector`, where one version judges every row (most batches
    of a year), its audit takes what the collector takes
    (`audit_fn(logs, ruleset, collector=...)`): the result's logs' digest;
    otherwise the caller takes it."""
    pairs = assign(family, sessions(logs.events))
    parts = split_by_version(logs, pairs)
    if collector is not None and len(parts) == 1 and parts[0].whole:
        results = [audit_fn(parts[0].logs, parts[0].ruleset, collector=collector)]
    else:
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
    taken = getattr(results[0].logs, "digest", None) if collector is not None and \
        len(results) == 1 else None
    if taken is not None:
        logs = _with_digest(logs, taken)
    return VersionedAuditResult(used[-1], logs, findings, exposure=exposure,
                                family=family.name, rulesets=used, versions=versions)


def _with_digest(logs: LoadedLogs, digest) -> LoadedLogs:
    """`logs` (a copy) with what a report's collector took of them."""
    out = copy.copy(logs)
    out.digest = digest
    return out


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


# --- a family audited a batch of linked files at a time ------------------------------------

def audit_family_batches(job, family: Family,
                         audit_fn: Callable[[LoadedLogs, Ruleset], AuditResult],
                         progress=None) -> VersionedAuditResult | None:
    """`audit_family` of `job`'s files a batch of linked files at a time
    (`stream.plan`; a group too large for a batch a range of its tables at
    a time, `by_table`), each batch's events dropped before the next, so
    memory follows the batch, not the input; the job's collector takes
    what the reports need of each batch's events, replayed under the
    family's bar number. The same result as `audit_family` of every file
    loaded at once, byte for byte in every report: each batch holds whole
    tables, and a table's sessions, versions and seams lie within it; the
    quarantined rows that name no table of their batch (none, or one with
    no events) are judged, as one load judges them, by the version of the
    earliest session of all (`_loose`). None where the input is best
    loaded at once: no plan (small, or one batch), versions that replay
    apart (their bar numbers differ), or batches that hold one table twice
    (a plan gone wrong)."""
    if len({v.parameters.get("bar_number") for v in family.versions}) > 1:
        return None
    files, read = list(job.files), job.read
    batches = stream.plan(files, progress, read=read, sites=job.sites)
    if batches is None:
        return None
    progress = progress if progress is not None else NoProgress()
    found: list[_Unit] = []
    quarantines, inputs = [], []
    for batch in batches:
        with by_table.in_process(files, batch, read, job.scratch, job.sites, job.labels) \
                if batch.ranges else contextlib.nullcontext() as ranges:
            if ranges is not None:  # (a group too large for a batch: a range at a time)
                quarantines.append(ranges.quarantine[batch[0]])
                inputs.append(ranges.inputs[batch[0]])
                for logs in ranges.each(read):
                    found.append(_Unit.of(logs, family, audit_fn, job.collector))
                    del logs  # (the range's events go before the next is read)
                    release_memory()
                continue
        logs = stream.load_with_progress([files[i] for i in batch], progress, read, job.sites,
                                         job.labels)
        quarantines.append(logs.quarantine)
        inputs.append(logs.inputs)
        found.append(_Unit.of(logs, family, audit_fn, job.collector))
        del logs  # (the batch's events go before the next is read)
        release_memory()
    named: set[str] = set()
    for unit in found:
        if named & unit.named:
            return None
        named |= unit.named
    in_order, quarantine = stream.in_file_order(files, inputs, quarantines, job.labels)
    loose = _loose(found, family, audit_fn, in_order)
    used = [v for v in family.versions if any(v.id in unit.used for unit in found)]
    if not used:  # (no session anywhere: as one load of every file says)
        return None
    versions = dict(sorted((t, used_) for unit in found for t, used_ in unit.versions.items()))
    collector = job.collector
    digest = collector.join([u.taken for u in found]) if collector is not None else None
    logs = stream.LazyLogs(list(job.paths), quarantine, in_order, digest, read, job.sites)
    findings = finalize([u.findings for u in found] + loose)
    return VersionedAuditResult(
        used[-1], logs, findings, table_ids=sorted(t for u in found for t in u.tables),
        exposure=EXPOSURE.join([u.exposure for u in found]), family=family.name,
        rulesets=used, versions=versions)


@dataclass
class _Unit:
    """What one batch (or range of tables) audited under the family leaves
    once its events go: its findings, exposure, versions used and each
    table's versions, what the collector took, its quarantined rows of no
    table of its own (judged last: `_loose`), its tables and every table
    its rows name."""

    findings: pd.DataFrame
    exposure: object
    used: set[str]
    versions: dict[str, list[dict]]
    taken: object
    loose: pd.DataFrame
    tables: list[str]
    named: set[str]
    empty: pd.DataFrame  # (its events' columns, no rows)

    @classmethod
    def of(cls, logs: LoadedLogs, family: Family, audit_fn, collector) -> _Unit:
        check_events(logs.events)
        # (every table with events has a session: its first row starts one)
        tables, named = stream.tables_named(logs)
        held, q = set(tables), logs.quarantine
        own = quarantine_owners(q, lambda table: int(table in held)).astype(bool)
        result = audit_family(LoadedLogs(logs.events, q.loc[own].reset_index(drop=True),
                                         logs.inputs), family, audit_fn, collector)
        taken = getattr(result.logs, "digest", None)  # (taken by its one version's audit)
        if collector is not None and taken is None:  # (else taken here, replayed again)
            taken = collector.take(logs.events, result.findings,
                                   replay_state(logs.events, family.latest))
        # (the result holds the events: only what the merge needs is kept)
        return cls(result.findings, result.exposure, {v.id for v in result.rulesets},
                   result.versions, taken, q.loc[~own].reset_index(drop=True), tables, named,
                   logs.events.iloc[0:0].copy())  # (a copy: a view would keep the rows)


def _loose(found: list[_Unit], family: Family, audit_fn, inputs) -> list[pd.DataFrame]:
    """The findings of the quarantined rows no batch's tables hold, judged
    by the version of the earliest session of all (by day, table and seq),
    as one load of every file routes them (`split_by_version`)."""
    rows = [u.loose for u in found if len(u.loose)]
    firsts = [(date.fromisoformat(s["date"]), t, s["first_seq"], s["id"])
              for u in found for t, used in u.versions.items() for s in used]
    if not rows or not firsts:
        return []
    earliest = min(firsts)[3]
    version = next(v for v in family.versions if v.id == earliest)
    result = audit_fn(LoadedLogs(found[0].empty, pd.concat(rows, ignore_index=True), inputs),
                      version)
    return [result.findings] if len(result.findings) else []
