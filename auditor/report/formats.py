"""The report formats `auditor check --format` can write, declared in one
place: FORMAT_MODULES, one line per format (the `--format` choices come from
it). Adding a format is its module, its line here and its test.

Each format is a module with `write(result, meta, out) -> list[str]`: it
writes its files atomically into the folder `out` (or, for a stream format,
to standard output) and returns what it wrote. `meta` is the provenance
(`auditor.report.provenance`) every format must carry. The findings, each
with its status (the columns triage put on `result.findings`), come from
`auditor.report.records`.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from auditor.errors import OutputError
from auditor.report.shared import sharing

#: format name -> module implementing it
FORMAT_MODULES: dict[str, str] = {
    "parquet": "auditor.report.parquet",
    "html": "auditor.report.html",
    "json": "auditor.report.json_format",
    "junit": "auditor.report.junit",
    "sarif": "auditor.report.sarif",
    "github": "auditor.report.github",
    "csv": "auditor.report.csv_format",
}
FORMATS: tuple[str, ...] = tuple(FORMAT_MODULES)


def check_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: --out names a file, not a folder")


def write_reports(result, meta: dict, out: Path, formats) -> list[str]:
    """Write every requested format, in the order given, once each."""
    check_out_dir(out)
    written: list[str] = []
    with sharing():  # the finding records, say, derived once for every format
        for name in dict.fromkeys(formats):
            module = importlib.import_module(FORMAT_MODULES[name])
            written += module.write(result, meta, out)
    return written
