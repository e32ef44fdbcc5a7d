"""Findings: one row per violation, tied to the event that broke the rule and
to the clause it breaks, with an id that stays the same from run to run."""

from __future__ import annotations

import gc
import hashlib
import json
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
import pyarrow as pa

from auditor.codes import SEVERITY_RANK
from auditor.compat import json_c_make_encoder, json_string_quoter

#: The findings table (`shared/spec/violations.md`), finding_id first: each
#: column with its Arrow type (findings.parquet); text is held as objects,
#: whole numbers as Int64, `ts` in microseconds, UTC.
FINDINGS_SCHEMA = pa.schema([
    ("finding_id", pa.string()), ("code", pa.string()), ("rule_id", pa.string()),
    ("ruleset", pa.string()), ("clause", pa.string()), ("severity", pa.string()),
    ("table_id", pa.string()), ("seq", pa.int64()), ("ts", pa.timestamp("us", tz="UTC")),
    ("event", pa.string()), ("seat", pa.int64()), ("actor_role", pa.string()),
    ("actor_id", pa.string()), ("message", pa.string()), ("evidence", pa.string()),
    ("source_file", pa.string()), ("source_line", pa.int64()), ("caveat", pa.string()),
])
FINDING_COLUMNS: tuple[str, ...] = tuple(FINDINGS_SCHEMA.names)
#: Between a site and a table id in the table key the replay and the checks
#: see when sites are known (`auditor.logs.site`); never in a recorded id
#: (a control character).
SITE_SEPARATOR = "\x1f"
#: The findings column that names the site, before `table_id`, present only
#: when some finding's table has a site.
SITE_FIELD = pa.field("site", pa.string())
#: What triage (`auditor.triage`) adds to each finding for the report
#: formats, after the table's own columns (findings.parquet keeps only those):
#: `status` (one of STATUSES), `in_baseline` (None without a baseline), and
#: the number, reason and expiry day of the waiver that waived it (else None).
STATUS_COLUMNS: tuple[str, ...] = (
    "status", "in_baseline", "waiver", "waiver_reason", "waiver_expires",
)
#: A finding's status: new, known from the baseline, or waived.
STATUSES: tuple[str, ...] = ("new", "known", "waived")
LOCATION_COLUMNS: tuple[str, ...] = (
    "table_id", "seq", "ts", "event", "seat", "actor_role", "actor_id", "source_file",
    "source_line",
)


def read_stored(source) -> pa.Table:
    """A Parquet file of a report (findings, quarantine, roll-ups) read back
    whole; pa.ArrowInvalid for one whose column names are not UTF-8 text,
    which no run writes and which Arrow reads, raising only when a name is
    asked for (an edited or damaged report: an internal error there)."""
    import pyarrow.parquet as pq

    table = pq.read_table(source)
    _names_decoded(table.schema)
    return table


def read_stored_schema(source) -> pa.Schema:
    """The schema of a Parquet file of a report, from its footer alone,
    refused as `read_stored` refuses it."""
    import pyarrow.parquet as pq

    try:
        return _names_decoded(pq.read_schema(source))
    except UnicodeDecodeError as exc:  # (an Arrow that decodes the names as it reads)
        raise _not_utf8(exc) from None


def _names_decoded(schema: pa.Schema) -> pa.Schema:
    try:
        schema.names  # noqa: B018 - (decoded here, once, or refused)
    except UnicodeDecodeError as exc:
        raise _not_utf8(exc) from None
    return schema


def _not_utf8(exc: UnicodeDecodeError) -> pa.ArrowInvalid:
    return pa.ArrowInvalid(f"a column name is not UTF-8 text ({exc.reason} at byte "
                           f"{exc.start})")


def findings_schema(findings: pd.DataFrame) -> pa.Schema:
    """FINDINGS_SCHEMA, with `site` before `table_id` when `findings` has it."""
    if "site" not in findings:
        return FINDINGS_SCHEMA
    return FINDINGS_SCHEMA.insert(FINDINGS_SCHEMA.get_field_index("table_id"), SITE_FIELD)


#: Who answers for a finding (issue 29, `auditor.audit.responsible`):
#: findings.parquet's last columns, when the audit laid its findings at staff.
#: Not part of a finding's id, nor of the other formats' columns.
RESPONSIBLE_FIELDS = (pa.field("responsible_id", pa.string()),
                      pa.field("responsible_role", pa.string()))


