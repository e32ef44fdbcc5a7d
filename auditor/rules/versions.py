"""Versions in force: judge each table session by the version of a ruleset
that was in force on its date.

Naming. A *family* is a ruleset name without `@`, e.g. `nz`. Its *versions*
are the ruleset files `nz.toml` and `nz@<version>.toml` in one folder (the
shipped rulesets, or the folder a path names: `--ruleset my-rules/nz`), each
declaring the id `nz` or `nz@<version>` and the dates it is in force,
`effective_from` / `effective_to` (ISO dates, both inclusive; a missing one
leaves that end open). Periods may leave gaps but must not overlap.

`--ruleset nz` names the family when at least one `nz@*.toml` exists beside
where `nz` would be looked up (a bare name: among the shipped rulesets only;
a name with a folder, `my-rules/nz`: in that folder); anything else (`nz-1996`, `nz@2010`, a .toml
path) is a plain ruleset that judges every table, whatever its dates.

Sessions. A table session is the table's events from a `table_open` to the
next one (the events before a table's first `table_open` are a session of
their own), dated by its first event's `ts` in UTC. Each session is judged by
the version in force on that date; a session no version covers stops the
audit (exit 2) naming the table, its first seq and its date. Quarantined
rows go with the session holding their seq (a row without one, with its
table's first session; a row of no known table, with the earliest session).

Everything here is a pure function of rulesets and loaded logs except
`resolve_family`, which reads the ruleset files; the audit of a family is
`auditor.run.family.audit_family`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from auditor.errors import RulesetError, VersionError
from auditor.logs.load import LoadedLogs
from auditor.logs.tables import session_starts, table_runs
from auditor.rules import ruleset as ruleset_mod
from auditor.rules.ruleset import Ruleset

SEP = "@"


@dataclass(frozen=True)
class Family:
    name: str
    versions: tuple[Ruleset, ...]  # ordered by effective_from (open start first)

    @property
    def latest(self) -> Ruleset:
        return self.versions[-1]

    def describe(self) -> str:
        return "; ".join(f"{v.id}: {period(v)}" for v in self.versions)


@dataclass(frozen=True)
class Session:
    table: str
    first_seq: int
    start: int  # first row (position in the loaded events)
    stop: int  # one past the last row
    day: date


# --- the family ------------------------------------------------------------------------------

def family_files(ref: str) -> tuple[str, list[Path]] | None:
    """(family name, its version files) when `ref` names a family, else None."""
    if not ref or SEP in ref or ref.lower().endswith(".toml"):
        return None
    if ruleset_mod.looks_like_path(ref):  # (one resolver: a bare name is shipped)
        if Path(ref).is_file():
            return None
        folder = Path(ref).parent
    else:
        folder = ruleset_mod.shipped_dir()
    name = Path(ref).name
    if not name or not folder.is_dir():
        return None
    versions = sorted(folder.glob(f"{glob_escape(name)}{SEP}*.toml"))
    if not versions:
        return None
    plain = folder / f"{name}.toml"
    return name, ([plain] if plain.is_file() else []) + versions


def glob_escape(text: str) -> str:
    return "".join(f"[{c}]" if c in "*?[" else c for c in text)


def resolve_family(ref: str) -> Family | None:
    """Load and validate every version of the family `ref` names, or None
    when `ref` is a plain ruleset."""
    found = family_files(ref)
    if found is None:
        return None
    name, files = found
    versions = [ruleset_mod.load_ruleset(str(p)) for p in files]
    for path, rs in zip(files, versions):
        if rs.id != name and not rs.id.startswith(name + SEP):
            raise RulesetError(str(path), f"a version of family {name!r} must declare the id "
                               f"{name!r} or {name + SEP}<version>, not {rs.id!r}", key="id")
    return make_family(name, versions)


def make_family(name: str, versions: list[Ruleset]) -> Family:
    """Order versions by date and refuse overlapping periods."""
    ordered = sorted(versions, key=lambda v: (v.effective_from or date.min, v.id))
    for a, b in itertools.pairwise(ordered):
        if (a.effective_to or date.max) >= (b.effective_from or date.min):
            raise RulesetError(b.files[-1] if b.files else b.id,
                               f"in force {period(b)}, which overlaps {a.id} ({period(a)}): "
                               f"one day may have only one version of {name!r} in force",
                               key="effective_from")
    return Family(name, tuple(ordered))


def period(rs: Ruleset) -> str:
    start = rs.effective_from.isoformat() if rs.effective_from else "always"
    if rs.effective_to is None:
        return f"from {start}" if rs.effective_from else "always"
    return f"{start} to {rs.effective_to.isoformat()}"


def version_on(family: Family, day: date) -> Ruleset | None:
    """The version in force on `day` (both ends of a period included)."""
    for v in family.versions:
        if (v.effective_from or date.min) <= day <= (v.effective_to or date.max):
            return v
    return None


# --- sessions --------------------------------------------------------------------------------

def sessions(events: pd.DataFrame) -> list[Session]:
    """Every table session of the loaded events (ordered by table, seq)."""
    n = len(events)
    if not n:
        return []
    tables, _, names = table_runs(events)
    starts = session_starts(tables, np.flatnonzero((events["event"] == "table_open").to_numpy(
        dtype=bool)))
    stops = np.append(starts[1:], n)
    table = np.searchsorted(tables, starts, side="right") - 1
    ts = events["ts"]
    seq = events["seq"]
    out = []
    for a, b, t in zip(starts.tolist(), stops.tolist(), table.tolist()):
        stamp = pd.Timestamp(ts.iat[a])
        stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
        out.append(Session(names[t], int(seq.iat[a]), a, b, stamp.date()))
    return out


def assign(family: Family, found: list[Session]) -> list[tuple[Session, Ruleset]]:
    """Each session with the version in force on its date; VersionError
    naming every session no version covers."""
    pairs, outside = [], []
    for s in found:
        v = version_on(family, s.day)
        if v is None:
            outside.append(s)
        else:
            pairs.append((s, v))
    if outside:
        where = "; ".join(f"table {s.table} from seq {s.first_seq} on {s.day.isoformat()} (UTC)"
                          for s in outside[:5])
        more = f" and {len(outside) - 5} more session(s)" if len(outside) > 5 else ""
        raise VersionError(family.name, f"no version in force for {where}{more}; versions: "
                           f"{family.describe()}")
    return pairs


@dataclass
class Part:
    """The logs one version judges in one audit call: its sessions of
    `source`, with its quarantined rows (`split_by_version`)."""

    ruleset: Ruleset
    source: LoadedLogs
    sessions: list[Session] = field(default_factory=list)
    quarantine: pd.DataFrame | None = None

    @property
    def whole(self) -> bool:
        """Whether it holds every row of the source, in order (as most
        batches of a year do): its events are then the source's own."""
        events = self.source.events
        bounds = [(s.start, s.stop) for s in self.sessions]
        return bool(bounds) and bounds[0][0] == 0 and bounds[-1][1] == len(events) \
            and all(a[1] == b[0] for a, b in itertools.pairwise(bounds)) \
            and isinstance(events.index, pd.RangeIndex) and events.index.start == 0 \
            and events.index.step == 1

    @property
    def logs(self) -> LoadedLogs:
        """Its logs, made on each call (its sessions' rows copied out of the
        source's, or the source's events themselves where it is `whole`):
        held only while it is audited, so the parts of one audit are not all
        in memory at once."""
        events = self.source.events
        if not self.whole:
            rows = np.concatenate([np.arange(s.start, s.stop) for s in self.sessions])
            events = events.iloc[rows].reset_index(drop=True)
        quarantine = self.source.quarantine if self.quarantine is None else self.quarantine
        return LoadedLogs(events, quarantine, self.source.inputs)


