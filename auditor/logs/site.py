"""Sites: which casino a table belongs to, when two casinos both call a
table `T01`. A site comes from the folder a file lies in (`--site-from-path`:
the first folder below the path given) or from an optional `site` column of
the log (a cell of it wins over the folder; an empty cell takes the
folder's).

Tables are kept apart by (site, table_id) without the replay or the checks
knowing: the key they see in `table_id` is `site` + `SITE_SEPARATOR` +
`table_id`, and the findings and quarantine tables are given back
`table_id` as recorded plus a `site` column (`auditor.findings.split_sites`).
Without a site, nothing changes: no `site` column, the same bytes as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from auditor.errors import LogFileError
from auditor.findings import SITE_SEPARATOR
from auditor.logs.discover import real_paths

SITE_COLUMN = "site"


def path_sites(paths: list[str | Path], files: list[Path]) -> dict[str, str]:
    """Each file's site (by `str(file)`): the first folder below the path
    given that holds it. A file with no folder below its path has none to
    give: LogFileError, saying what `--site-from-path` needs."""
    roots = [Path(p).resolve() for p in paths]
    sites: dict[str, str] = {}
    for f, real in zip(files, real_paths(files)):
        where = Path(real)
        site = None
        for root in roots:
            if root == where or root not in where.parents:
                continue
            parts = where.relative_to(root).parts
            if len(parts) >= 2:
                site = parts[0]
                break
        if site is None:
            raise LogFileError(f, "--site-from-path takes the first folder below each "
                                  "path given as the file's site, and this file is in "
                                  "none: give the folder that holds one folder per site")
        sites[str(f)] = site
    return sites


def with_site(events: pa.Table, quarantine: pd.DataFrame, site: str | None
              ) -> tuple[pa.Table, pd.DataFrame]:
    """One file's events and quarantined rows keyed by (site, table): the
    row's `site` cell, else `site` (the folder's). Unchanged when neither
    is known."""
    has_column = SITE_COLUMN in events.column_names
    tid = events.column("table_id")
    held = _holds_separator(tid) or (
        bool(len(quarantine)) and _holds_separator(quarantine["table_id"]))
    if site is None and not has_column and not held and not _quarantined_sites(quarantine):
        return events, quarantine
    tid = pc.cast(tid, pa.string()) if pa.types.is_dictionary(tid.type) else tid
    site = _unkeyed(site)
    if has_column:
        cells = pc.utf8_trim_whitespace(pc.cast(events.column(SITE_COLUMN), pa.string()))
        cells = pc.if_else(pc.equal(cells, ""), pa.scalar(None, pa.string()), cells)
        cells = pc.replace_substring(cells, SITE_SEPARATOR, _SHOWN_SEPARATOR)
        sites = pc.fill_null(cells, site) if site is not None else cells
        events = events.drop_columns([SITE_COLUMN])
    else:
        sites = pa.chunked_array([pa.array([site] * len(tid), pa.string())]) \
            if len(tid) else pa.chunked_array([], pa.string())
    # A recorded id holding the separator, of no site: keyed with an empty
    # site, so it is never read back as one (`split_sites`).
    sites = pc.if_else(pc.and_(pc.is_null(sites),
                               pc.fill_null(pc.match_substring(tid, SITE_SEPARATOR), False)),
                       pa.scalar("", pa.string()), sites)
    joined = pc.binary_join_element_wise(sites, tid, SITE_SEPARATOR)
    keyed = pc.if_else(pc.is_null(sites), tid, joined)
    at = events.column_names.index("table_id")
    events = events.set_column(at, "table_id", pc.dictionary_encode(keyed))
    if len(quarantine):
        quarantine = quarantine.copy()
        row_sites = [_unkeyed(_row_site(raw)) or site for raw in quarantine["raw"]]
        if any(row_sites):
            quarantine["site"] = pd.Series(row_sites, dtype=object, index=quarantine.index)
        quarantine["table_id"] = [
            t if t is None or pd.isna(t) or (s is None and SITE_SEPARATOR not in str(t))
            else f"{s or ''}{SITE_SEPARATOR}{t}"
            for s, t in zip(row_sites, quarantine["table_id"])]
        quarantine["table_id"] = quarantine["table_id"].astype(object)
    return events, quarantine


#: How a separator inside a site is kept (a site is never cut in two).
_SHOWN_SEPARATOR = "\\x1f"


def _unkeyed(site: str | None) -> str | None:
    return None if site is None else site.replace(SITE_SEPARATOR, _SHOWN_SEPARATOR)


def site_prefix(site: str) -> str:
    """What a table id of `site` is keyed with, as `with_site` keys it: the
    site (a separator in it shown, never cut), then the separator."""
    return _unkeyed(site) + SITE_SEPARATOR


def _holds_separator(values) -> bool:
    """Whether a recorded table id holds the separator (a control character
    the format does not forbid)."""
    if isinstance(values, pd.Series):
        return bool(values.map(lambda t: isinstance(t, str) and SITE_SEPARATOR in t).any())
    chunks = values.chunks if isinstance(values, pa.ChunkedArray) else [values]
    for chunk in chunks:  # a dictionary's values only, not every row
        text = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
        if not pa.types.is_string(text.type):
            text = text.cast(pa.string())
        if pc.any(pc.match_substring(text, SITE_SEPARATOR)).as_py():
            return True
    return False


def _quarantined_sites(quarantine: pd.DataFrame) -> bool:
    """Whether a quarantined row names a site (a file all of whose rows were
    set aside still keeps its sites)."""
    return bool(len(quarantine)) and any(_row_site(raw) for raw in quarantine["raw"])


def _row_site(raw) -> str | None:
    if not isinstance(raw, str) or '"site"' not in raw:
        return None
    try:
        cell = json.loads(raw).get(SITE_COLUMN)
    except (ValueError, AttributeError):
        return None
    cell = cell.strip() if isinstance(cell, str) else None
    return cell or None


def shown_table(key: str) -> str:
    """A table key as a person reads it: `T01`, or `T01 (site casino-a)`."""
    site, sep, table = str(key).partition(SITE_SEPARATOR)
    return f"{table} (site {site})" if sep else str(key)
