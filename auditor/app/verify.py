"""Does a report still stand? Re-read the inputs its provenance names, check
their SHA-256 and the ruleset's content hash, re-run the audit and compare
the findings and the quarantine row for row with the report.

The library behind `auditor verify DIR`. Paths are those recorded in the
report (as given to `auditor check`, so relative ones are taken from the
current folder: verify from where the check ran).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from auditor import __version__
from auditor.errors import LogFileError, ReportError, RulesetError
from auditor.findings import FINDINGS_SCHEMA
from auditor.logs.load import load_logs
from auditor.logs.raw import (
    DEFAULT_INFLATE_LIMITS,
    InflateLimits,
    ReadOptions,
    inflate_limits,
    sha256_of,
)
from auditor.report.parquet import QUARANTINE_SCHEMA
from auditor.rules.ruleset import Ruleset, load_ruleset
from auditor.run.core import audit_loaded

#: Differences listed one by one before the rest are counted.
MAX_LISTED = 10


@dataclass
class Verdict:
    """What no longer matches (`problems`; none: the report stands) and what
    was checked."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    inputs: int = 0
    findings: int = 0
    quarantined: int = 0
    ruleset: str = ""

    @property
    def stands(self) -> bool:
        return not self.problems


class DamagedReport(ReportError):
    """A findings.parquet that is a Parquet file but can no longer be read,
    or whose provenance is damaged: a report that does not stand (exit 1),
    unlike no report (exit 2)."""


