"""Baselines and waivers: which findings are new, which were already known,
which are waived, and which waivers matched nothing.

A **baseline** is a JSON file listing the findings of an earlier audit by
their stable `finding_id`; a finding whose id is in it is *known*. A
**waiver file** is TOML, one `[[waiver]]` per accepted breach:

    [[waiver]]
    rule = "R5.7-stick"          # the ruleset's rule id (required)
    table = "T3"                 # optional: every table when left out
    site = "casino-b"            # the site of the table: required where tables have sites
    seq_from = 100               # optional, inclusive
    seq_to = 250                 # optional, inclusive
    reason = "stick replaced"    # required: why the breach is accepted
    expires = 2026-06-30         # optional: applies up to and including this day (UTC)

A waiver matches only findings at its own `site` (one without `site`, only
findings whose table has no site): in an audit of several casinos a waiver
for `T01` never waives another casino's `T01`. A waiver without a site in
an audit whose findings have sites matches nothing and is listed as unused,
saying why (docs/decisions.md: "Waivers and sites").

A finding a waiver in force matches is *waived*; any other known finding is
*known*; the rest are *new*. Only new findings count towards the exit code.
A waiver is stronger than the baseline: a finding both known and waived is
waived. The findings table itself never changes: the statuses go into the
provenance (`meta["statuses"]`), and to the report formats as columns of a
copy of it (`Triage.annotate`), so no format decodes the provenance again.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import pandas as pd

from auditor.codes import REPORT_ONLY, SEVERITY_RANK
from auditor.errors import BaselineError, shown_path
from auditor.escape import unicode_escaped
from auditor.findings import STATUS_COLUMNS, STATUSES, missing, read_stored
from auditor.guarded import parse_json, parse_toml, read_guarded

SCHEMA_VERSION = "1"
#: The largest baseline read (about a million findings) and waiver file
#: (written by hand, like a ruleset): a larger file is refused, exit 2.
MAX_BASELINE_BYTES = 256 << 20
MAX_WAIVERS_BYTES = 1 << 20
WAIVER_KEYS = ("rule", "site", "table", "seq_from", "seq_to", "reason", "expires")
BASELINE_ENTRY_KEYS = ("finding_id", "code", "rule_id", "table_id", "seq")


# --- baseline ---------------------------------------------------------------


@dataclass(frozen=True)
class Baseline:
    path: str
    sha256: str
    ruleset_id: str
    ruleset_hash: str
    entries: tuple[dict, ...]

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(e["finding_id"] for e in self.entries)


def baseline_entries(findings: pd.DataFrame) -> list[dict]:
    """One entry per finding, ordered by table, seq, rule and id."""
    entries = []
    for fid, code, rule_id, table, seq in zip(
            findings["finding_id"], findings["code"], findings["rule_id"],
            findings["table_id"], findings["seq"]):
        entries.append({
            "finding_id": str(fid), "code": str(code), "rule_id": str(rule_id),
            "table_id": None if missing(table) else str(table),
            "seq": None if missing(seq) else int(seq),
        })
    entries.sort(key=lambda e: (e["table_id"] or "", -1 if e["seq"] is None else e["seq"],
                                e["rule_id"], e["finding_id"]))
    return entries


def baseline_document(findings: pd.DataFrame, ruleset_id: str, ruleset_hash: str) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "ruleset": {"id": ruleset_id, "content_hash": ruleset_hash},
        "findings": baseline_entries(findings),
    }


def baseline_from_report(findings_parquet: Path) -> dict:
    """The baseline document of an earlier `findings.parquet`: its findings
    and the ruleset named in its provenance."""
    import pyarrow as pa

    path = Path(findings_parquet)
    if not path.is_file():
        raise BaselineError(f"{path}: no such file")
    try:
        with open(path, "rb") as source:  # (opened here: Arrow cannot open a name not UTF-8)
            table = read_stored(source)
    except (OSError, pa.ArrowException) as exc:
        raise BaselineError(f"{path}: not a findings.parquet: {exc}") from None
    raw = (table.schema.metadata or {}).get(b"auditor")
    try:
        meta = json.loads(raw) if raw else {}
        ruleset_id = meta["ruleset"]["id"]
        ruleset_hash = meta["ruleset"]["content_hash"]
    except (ValueError, KeyError, TypeError):
        raise BaselineError(f"{path}: no auditor provenance (ruleset id and hash) in its "
                            "metadata: is it a findings.parquet written by `auditor check`?"
                            ) from None
    missing = [c for c in BASELINE_ENTRY_KEYS if c not in table.column_names]
    if missing:
        raise BaselineError(f"{path}: not a findings table: missing column(s) "
                            f"{', '.join(missing)}")
    frame = table.select(list(BASELINE_ENTRY_KEYS)).to_pandas()
    return baseline_document(frame, ruleset_id, ruleset_hash)


def baseline_json(document: dict) -> str:
    return json.dumps(document, indent=2, ensure_ascii=True) + "\n"


def load_baseline(path: str | Path, ruleset_id: str | tuple[str, ...]) -> Baseline:
    """Read and validate a baseline; one made for another ruleset id (one of
    `ruleset_id`, the versions of a family) is an error (finding ids include
    the ruleset id, so they could never match)."""
    accepted = (ruleset_id,) if isinstance(ruleset_id, str) else tuple(ruleset_id)
    where = str(path)
    data = read_guarded(Path(path), MAX_BASELINE_BYTES, "a baseline", _fail(where))
    doc = parse_json(data, _fail(where))
    if not isinstance(doc, dict):
        raise BaselineError(f"{where}: should be a JSON object")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise BaselineError(f"{where}: key 'schema_version': expected {SCHEMA_VERSION!r}, "
                            f"found {doc.get('schema_version')!r}")
    rs = doc.get("ruleset")
    if not (isinstance(rs, dict) and isinstance(rs.get("id"), str)
            and isinstance(rs.get("content_hash"), str)):
        raise BaselineError(f"{where}: key 'ruleset': should be an object with string "
                            "'id' and 'content_hash'")
    if rs["id"] not in accepted:
        uses = repr(accepted[0]) if len(accepted) == 1 else \
            "the versions " + ", ".join(map(repr, accepted))
        raise BaselineError(f"{where}: baseline of ruleset {rs['id']!r}, but this audit "
                            f"uses {uses}")
    items = doc.get("findings")
    if not isinstance(items, list):
        raise BaselineError(f"{where}: key 'findings': should be a list")
    entries = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict) or not isinstance(item.get("finding_id"), str) \
                or not item["finding_id"]:
            raise BaselineError(f"{where}: finding {n}: key 'finding_id': should be a "
                                "non-empty string")
        entries.append(item)
    return Baseline(where, hashlib.sha256(data).hexdigest(), rs["id"], rs["content_hash"],
                    tuple(entries))


# --- waivers ----------------------------------------------------------------


@dataclass(frozen=True)
class Waiver:
    number: int  # 1-based position in the file
    rule: str
    reason: str
    table: str | None = None
    seq_from: int | None = None
    seq_to: int | None = None
    expires: date | None = None
    site: str | None = None

    def expired(self, today: date) -> bool:
        return self.expires is not None and today > self.expires

    def matches(self, findings: pd.DataFrame) -> np.ndarray:
        mask = np.array(findings["rule_id"].astype(object) == self.rule, dtype=bool)
        mask &= site_is(findings, self.site)
        if self.table is not None:
            mask &= (findings["table_id"].astype(object) == self.table).to_numpy(dtype=bool)
        if self.seq_from is not None or self.seq_to is not None:
            seq = findings["seq"]
            lo = self.seq_from if self.seq_from is not None else -1
            hi = self.seq_to if self.seq_to is not None else np.iinfo(np.int64).max
            mask &= (seq.notna() & (seq.fillna(-2) >= lo) & (seq.fillna(-2) <= hi)
                     ).to_numpy(dtype=bool)
        return mask

    def as_dict(self) -> dict:
        site = {"site": self.site} if self.site is not None else {}
        return {"number": self.number, "rule": self.rule, **site, "table": self.table,
                "seq_from": self.seq_from, "seq_to": self.seq_to, "reason": self.reason,
                "expires": self.expires.isoformat() if self.expires else None}


def site_is(findings: pd.DataFrame, site: str | None) -> np.ndarray:
    """Which findings are at `site` (None: at no site)."""
    if "site" not in findings:
        return np.full(len(findings), site is None, dtype=bool)
    sites = findings["site"].astype(object)
    if site is None:
        return sites.isna().to_numpy(dtype=bool)
    return (sites == site).to_numpy(dtype=bool)


@dataclass(frozen=True)
class Waivers:
    path: str
    sha256: str
    items: tuple[Waiver, ...]


def load_waivers(path: str | Path) -> Waivers:
    """Read and validate a waiver file; every problem names the file, the
    waiver's number and the key."""
    where = str(path)
    data = read_guarded(Path(path), MAX_WAIVERS_BYTES, "a waiver file", _fail(where))
    doc = parse_toml(data, _fail(where))
    unknown = sorted(set(doc) - {"waiver"})
    if unknown:
        raise BaselineError(f"{where}: key {unknown[0]!r}: unknown key (a waiver file holds "
                            "only [[waiver]] tables)")
    raw = doc.get("waiver", [])
    if not isinstance(raw, list):
        raise BaselineError(f"{where}: key 'waiver': should be an array of tables "
                            "([[waiver]])")
    items = tuple(_waiver(where, n, entry) for n, entry in enumerate(raw, 1))
    return Waivers(where, hashlib.sha256(data).hexdigest(), items)


