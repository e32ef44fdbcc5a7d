"""Findings: one row per violation, tied to the event that broke the rule and
to the clause it breaks, with an id that stays the same from run to run."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd

from auditor.codes import SEVERITY_RANK

#: The findings table's columns (`shared/spec/violations.md`), finding_id first.
FINDING_COLUMNS: tuple[str, ...] = (
    "finding_id", "code", "rule_id", "ruleset", "clause", "severity", "table_id", "seq",
    "ts", "event", "seat", "actor_role", "actor_id", "message", "evidence", "source_file",
    "source_line",
)
LOCATION_COLUMNS: tuple[str, ...] = (
    "table_id", "seq", "ts", "event", "seat", "actor_role", "actor_id", "source_file",
    "source_line",
)


def evidence_json(evidence: dict) -> str:
    """Evidence as canonical JSON text: sorted keys, so the bytes never vary."""
    return json.dumps(evidence, sort_keys=True, ensure_ascii=False, default=_jsonable,
                      separators=(",", ":"))


def _jsonable(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    return str(value)


def empty_findings() -> pd.DataFrame:
    return finalize([])


def finalize(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate per-rule findings, order them deterministically and give
    each its stable id: a hash of ruleset, rule, table and seq (with the source
    line where seq could not be read, and a counter where one rule fires
    twice on one seq)."""
    parts = [p for p in parts if len(p)]
    if not parts:
        frame = pd.DataFrame({c: pd.Series(dtype=object) for c in FINDING_COLUMNS})
        return _typed(frame)
    frame = pd.concat(parts, ignore_index=True)
    frame["_sev"] = frame["severity"].map(SEVERITY_RANK)
    frame["_seqkey"] = frame["seq"].fillna(-1).astype("int64")
    frame = frame.sort_values(
        ["table_id", "_seqkey", "source_file", "source_line", "_sev", "code", "rule_id"],
        kind="stable", na_position="first",
    ).reset_index(drop=True)
    keys = (
        frame["ruleset"].astype(str) + "|" + frame["rule_id"].astype(str) + "|"
        + frame["table_id"].astype(object).fillna("").astype(str) + "|"
        + frame["seq"].astype(object).where(frame["seq"].notna(), None).map(
            lambda v: "" if v is None else str(int(v)))
    )
    no_seq = frame["seq"].isna()
    if no_seq.any():
        keys = keys.where(~no_seq, keys + "|" + frame["source_file"].astype(str).map(
            lambda p: p.replace("\\", "/").rsplit("/", 1)[-1]) + ":" +
            frame["source_line"].astype(str))
    dup = keys.groupby(keys).cumcount()
    keys = keys.where(dup == 0, keys + "#" + dup.astype(str))
    frame["finding_id"] = keys.map(lambda k: hashlib.sha256(k.encode()).hexdigest()[:20])
    return _typed(frame[list(FINDING_COLUMNS)])


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({
        "finding_id": frame["finding_id"].astype(object),
        "code": frame["code"].astype(object),
        "rule_id": frame["rule_id"].astype(object),
        "ruleset": frame["ruleset"].astype(object),
        "clause": frame["clause"].astype(object),
        "severity": frame["severity"].astype(object),
        "table_id": frame["table_id"].astype(object),
        "seq": frame["seq"].astype("Int64"),
        "ts": pd.to_datetime(frame["ts"], utc=True).astype("datetime64[us, UTC]"),
        "event": frame["event"].astype(object),
        "seat": frame["seat"].astype("Int64"),
        "actor_role": frame["actor_role"].astype(object),
        "actor_id": frame["actor_id"].astype(object),
        "message": frame["message"].astype(object),
        "evidence": frame["evidence"].astype(object),
        "source_file": frame["source_file"].astype(object),
        "source_line": frame["source_line"].astype("Int64"),
    })
    return out.reset_index(drop=True)


def severity_counts(findings: pd.DataFrame) -> dict[str, int]:
    counts = findings["severity"].value_counts()
    return {s: int(counts.get(s, 0)) for s in SEVERITY_RANK}


def at_or_above(findings: pd.DataFrame, threshold: str) -> int:
    limit = SEVERITY_RANK[threshold]
    return int((findings["severity"].map(SEVERITY_RANK) <= limit).sum())
