"""The report formats `auditor check --format` can write, declared in one
place: REPORT_FORMATS, one `ReportFormat` per format (its name, module,
files, whether it can go to standard output, its options); the `--format`
choices, the files a report folder may hold (`auditor.report.manifest`) and
the manifest's options all come from it. Adding a format is its module, its
line here and its test.

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
from dataclasses import dataclass
from pathlib import Path

from auditor.audit.collect import Collectors
from auditor.errors import OutputError
from auditor.report.apart import apart_formats, write_apart
from auditor.report.dice_tally import COLLECTOR as DICE_COLLECTOR
from auditor.report.shared import sharing


@dataclass(frozen=True)
class ReportFormat:
    """One report format, all it is: its `--format` name, the module that
    writes it, the files it writes into --out, whether its text can go to
    standard output, and the options it takes (recorded in the manifest)."""

    name: str
    #: the module implementing it (`write`, and `text` when it streams)
    module: str
    #: the files it writes into --out (none: its `write` prints its text)
    files: tuple[str, ...]
    #: its text can go to standard output (`--format FMT:-`)
    streamable: bool
    #: its keyword options: keyword -> the `auditor check` option (the
    #: request's field) that sets it; recorded in the manifest, so that
    #: `auditor verify` renders it again as it was
    options: tuple[tuple[str, str], ...] = ()

    @property
    def writes_files(self) -> bool:
        """Whether it writes files into --out (and so into the manifest);
        one that does not (text, github) always prints its text."""
        return bool(self.files)

    def load(self):
        return importlib.import_module(self.module)


#: The formats that show the dice statistics take `--dice-alpha` (unset: the
#: ruleset's level; an option left unset is not passed nor recorded).
DICE_OPTION = (("dice_alpha", "dice_alpha"),)

#: Every format, in the order `--format` lists them.
REPORT_FORMATS: dict[str, ReportFormat] = {f.name: f for f in (
    ReportFormat("parquet", "auditor.report.parquet",
                 ("findings.parquet", "quarantine.parquet", "rollups.parquet", "dice_stats.parquet",
                  "dice_totals.parquet"), streamable=False, options=DICE_OPTION),
    ReportFormat("html", "auditor.report.html", ("report.html",), streamable=False,
                 options=DICE_OPTION),
    ReportFormat("json", "auditor.report.json_format", ("findings.jsonl", "summary.json"),
                 streamable=True, options=DICE_OPTION),
    ReportFormat("junit", "auditor.report.junit", ("junit.xml",), streamable=True),
    ReportFormat("sarif", "auditor.report.sarif", ("findings.sarif",), streamable=True,
                 options=(("max_results", "sarif_max_results"),)),
    ReportFormat("github", "auditor.report.github", (), streamable=True),
    ReportFormat("csv", "auditor.report.csv_format", ("findings.csv",), streamable=True),
    ReportFormat("text", "auditor.report.text", (), streamable=True,
                 options=(("color", "color"), *DICE_OPTION)),
)}
#: format name -> module implementing it
FORMAT_MODULES: dict[str, str] = {f.name: f.module for f in REPORT_FORMATS.values()}
FORMATS: tuple[str, ...] = tuple(REPORT_FORMATS)
#: formats whose text can go to standard output (`FMT:-`)
STREAMABLE: tuple[str, ...] = tuple(f.name for f in REPORT_FORMATS.values() if f.streamable)
#: formats whose `write` puts their text on standard output and no file in --out
WRITES_NO_FILE: tuple[str, ...] = tuple(f.name for f in REPORT_FORMATS.values()
                                        if not f.writes_files)
#: `FMT:-`: the format's text on standard output
STDOUT = "-"


def parse_format(spec: str) -> tuple[str, bool]:
    """`FMT` or `FMT:-` -> (format name, whether its text goes to standard
    output); ValueError saying why for anything else. `text` and `github`
    always go to standard output (they write no file)."""
    name, colon, target = str(spec).partition(":")
    if name not in REPORT_FORMATS or (colon and target != STDOUT):
        raise ValueError(f"{spec!r} is not a format ({', '.join(FORMATS)}), optionally "
                         f"followed by ':-' for standard output")
    if target and not REPORT_FORMATS[name].streamable:
        raise ValueError(f"{name} cannot go to standard output (only "
                         f"{', '.join(STREAMABLE)} can)")
    return name, bool(target) or not REPORT_FORMATS[name].writes_files


def format_options(values) -> dict[str, dict]:
    """Each format's keyword options, read from `values` (an object with
    the `auditor check` options as attributes, e.g. `CheckRequest`)."""
    return {f.name: {kw: getattr(values, field) for kw, field in f.options
                     if getattr(values, field, None) is not None}
            for f in REPORT_FORMATS.values() if f.options}


def check_out_dir(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out}: --out names a file, not a folder")


def write_reports(result, meta: dict, out: Path, formats, options=None,
                  workers: int = 1) -> list[str]:
    """Write every requested format, in the order given, once each."""
    return write_and_render(result, meta, out, formats, (), options, workers)[0]


def write_and_render(result, meta: dict, out: Path, formats, streams=(),
                     options=None, workers: int = 1) -> tuple[list[str], list[str]]:
    """Write every format of `formats` (in the order given, once each) and
    render the text of every format of `streams` (STREAMABLE) for standard
    output: (files written, texts). `options` maps a format to its keyword
    arguments. `workers` > 1: the formats making files may be written side
    by side in that many processes (`auditor.report.apart`), the same bytes."""
    check_out_dir(out)
    options = options or {}
    written: list[str] = []
    texts: list[str] = []
    formats = tuple(dict.fromkeys(formats))
    apart = apart_formats(result, [f for f in formats if REPORT_FORMATS[f].writes_files],
                          workers)
    with sharing():  # the finding records, say, derived once for every format
        made = write_apart(result, meta, out, apart, options, workers) if apart else {}
        for name in formats:
            if name in made:
                written += made[name]
                continue
            module = REPORT_FORMATS[name].load()
            written += module.write(result, meta, out, **options.get(name, {}))
        for name in dict.fromkeys(streams):
            module = REPORT_FORMATS[name].load()
            texts.append(module.text(result, meta, **options.get(name, {})))
    return written, texts


def collector_for(formats, ruleset=None, apart: bool = False) -> Collectors:
    """What the engine keeps of each batch's events for these reports: the
    dice tally always (the terminal names flagged dice whatever the
    formats), the HTML page's rows when it is written, and (`apart`: the
    audit runs in workers) the details of the findings it will list,
    rendered there with `ruleset`'s words (in one process that would only
    add work). The page's modules (and jinja2, some 40 ms of every run's
    start) are loaded only then."""
    if "html" not in formats:
        return Collectors(dice=DICE_COLLECTOR)
    from auditor.report import html  # (the page's modules: only for the page)
    return html.page_collector(ruleset) if apart and ruleset is not None else html.COLLECTOR