def _waiver(where: str, n: int, entry) -> Waiver:
    def fail(key: str, problem: str):
        raise BaselineError(f"{where}: waiver {n}: key {key!r}: {problem}")

    if not isinstance(entry, dict):
        raise BaselineError(f"{where}: waiver {n}: should be a table ([[waiver]])")
    for key in entry:
        if key not in WAIVER_KEYS:
            fail(key, f"unknown key (allowed: {', '.join(WAIVER_KEYS)})")
    for key in ("rule", "reason"):
        if key not in entry:
            fail(key, "required")
        if not isinstance(entry[key], str) or not entry[key].strip():
            fail(key, "should be a non-empty string")
    table = entry.get("table")
    if table is not None and (not isinstance(table, str) or not table):
        fail("table", "should be a non-empty string")
    site = entry.get("site")
    if site is not None and (not isinstance(site, str) or not site):
        fail("site", "should be a non-empty string")
    seqs = {}
    for key in ("seq_from", "seq_to"):
        value = entry.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < 0):
            fail(key, "should be a whole number, 0 or more")
        seqs[key] = value
    if seqs["seq_from"] is not None and seqs["seq_to"] is not None \
            and seqs["seq_from"] > seqs["seq_to"]:
        fail("seq_to", f"{seqs['seq_to']} is below seq_from {seqs['seq_from']}")
    expires = entry.get("expires")
    if expires is not None:
        if isinstance(expires, str):
            try:
                expires = date.fromisoformat(expires)
            except ValueError:
                fail("expires", "should be a date (YYYY-MM-DD)")
        elif isinstance(expires, datetime) or not isinstance(expires, date):
            fail("expires", "should be a date (YYYY-MM-DD), not a date and time")
    return Waiver(n, entry["rule"], entry["reason"].strip(), table, seqs["seq_from"],
                  seqs["seq_to"], expires, site)


