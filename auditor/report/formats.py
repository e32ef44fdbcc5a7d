"""The report formats `auditor check --format` can write, declared in one
place: FORMAT_MODULES, one line per format (the `--format` choices come from
it). Adding a format is its module, its line here and its test.

Each format is a module with `write(result, meta, out) -> list[str]`: it
writes its files atomically into the folder `out` (or, for a stream format,
to standard output) and returns what it wrote. `meta` is the provenance
(`auditor.report.provenance`) every format must carry. The findings, each
with its status (the columns triage put on `result.findings`), come from
`auditor.report.records`.

A format that can go to standard output (`--format FMT:-`) also has
`text(result, meta) -> str`: its main text (for `json`, the findings as
JSON lines; summary.json is a file only). STREAMABLE lists them. Options
of one format (`--sarif-max-results`, the text format's colour) reach its
`write` and `text` as keyword arguments.
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
    "text": "auditor.report.text",
}
FORMATS: tuple[str, ...] = tuple(FORMAT_MODULES)
#: formats whose text can go to standard output (`FMT:-`)
STREAMABLE: tuple[str, ...] = ("text", "json", "junit", "sarif", "github", "csv")
#: formats whose `write` puts their text on standard output and no file in --out
WRITES_NO_FILE: tuple[str, ...] = ("text", "github")


def check_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: --out names a file, not a folder")


def write_reports(result, meta: dict, out: Path, formats, options=None) -> list[str]:
    """Write every requested format, in the order given, once each."""
    return write_and_render(result, meta, out, formats, (), options)[0]


def write_and_render(result, meta: dict, out: Path, formats, streams=(),
                     options=None) -> tuple[list[str], list[str]]:
    """Write every format of `formats` (in the order given, once each) and
    render the text of every format of `streams` (STREAMABLE) for standard
    output: (files written, texts). `options` maps a format to its keyword
    arguments."""
    check_out_dir(out)
    options = options or {}
    written: list[str] = []
    texts: list[str] = []
    with sharing():  # the finding records, say, derived once for every format
        for name in dict.fromkeys(formats):
            module = importlib.import_module(FORMAT_MODULES[name])
            written += module.write(result, meta, out, **options.get(name, {}))
        for name in dict.fromkeys(streams):
            module = importlib.import_module(FORMAT_MODULES[name])
            texts.append(module.text(result, meta, **options.get(name, {})))
    return written, texts
