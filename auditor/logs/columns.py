"""Columns an exporter names otherwise: a header that is not a column of
event-log-v1 but looks like a typo of one (one edit away, or the same but
for case, underscores, hyphens and spaces: `flag`, `Flags`, `die_1`,
`actor role`, `tableid`) is named in a warning with the likely column, and
a project configuration's `columns` mapping renames columns as they are
read (recorded in the provenance)."""

from __future__ import annotations

import re

import pyarrow as pa

from auditor.errors import LogFileError
from auditor.logs.schema import COLUMN_NAMES

_SEPARATORS = re.compile(r"[\s_\-]+")


def _plain(name: str) -> str:
    return _SEPARATORS.sub("", name.strip().lower())


def _one_edit(a: str, b: str) -> bool:
    """Whether `a` becomes `b` by one insertion, deletion or substitution."""
    if a == b or abs(len(a) - len(b)) > 1:
        return a == b
    if len(a) > len(b):
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    if len(a) == len(b):
        return a[i + 1:] == b[i + 1:]
    return a[i:] == b[i + 1:]


def likely_column(name: str, present: set[str] | tuple[str, ...]) -> str | None:
    """The spec column `name` most likely means (one the file lacks), or
    None when `name` is a spec column or looks like none."""
    if name in COLUMN_NAMES:
        return None
    for spec in COLUMN_NAMES:
        if spec in present:
            continue
        if _plain(name) == _plain(spec) or _one_edit(name.lower(), spec):
            return spec
    return None


def suspect_columns(columns: tuple[str, ...]) -> list[tuple[str, str]]:
    """(column, likely spec column) for each of a file's columns that looks
    like a typo of a spec column the file lacks."""
    out = []
    for name in columns:
        likely = likely_column(name, columns)
        if likely is not None and likely not in {x for _, x in out}:
            out.append((name, likely))
    return out


def missing_hint(missing: list[str], columns: list[str]) -> str:
    """What to add to "missing required column(s)": the file's columns that
    look like them, or ""."""
    seen = [(name, likely) for name, likely in suspect_columns(tuple(columns))
            if likely in missing]
    if not seen:
        return ""
    said = ", ".join(f"`{name}` looks like `{likely}`" for name, likely in seen)
    return f" ({said}; a project configuration's [columns] can rename it)"


def names_as_read(names: list[str], mapping: tuple[tuple[str, str], ...]) -> list[str]:
    """A file's column `names` as the loader reads them (`renamed`): what a
    look at part of the file (a footer, one column) must go by too."""
    wanted = dict(mapping)
    return [wanted.get(name, name) for name in names]


def renamed(table: pa.Table, mapping: tuple[tuple[str, str], ...], path) -> tuple[pa.Table,
                                                                                 list[str]]:
    """`table` with its columns renamed as `mapping` says (name in the file
    -> name in event-log-v1; a name the file lacks is passed over), and a
    note per column renamed, for the provenance. LogFileError when a new
    name is one the file already holds."""
    wanted = dict(mapping)
    names = table.column_names
    if not wanted or not set(wanted) & set(names):
        return table, []
    notes = []
    out = names_as_read(names, mapping)
    for name, new in zip(names, out):
        if new != name:
            if new in names and wanted.get(new, new) == new:
                raise LogFileError(path, f"column `{name}` is to be read as `{new}` "
                                         f"(columns in the project configuration), which the "
                                         f"file also holds")
            notes.append(f"column `{name}` read as `{new}` (columns in the project "
                         "configuration)")
    return table.rename_columns(out), notes