# --- statuses ---------------------------------------------------------------


@dataclass
class Triage:
    """The status of every finding (aligned with the findings' rows) and what
    the baseline and waivers did."""

    status: np.ndarray
    finding_ids: list[str]
    known: list[str]                        # found ids that the baseline lists
    waived_by: dict[str, int]               # found id -> number of the waiver
    baseline: Baseline | None = None
    waivers: Waivers | None = None
    waiver_use: list[dict] = field(default_factory=list)
    unused_waivers: list[dict] = field(default_factory=list)
    ruleset_hash: str | None = None

    def counts(self) -> dict[str, int]:
        return {s: int((self.status == s).sum()) for s in STATUSES}

    def annotate(self, findings: pd.DataFrame) -> pd.DataFrame:
        """`findings` (the rows triaged) with each one's status, waiver and
        whether the baseline lists it as the STATUS_COLUMNS: what the report
        formats read."""
        # (a finding at a time only where a waiver took it: the rest are
        # filled whole, the findings being many and the waived few)
        n = len(self.finding_ids)
        by, reasons, expiries = (np.full(n, None, dtype=object) for _ in range(3))
        waivers = {w.number: w for w in (self.waivers.items if self.waivers else ())}
        for i in np.flatnonzero(self.status == "waived"):
            by[i] = number = self.waived_by.get(self.finding_ids[i])
            waiver = waivers.get(number)
            if waiver is not None:
                reasons[i] = waiver.reason
                expiries[i] = waiver.expires.isoformat() if waiver.expires else None
        listed = np.full(n, None, dtype=object)
        if self.baseline is not None:
            listed[:] = pd.Series(self.finding_ids, dtype=object).isin(
                list(self.baseline.ids)).tolist()
        values = (self.status, listed, by, reasons, expiries)
        return findings.assign(**{name: pd.Series(v, index=findings.index, dtype=object)
                                  for name, v in zip(STATUS_COLUMNS, values, strict=True)})

    def as_meta(self) -> dict:
        """What goes into the provenance as `statuses`."""
        baseline = None
        if self.baseline is not None:
            found = set(self.finding_ids)
            baseline = {
                "file": shown_path(self.baseline.path), "sha256": self.baseline.sha256,
                "ruleset_id": self.baseline.ruleset_id,
                "ruleset_hash": self.baseline.ruleset_hash,
                "ruleset_hash_matches": self.baseline.ruleset_hash == self.ruleset_hash,
                "entries": len(self.baseline.entries),
                "not_found": len(self.baseline.ids - found),
            }
        waivers = None
        if self.waivers is not None:
            waivers = {"file": shown_path(self.waivers.path), "sha256": self.waivers.sha256,
                       "entries": self.waiver_use}
        return {
            "counts": self.counts(),
            "known": sorted(self.known),
            "waived": sorted(self.waived_by),
            "waived_by": dict(sorted(self.waived_by.items())),
            "baseline": baseline,
            "waivers": waivers,
            "unused_waivers": self.unused_waivers,
        }

    def summary_text(self) -> str:
        """The terminal summary's sentence on baseline and waivers (empty when
        neither was given)."""
        if self.baseline is None and self.waivers is None:
            return ""
        counts = self.counts()
        parts = [(f"Known (in baseline): {counts['known']}, waived: {counts['waived']}; "
                  f"only the {counts['new']} new finding(s) count towards the verdict.")]
        if self.baseline is not None and self.baseline.ruleset_hash != self.ruleset_hash:
            parts.append(f"Note: the baseline was made with ruleset content "
                         f"{self.baseline.ruleset_hash}, this audit used {self.ruleset_hash}.")
        if self.unused_waivers:
            listed = "; ".join(f"waiver {u['number']} (rule {unicode_escaped(u['rule'])}): "
                               f"{u['why']}" for u in self.unused_waivers)
            parts.append(f"Unused waiver(s) in {shown_path(self.waivers.path)}: {listed}.")
        return " ".join(parts)