def _parquet_framed(path: Path) -> bool:
    """Whether a file starts or ends as Parquet does (`PAR1`): a report
    damaged since it was written, not something else under its name."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
            fh.seek(-4, os.SEEK_END)
            return b"PAR1" in (head, fh.read(4))  # (one may be the flipped byte)
    except OSError:
        return False


def read_report(folder: Path) -> tuple[dict, pa.Table]:
    """The provenance and the findings table of the report in `folder`."""
    folder = Path(folder)
    target = folder / "findings.parquet"
    if not folder.is_dir():
        raise ReportError(f"{folder}: no such folder")
    if not target.is_file():
        raise ReportError(f"{folder}: no report here (no findings.parquet; `auditor check "
                          f"--format parquet` writes it)")
    try:
        table = pq.read_table(target)
    except (pa.ArrowException, OSError, ValueError) as exc:
        error = DamagedReport if _parquet_framed(target) else ReportError
        raise error(f"{target}: not a readable Parquet file: {exc}") from None
    raw = (table.schema.metadata or {}).get(b"auditor")
    if not raw:
        raise ReportError(f"{target}: no auditor provenance in its metadata")
    try:
        meta = json.loads(raw)
    except ValueError:
        meta = None
    if not isinstance(meta, dict) or not isinstance(meta.get("inputs"), list) \
            or not isinstance(meta.get("ruleset"), dict):
        raise DamagedReport(f"{target}: its auditor provenance is damaged")
    return meta, table.replace_schema_metadata(None)


def verify_report(folder: Path, inflate: InflateLimits = DEFAULT_INFLATE_LIMITS) -> Verdict:
    """Re-check the report in `folder` (ReportError when there is none),
    reading .gz inputs under `inflate` (as `check` was given)."""
    folder = Path(folder)
    try:
        meta, findings = read_report(folder)
    except DamagedReport as exc:  # a report is there, and cannot be what was written
        return Verdict(problems=[str(exc)])
    verdict = Verdict(inputs=len(meta["inputs"]), findings=findings.num_rows)
    paths = _check_inputs(meta["inputs"], verdict)
    ruleset = _check_ruleset(meta, verdict)
    if len(paths) < len(meta["inputs"]) or ruleset is None:
        verdict.problems.append("the audit could not be re-run (see above)")
        return verdict
    try:
        with inflate_limits(inflate):
            logs = load_logs(paths, options=ReadOptions(**meta.get("read_options", {})))
    except LogFileError as exc:
        verdict.problems.append(f"input {exc}: can no longer be read")
        return verdict
    _check_counts(meta["inputs"], logs.inputs, verdict)
    result = ruleset(logs)
    fresh = pa.Table.from_pandas(result.findings, schema=FINDINGS_SCHEMA, preserve_index=False)
    _compare("finding", findings, fresh, "finding_id", verdict)
    quarantine_file = folder / "quarantine.parquet"
    if quarantine_file.is_file():
        try:
            old_q = pq.read_table(quarantine_file).replace_schema_metadata(None)
        except (pa.ArrowException, OSError) as exc:
            verdict.problems.append(f"{quarantine_file}: not readable: {exc}")
        else:
            new_q = pa.Table.from_pandas(logs.quarantine, schema=QUARANTINE_SCHEMA,
                                         preserve_index=False)
            verdict.quarantined = new_q.num_rows
            _compare("quarantined row", old_q, new_q, None, verdict)
    else:
        verdict.problems.append(f"{quarantine_file}: missing")
    version = meta.get("auditor_version")
    if version and version != __version__:
        verdict.notes.append(f"the report was made by auditor {version}; this is {__version__}")
    return verdict


def _check_inputs(inputs: list[dict], verdict: Verdict) -> list[str]:
    """The inputs still there; each missing or changed one is a problem."""
    present = []
    for inp in inputs:
        path = Path(str(inp.get("path", "")))
        if not path.is_file():
            verdict.problems.append(f"input {path}: missing")
            continue
        try:
            digest = sha256_of(path)
        except OSError as exc:
            verdict.problems.append(f"input {path}: cannot be read: {exc.strerror or exc}")
            continue
        if digest != inp.get("sha256"):
            verdict.problems.append(f"input {path}: changed (sha256 was {inp.get('sha256')}, "
                                    f"now {digest})")
        present.append(str(path))
    return present


def _check_ruleset(meta: dict, verdict: Verdict):
    """The audit to re-run (a function of the loaded logs), or None when the
    ruleset (or a version of its family) is missing or no longer loads. A
    changed content hash is a problem, and the audit still re-runs."""
    block = meta["ruleset"]
    verdict.ruleset = str(block.get("id"))
    if block.get("family") and meta.get("ruleset_versions"):
        from auditor.rules.versions import make_family
        from auditor.run.family import audit_family

        versions = [_load(b, verdict) for b in meta["ruleset_versions"]]
        if any(v is None for v in versions):
            return None
        try:
            family = make_family(block["family"], versions)
        except RulesetError as exc:
            verdict.problems.append(f"ruleset family {block['family']}: {exc}")
            return None
        return lambda logs: audit_family(logs, family, audit_loaded)
    ruleset = _load(block, verdict)
    if ruleset is None:
        return None
    return lambda logs: audit_loaded(logs, ruleset)


def _load(block: dict, verdict: Verdict) -> Ruleset | None:
    rid = block.get("id")
    files = block.get("files") or []
    for f in files:
        if not Path(f).is_file():
            verdict.problems.append(f"ruleset {rid}: file {f} missing")
            return None
    ref = files[-1] if files else rid
    try:
        ruleset = load_ruleset(str(ref))
    except RulesetError as exc:
        verdict.problems.append(f"ruleset {rid}: no longer loads: {exc}")
        return None
    if ruleset.content_hash != block.get("content_hash"):
        verdict.problems.append(f"ruleset {rid}: changed (content hash was "
                                f"{block.get('content_hash')}, now {ruleset.content_hash})")
    return ruleset


def _check_counts(recorded: list[dict], now, verdict: Verdict) -> None:
    by_path = {f.path: f.as_dict() for f in now}
    for inp in recorded:
        fresh = by_path.get(str(inp.get("path")))
        if fresh is None:
            continue
        for key in ("rows_read", "rows_replayed", "rows_quarantined"):
            if fresh[key] != inp.get(key):
                verdict.problems.append(f"input {inp['path']}: {key} was {inp.get(key)}, "
                                        f"now {fresh[key]}")


def _compare(what: str, old: pa.Table, new: pa.Table, key: str | None,
             verdict: Verdict) -> None:
    """Row for row; what differs is listed (by `key` where there is one)."""
    if old.schema.names != new.schema.names:
        verdict.problems.append(f"{what}s: the report's columns are {old.schema.names}, "
                                f"now {new.schema.names}")
        return
    try:
        new = new.cast(old.schema)
    except (pa.ArrowException, ValueError):
        pass
    if old.equals(new):
        return
    old_rows, new_rows = old.to_pylist(), new.to_pylist()
    lines: list[str] = []
    if key is not None:
        before = {r[key]: r for r in old_rows}
        after = {r[key]: r for r in new_rows}
        for k, row in before.items():
            if k not in after:
                lines.append(f"{what} {k} ({_where(row)}) is in the report, not found now")
            elif after[k] != row:
                cols = [c for c in row if row[c] != after[k][c]]
                lines.append(f"{what} {k} ({_where(row)}) now differs in {', '.join(cols)}")
        for k, row in after.items():
            if k not in before:
                lines.append(f"{what} {k} ({_where(row)}) is found now, not in the report")
        if not lines:
            lines.append(f"{what}s are the same but in another order")
    else:
        for i, (a, b) in enumerate(zip(old_rows, new_rows)):
            if a != b:
                lines.append(f"{what} #{i + 1} ({_where(a)}) now differs")
        if len(old_rows) != len(new_rows):
            lines.append(f"{len(old_rows)} {what}(s) in the report, {len(new_rows)} now")
    verdict.problems.extend(lines[:MAX_LISTED])
    if len(lines) > MAX_LISTED:
        verdict.problems.append(f"… and {len(lines) - MAX_LISTED} more {what} difference(s)")


def _where(row: dict) -> str:
    parts = [str(row[k]) for k in ("code",) if row.get(k)]
    if row.get("table_id") is not None:
        parts.append(f"{row['table_id']} seq {row.get('seq')}")
    if row.get("source_file"):
        parts.append(f"{Path(str(row['source_file'])).name}:{row.get('source_line')}")
    return ", ".join(parts) or "no location"