def split_by_version(logs: LoadedLogs, pairs: list[tuple[Session, Ruleset]]) -> list[Part]:
    """The loaded logs cut into one part per version. A table that returns to
    a version after another one gets a separate part, so no part joins two
    distant stretches of one table (a false seq gap)."""
    groups: dict[tuple[str, int], Part] = {}
    last: dict[str, str] = {}  # table -> version of its previous session
    runs: dict[tuple[str, str], int] = {}  # (table, version) -> returns so far
    where: dict[str, list[tuple[int, tuple[str, int]]]] = {}  # table -> (first_seq, group)
    for s, v in pairs:
        if s.table in last and last[s.table] != v.id and (s.table, v.id) in runs:
            runs[(s.table, v.id)] += 1
        runs.setdefault((s.table, v.id), 0)
        last[s.table] = v.id
        key = (v.id, runs[(s.table, v.id)])
        groups.setdefault(key, Part(v, logs)).sessions.append(s)
        where.setdefault(s.table, []).append((s.first_seq, key))
    earliest = min(pairs, key=lambda x: (x[0].day, x[0].table, x[0].first_seq), default=None)
    quarantine_group = _quarantine_groups(logs.quarantine, where,
                                          earliest and _key_of(earliest, groups))
    parts = []
    for key, part in groups.items():
        mask = np.array([g == key for g in quarantine_group], dtype=bool)
        quarantine = logs.quarantine.loc[mask].reset_index(drop=True)
        parts.append(Part(part.ruleset, logs, part.sessions, quarantine))
    return parts


def _key_of(pair, groups) -> tuple[str, int] | None:
    s, _ = pair
    return next(k for k, p in groups.items() if s in p.sessions)


def _quarantine_groups(quarantine: pd.DataFrame, where, earliest) -> list:
    out = []
    for table, seq in zip(quarantine["table_id"], quarantine["seq"]):
        spans = where.get(str(table)) if table is not None and not pd.isna(table) else None
        if not spans:
            out.append(earliest)
            continue
        key = spans[0][1]
        if seq is not None and not pd.isna(seq):
            for first, k in spans:
                if first <= int(seq):
                    key = k
        out.append(key)
    return out