def triage(findings: pd.DataFrame, baseline: Baseline | None = None,
           waivers: Waivers | None = None, rule_ids=None, ruleset_hash: str | None = None,
           today: date | None = None) -> Triage:
    """Give each finding its status: `waived` when a waiver in force matches
    it, else `known` when its id is in the baseline, else `new`. Waivers that
    matched nothing, have expired or name a rule the ruleset does not have are
    reported as unused. `today` (UTC) decides expiry."""
    today = today or datetime.now(UTC).date()
    ids = findings["finding_id"].astype(object).astype(str).tolist()
    status = np.full(len(ids), "new", dtype=object)
    known: list[str] = []
    if baseline is not None:
        in_baseline = pd.Series(ids, dtype=object).isin(list(baseline.ids)).to_numpy(dtype=bool)
        status[in_baseline] = "known"
        known = [ids[i] for i in np.flatnonzero(in_baseline)]
    waived_by: dict[str, int] = {}
    use, unused = [], []
    for w in (waivers.items if waivers is not None else ()):
        expired = w.expired(today)
        mask = np.zeros(len(ids), dtype=bool) if expired else w.matches(findings)
        fresh = mask & (status != "waived")
        for i in np.flatnonzero(fresh):
            waived_by[ids[i]] = w.number
        status[mask] = "waived"
        use.append({**w.as_dict(), "expired": expired, "matched": int(mask.sum())})
        why = None
        if expired:
            why = f"expired on {w.expires.isoformat()}"
        elif rule_ids is not None and w.rule not in rule_ids:
            why = "the ruleset has no rule with this id"
        elif not mask.any() and w.site is None and _has_sites(findings):
            why = ("matched no finding: it names no site, and this audit's tables have "
                   "sites (give the waiver's site = \"...\")")
        elif not mask.any():
            why = "matched no finding"
        if why:
            unused.append({**w.as_dict(), "why": why})
    return Triage(status=status, finding_ids=ids, known=known, waived_by=waived_by,
                  baseline=baseline, waivers=waivers, waiver_use=use, unused_waivers=unused,
                  ruleset_hash=ruleset_hash)


