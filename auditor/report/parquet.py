"""The findings and quarantine tables as Parquet, with provenance in the
file metadata. Same inputs give the same bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from auditor.atomic import atomic_open
from auditor.findings import SITE_FIELD, split_sites, stored_schema
from auditor.report.rollups import ROLLUPS_SCHEMA, rollups_meta, rollups_of

QUARANTINE_SCHEMA = pa.schema([
    ("source_file", pa.string()), ("source_line", pa.int64()), ("table_id", pa.string()),
    ("seq", pa.int64()), ("event", pa.string()), ("reason", pa.string()), ("raw", pa.string()),
])


def write_table(frame: pd.DataFrame, schema: pa.Schema, target: Path, meta: dict,
                extra: dict[str, str] | None = None) -> None:
    table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
    table = table.replace_schema_metadata(
        {"auditor": json.dumps(meta, sort_keys=True, ensure_ascii=False), **(extra or {})})
    with atomic_open(target) as sink:  # (opened here: Arrow cannot open a name not UTF-8)
        pq.write_table(table, sink, compression="zstd", write_statistics=True)


def write_findings(findings: pd.DataFrame, target: Path, meta: dict) -> None:
    write_table(findings, stored_schema(findings), target, meta)


def quarantine_table(quarantine: pd.DataFrame) -> tuple[pd.DataFrame, pa.Schema]:
    """The quarantined rows as written: `table_id` as recorded, and a `site`
    column (before it) when a row has a site (`auditor.logs.site`)."""
    quarantine = split_sites(quarantine)
    if "site" not in quarantine:
        return quarantine, QUARANTINE_SCHEMA
    quarantine = quarantine.copy()
    quarantine["site"] = quarantine["site"].astype(object).where(quarantine["site"].notna(),
                                                                 None)
    return quarantine, QUARANTINE_SCHEMA.insert(
        QUARANTINE_SCHEMA.get_field_index("table_id"), SITE_FIELD)


def write_quarantine(quarantine: pd.DataFrame, target: Path, meta: dict) -> None:
    write_table(*quarantine_table(quarantine), target, meta)


def read_metadata(path: Path) -> dict:
    with open(path, "rb") as source:
        md = pq.read_schema(source).metadata or {}
    return json.loads(md.get(b"auditor", b"{}"))


def write_rollups(result, target: Path, meta: dict) -> None:
    """rollups.parquet: the findings and valid rolls per site, table, gaming
    day and staff member (`auditor.report.rollups`)."""
    write_table(rollups_of(result), ROLLUPS_SCHEMA, target, meta,
                {"auditor_rollups": json.dumps(rollups_meta(result), sort_keys=True)})


def write(result, meta: dict, out: Path, dice_alpha: float | None = None) -> list[str]:
    """The `parquet` format: findings.parquet, quarantine.parquet,
    rollups.parquet, and the dice statistics (`auditor.report.dice_report`)."""
    from auditor.report.dice_report import write_parquet as write_dice

    write_findings(result.findings, out / "findings.parquet", meta)
    write_quarantine(result.logs.quarantine, out / "quarantine.parquet", meta)
    write_rollups(result, out / "rollups.parquet", meta)
    return [str(out / "findings.parquet"), str(out / "quarantine.parquet"),
            str(out / "rollups.parquet"), *write_dice(result, meta, out, dice_alpha)]