def stored_schema(findings: pd.DataFrame) -> pa.Schema:
    """findings.parquet's schema: `findings_schema`, then RESPONSIBLE_FIELDS
    when `findings` has them."""
    schema = findings_schema(findings)
    if RESPONSIBLE_FIELDS[0].name in findings:
        for f in RESPONSIBLE_FIELDS:
            schema = schema.append(f)
    return schema


def findings_columns(findings: pd.DataFrame) -> tuple[str, ...]:
    return tuple(findings_schema(findings).names)


def missing(value) -> bool:
    """Whether a cell was not recorded: None, pandas' NA or NaT, or a float
    NaN (a column with gaps read back from a frame)."""
    # (NaN: the one float unequal to itself)
    return value is None or value is pd.NA or value is pd.NaT or (
        isinstance(value, float) and value != value)  # noqa: PLR0124


def split_sites(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with each `table_id` key of a site (`site` + SITE_SEPARATOR +
    id) given back as recorded and the site in a `site` column before it;
    unchanged when no key has a site."""
    if "table_id" not in frame or not len(frame):
        return frame
    tables = frame["table_id"].astype(object)
    keyed = tables.map(lambda t: isinstance(t, str) and SITE_SEPARATOR in t)
    if not keyed.any():
        return frame
    parts = tables[keyed].str.split(SITE_SEPARATOR, n=1)
    sites = pd.Series([None] * len(frame), index=frame.index, dtype=object)
    if "site" in frame:
        sites[:] = frame["site"].astype(object).where(frame["site"].notna(), None)
    sites[keyed] = parts.str[0].where(parts.str[0] != "", None)  # "": no site
    tables = tables.copy()
    tables[keyed] = parts.str[1]
    out = frame.drop(columns=["site"]) if "site" in frame else frame.copy()
    if sites.isna().all() and "site" not in frame:  # ids holding the separator, no site
        out["table_id"] = tables.astype(object)
        return out
    out["table_id"] = tables.astype(object)
    out.insert(out.columns.get_loc("table_id"), "site", sites)
    return out


def joined_sites(frame: pd.DataFrame) -> pd.DataFrame:
    """`split_sites` undone: the site back in each `table_id` key."""
    if "site" not in frame:
        return frame
    sites, tables = frame["site"].astype(object), frame["table_id"].astype(object)
    has = sites.notna() & tables.notna()
    tables = tables.where(~has, sites.astype(str) + SITE_SEPARATOR + tables.astype(str))
    out = frame.drop(columns=["site"])
    out["table_id"] = tables.astype(object)
    return out


def evidence_json(evidence: dict) -> str:
    """Evidence as canonical JSON text: sorted keys, so the bytes never vary."""
    if not evidence:
        return "{}"
    return _encode(evidence)


def evidence_jsons(evidence: list[dict]) -> list[str]:
    """`evidence_json` of each (the many-findings path: no per-call set-up)."""
    return ["{}" if not e else _encode(e) for e in evidence]


def _dumps(evidence) -> str:
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


def _c_encoder():
    """json.dumps with these options builds a C encoder on every call; build
    it once (the same encoder json.dumps uses, so the same bytes). None where
    the C encoder is not available."""
    c_make_encoder = json_c_make_encoder()
    if c_make_encoder is None:
        return None
    try:
        make = c_make_encoder(None, _jsonable, json_string_quoter(ensure_ascii=False), None,
                              ":", ",", True, False, True)
    except TypeError:
        return None

    def encode(evidence) -> str:
        return "".join(make(evidence, 0))

    probe = {"b": [1, 2.5, None, True], "a": {"z": "é\n", "y": np.int64(3)}, "c": float("nan")}
    try:
        return encode if encode(probe) == _dumps(probe) else None
    except (TypeError, ValueError):
        return None


_encode = _c_encoder() or _dumps


@contextmanager
def paused_gc():
    """The cyclic garbage collector off for the block. The checks and the
    findings allocate many small objects and make no cycles, while the
    replay's state holds millions of objects that every full collection
    would traverse again: its cost grows with the log, not the work."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def finalize(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate per-rule findings, order them deterministically and give
    each its stable id: a hash of ruleset, rule, table and seq (with the source
    line where seq could not be read, and a counter where one rule fires
    twice on one seq).

    The order is one `np.lexsort` of integer keys (each column factorised
    once) and the ids one pass of Python over the rows: a sort of the
    frame by text columns and per-row pandas `map`s cost seconds for tens
    of thousands of findings."""
    with paused_gc():
        return _merged([_sorted(parts)])


@dataclass
class SortedFindings:
    """The findings of some whole tables, finalized where they were found
    (`sort_findings`: a batch's worker) so that `merge_sorted` need not
    order or hash them again. `tabled`: the rows of a table, in finding
    order, with their ids, each site still joined to its table id;
    `loose`: the rows of no table (no table id, or an empty one) as found,
    since their order and ids depend on such rows of other batches."""

    tabled: pd.DataFrame
    loose: list[pd.DataFrame]

    def __len__(self) -> int:
        return len(self.tabled) + sum(len(p) for p in self.loose)


def sort_findings(parts: list[pd.DataFrame]) -> SortedFindings:
    """`parts` (per-rule findings of whole tables: no other part to be merged
    with them holds rows of these tables) ordered and given their ids."""
    with paused_gc():
        return _sorted(parts)


def merge_sorted(parts: list[SortedFindings]) -> pd.DataFrame:
    """What `finalize` gives of every part `parts` were sorted from, in this
    order: the loose rows finalized together (a missing table ranks first,
    and their ids' counters run across parts), then each table's rows as
    sorted, the tables in the order of their ids. Each table's rows are in
    one part (as the batches keep them: `auditor.run.stream`), so a row's
    place among its table's and its id are those one finalize gives."""
    with paused_gc():
        return _merged(parts)


def _sorted(parts: list[pd.DataFrame]) -> SortedFindings:
    tabled, loose = [], []
    for part in (joined_sites(p) for p in parts if len(p)):
        tables = part["table_id"].astype(object) if "table_id" in part else None
        none = np.ones(len(part), dtype=bool) if tables is None else \
            (tables.isna() | (tables.fillna("-") == "")).to_numpy(dtype=bool)
        if none.all():
            loose.append(part)
        elif not none.any():
            tabled.append(part)
        else:
            loose.append(part[none])
            tabled.append(part[~none])
    return SortedFindings(_finalize(tabled), loose)


def _merged(parts: list[SortedFindings]) -> pd.DataFrame:
    head = _finalize([p for s in parts for p in s.loose])
    tabled = [s.tabled for s in parts if len(s.tabled)]
    if len(tabled) > 1:
        frame = pd.concat(tabled, ignore_index=True)
        ranks = _rank(frame["table_id"])
        ends = np.cumsum([len(t) for t in tabled])
        held = [np.unique(r) for r in np.split(ranks, ends[:-1])]
        if sum(len(h) for h in held) > len(np.unique(ranks)):
            frame = _tables_finalized_again(frame, ranks, held)
            ranks = _rank(frame["table_id"])
        order = np.argsort(ranks, kind="stable")
        if (np.diff(order) < 0).any():  # (the tables not already in order)
            frame = frame.take(order).reset_index(drop=True)
        tabled = [frame]
    frames = [f for f in (head, *tabled) if len(f)]
    if not frames:
        return head
    return split_sites(frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True))


def _tables_finalized_again(frame: pd.DataFrame, ranks: np.ndarray,
                            held: list[np.ndarray]) -> pd.DataFrame:
    """`frame` (the parts' tabled rows, in part order) with the rows of a
    table that several parts hold ordered and named again, together: the
    engines never cut a table, so this is a safeguard, not a path taken."""
    counts = np.bincount(np.concatenate(held))
    again = np.isin(ranks, np.flatnonzero(counts > 1))
    redone = _finalize([frame[again].drop(columns=["finding_id"])])
    return pd.concat([frame[~again], redone], ignore_index=True)


def _finalize(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """`parts` (their sites joined to their table ids) ordered, with their
    ids; the sites left joined."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return _no_findings()
    frame = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    frame = frame.reset_index(drop=True)
    typed = _typed_columns(frame)
    order = _finding_order(typed)
    typed = {name: values.take(order).reset_index(drop=True) for name, values in typed.items()}
    ids = pd.Series(_finding_ids(typed, frame, order), dtype=object)
    return pd.DataFrame({"finding_id": ids, **typed})


@cache
def _empty_findings() -> pd.DataFrame:
    return _typed(pd.DataFrame({c: pd.Series(dtype=object) for c in FINDING_COLUMNS}))


def _no_findings() -> pd.DataFrame:
    """No findings, in the findings' columns and dtypes: a copy of one made
    once a process (typing each column of an empty frame cost 4 ms, paid by
    every batch's audit whatever it found)."""
    return _empty_findings().copy()


def _finding_order(frame: dict[str, pd.Series]) -> np.ndarray:
    """Positions in the order table, seq, file, line, severity, code, rule id
    (stable; a missing value first, a missing seq as -1): the order of
    `sort_values(..., kind="stable", na_position="first")`."""
    sev = frame["severity"].map(SEVERITY_RANK)
    seqkey = frame["seq"].fillna(-1).astype("int64").to_numpy()
    keys = [_rank(frame["table_id"]), seqkey, _rank(frame["source_file"]),
            _rank(frame["source_line"]), _rank(sev), _rank(frame["code"]),
            _rank(frame["rule_id"])]
    return np.lexsort(keys[::-1])


def _rank(column: pd.Series) -> np.ndarray:
    """Each value's rank among the column's distinct values (-1: missing)."""
    codes, _ = pd.factorize(column, sort=True, use_na_sentinel=True)
    return codes


def _finding_ids(typed: dict[str, pd.Series], untyped: pd.DataFrame,
                 order: np.ndarray) -> list[str]:
    """`ruleset|rule_id|table_id|seq` (seq unread: `|file name:line` added;
    a repeat of the same key: `#n`), hashed, for rows in finding order."""
    tables = typed["table_id"].to_numpy(dtype=object, copy=True)
    tables[pd.isna(tables)] = ""
    seq = typed["seq"]
    seq_na = seq.isna().to_numpy()
    seqs = [str(q) for q in seq.to_numpy(dtype=np.int64, na_value=0).tolist()]
    for i in np.flatnonzero(seq_na).tolist():
        seqs[i] = ""
    keys = [f"{rs}|{rule}|{t}|{q}"
            for rs, rule, t, q in zip(_texts(typed["ruleset"]), _texts(typed["rule_id"]),
                                      tables.tolist(), seqs)]
    no_seq = np.flatnonzero(seq_na)
    if len(no_seq):
        # As recorded in the parts (a line read as a number prints as one).
        at = order[no_seq]
        files = untyped["source_file"].take(at).astype(str).tolist()
        lines = untyped["source_line"].take(at).astype(str).tolist()
        for i, f, line in zip(no_seq.tolist(), files, lines):
            keys[i] += "|" + f.replace("\\", "/").rsplit("/", 1)[-1] + ":" + line
    seen: dict[str, int] = {}
    ids = []
    sha = hashlib.sha256
    for k in keys:
        n = seen.get(k, 0)
        seen[k] = n + 1
        ids.append(sha((k if n == 0 else f"{k}#{n}").encode()).hexdigest()[:20])
    return ids


def _texts(column: pd.Series) -> list:
    """`column.astype(str)` as a list; text as it is."""
    values = column.tolist()
    return values if all(type(v) is str for v in values) else column.astype(str).tolist()


def _typed(frame: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({"finding_id": frame["finding_id"].astype(object),
                        **_typed_columns(frame)})
    return out.reset_index(drop=True)


def _typed_columns(frame: pd.DataFrame) -> dict[str, pd.Series]:
    """The findings columns but finding_id, each in its one dtype (from
    FINDINGS_SCHEMA)."""
    return {field.name: _held_as(frame[field.name] if field.name in frame
                                 else pd.Series([None] * len(frame), dtype=object), field.type)
            for field in FINDINGS_SCHEMA if field.name != "finding_id"}


def _held_as(column: pd.Series, arrow: pa.DataType) -> pd.Series:
    """`column` in the dtype findings hold a column of Arrow type `arrow` in."""
    if pa.types.is_timestamp(arrow):
        return pd.to_datetime(column, utc=True).astype(f"datetime64[{arrow.unit}, UTC]")
    return column.astype("Int64" if pa.types.is_integer(arrow) else object)


def severity_counts(findings: pd.DataFrame) -> dict[str, int]:
    counts = findings["severity"].value_counts()
    return {s: int(counts.get(s, 0)) for s in SEVERITY_RANK}


def at_or_above(findings: pd.DataFrame, threshold: str) -> int:
    limit = SEVERITY_RANK[threshold]
    return int((findings["severity"].map(SEVERITY_RANK) <= limit).sum())