@dataclass(frozen=True)
class Accepted:
    """What an audit accepts before it runs: a baseline, waivers, or neither."""

    baseline: Baseline | None
    waivers: Waivers | None
    rule_ids: frozenset[str]
    ruleset_hash: str | None

    def triage(self, findings: pd.DataFrame, today: date | None = None) -> Triage:
        return triage(findings, self.baseline, self.waivers, self.rule_ids,
                      self.ruleset_hash, today)


def load_accepted(baseline_path, waivers_path, ruleset, versions=()) -> Accepted:
    """Load and validate `--baseline` and `--waivers` (either may be None)
    for an audit under `ruleset`: done before any log is read. Under a
    family (`versions`: every version, each judging the sessions of its
    dates), a baseline of any of its versions is accepted (its hash compared
    with that version's), and a waiver may name a rule of any of them."""
    rulesets = {rs.id: rs for rs in (tuple(versions) or (ruleset,))}
    baseline = load_baseline(baseline_path, tuple(rulesets)) if baseline_path else None
    waivers = load_waivers(waivers_path) if waivers_path else None
    judged_by = rulesets.get(baseline.ruleset_id, ruleset) if baseline else ruleset
    return Accepted(baseline, waivers,
                    frozenset(r.id for rs in rulesets.values() for r in rs.rules),
                    judged_by.content_hash)


def verdict(findings: pd.DataFrame, status, fail_on: str) -> dict:
    """The exit verdict: only new findings at or above `fail_on` fail the
    run; under `--fail-on none` nothing does, and the result says so."""
    if fail_on == REPORT_ONLY:
        return {"fail_on": fail_on, "failing": 0, "exit_code": 0, "result": "report only"}
    limit = SEVERITY_RANK[fail_on]
    at_or_above = (findings["severity"].map(SEVERITY_RANK) <= limit).to_numpy(dtype=bool)
    failing = int((at_or_above & (np.asarray(status, dtype=object) == "new")).sum())
    return {"fail_on": fail_on, "failing": failing, "exit_code": 1 if failing else 0,
            "result": "fail" if failing else "pass"}


def _fail(where: str):
    """The error of a baseline or waiver file the guarded reader refuses
    (`auditor.guarded`: a regular file, its size, its nesting and keys)."""
    return lambda problem: BaselineError(f"{where}: {problem}")


def _has_sites(findings: pd.DataFrame) -> bool:
    return "site" in findings and bool(findings["site"].notna().any())
