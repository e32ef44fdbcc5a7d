"""The listed findings' details rendered where their tables were audited
(`auditor.report.html.PageCollector`): the page is the one the main process
renders from the rows around each finding, byte for byte, whichever engine
audited which files; the findings whose details need the whole audit (next
to unreadable rows, or on a row that was quarantined) are rendered by the
page, and the page's own attributes (site, staff on duty) stay the page's."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from builder import append_broken_rows, run_cli

from auditor.audit.collect import taken_by
from auditor.findings import joined_sites
from auditor.generate import INJECTABLE, generate, write_log
from auditor.report import html
from auditor.report.html_events import listed_findings
from auditor.rules.ruleset import load_ruleset
from auditor.run import AuditJob, pieces, run_audit, stream

RULESET = "nz-table-games"
INJECT = ["noroll.missing", "settle.wrong_outcome", "dice.set_size", "call.wrong_total"]


def _exports(tmp_path: Path) -> Path:
    """Two casinos' exports: two tables at each, one CSV file a table, each
    with the log's own extra columns (in opposite orders at the two sites),
    critical and major findings planted; at casino-b a row in the middle of
    its first table unreadable (so findings beside it carry a caveat) and
    rows no table can hold."""
    root = tmp_path / "exports"
    for k, (site, extras) in enumerate((("casino-a", ("zeta", "alpha")),
                                        ("casino-b", ("alpha", "zeta")))):
        (root / site).mkdir(parents=True)
        for first in (1, 2):
            table = generate(1, 40, 11 + 2 * k + first, INJECT, first_table=first).table
            for name in extras:
                table = table.append_column(name, pa.array(
                    [f"{name}-{i % 3}" if i % 2 else "" for i in range(table.num_rows)],
                    pa.string()))
            if site == "casino-b" and first == 1:
                events = table.column("event").to_pylist()
                events[len(events) // 2] = "no_such_event"
                table = table.set_column(table.schema.get_field_index("event"), "event",
                                         pa.array(events, pa.string()))
            path = root / site / f"t{first}.csv"
            write_log(table, path)
            if site == "casino-b" and first == 2:
                append_broken_rows(path)
    return root


def _job(root: Path, collector, **engine) -> AuditJob:
    return AuditJob.of([root], load_ruleset(RULESET), site_from_path=True,
                       collector=collector, **engine)


def _engines() -> list[dict]:
    engines = [{"jobs": 1}, {"jobs": 2}]
    if importlib.util.find_spec("distributed") is not None:
        engines.append({"jobs": 2, "engine": "dask"})  # (a local cluster)
    return engines


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> Path:
    return _exports(tmp_path_factory.mktemp("apart"))


def test_details_rendered_where_audited_make_the_page_the_main_process_makes(
        exports, monkeypatch):
    """Against the page rendered wholly by the main process (the rows
    around each finding collected, nothing rendered): audited at once, a
    batch a file under --jobs 1 and 2, and under dask, with the details of
    the findings sure to be listed rendered in the engines, the page is the
    same bytes; the rendered ones are every critical finding and the first
    of each table and code that stands on a row of its own with no caveat,
    and their rows are not carried back."""
    ruleset = load_ruleset(RULESET)
    whole = run_audit(_job(exports, html.COLLECTOR))
    assert taken_by(whole.logs.digest, "html").details == {}
    meta = {"test": "details apart"}
    page = html.render_html(whole, meta)
    findings = whole.findings
    caveated = findings["caveat"].notna() & (findings["caveat"].astype(str) != "")
    assert caveated.any() and (findings["severity"] == "critical").any()
    assert 'data-site="casino-a"' in page and 'data-site="casino-b"' in page
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    caveated_ids = set(findings.loc[caveated, "finding_id"])
    quarantined = set(zip(whole.logs.quarantine["source_file"].astype(str),
                          whole.logs.quarantine["source_line"].astype(int)))
    beside = {fid for fid, f, line in zip(findings["finding_id"], findings["source_file"],
                                          findings["source_line"])
              if pd.isna(line) or (str(f), int(line)) in quarantined}
    assert beside  # (findings on the rows no table could hold)
    sure = set(listed_findings(joined_sites(findings), 1)["finding_id"])
    critical = set(findings.loc[findings["severity"] == "critical", "finding_id"])
    for engine in [{}, *_engines()]:
        result = run_audit(_job(exports, html.page_collector(ruleset), **engine))
        assert result.findings.equals(findings), engine
        digest = taken_by(result.logs.digest, "html")
        rendered = set(digest.details)
        assert critical - caveated_ids - beside <= rendered, engine
        assert rendered <= sure - caveated_ids - beside, engine
        rows = {(str(f), int(line)) for fid, f, line in zip(
            findings["finding_id"], findings["source_file"], findings["source_line"])
            if fid in rendered}
        assert not rows & set(digest.windows), engine  # (not carried back)
        assert html.render_html(result, meta) == page, engine


@pytest.mark.parametrize("jobs", [2, 3])
def test_the_pieces_of_one_file_render_the_details_the_page_would(tmp_path, monkeypatch, jobs):
    """One Parquet file of five tables cut into pieces for the workers (a
    row to quarantine, a column of the log's own holding markup): each
    piece renders its findings' details, and the page is the one the main
    process renders from one load."""
    table = generate(5, 60, seed=41, inject=list(INJECTABLE)).table
    ids = table.column("table_id").to_pylist()
    ids[7] = None
    table = table.set_column(0, "table_id", pa.array(ids, pa.string()))
    table = table.append_column("note", pa.array(
        [f"<b>note {i}</b>" if i % 5 == 0 else None for i in range(table.num_rows)]))
    path = tmp_path / "night.parquet"
    pq.write_table(table, path, row_group_size=500)
    ruleset = load_ruleset(RULESET)
    page = html.render_html(run_audit(AuditJob.of([path], ruleset, collector=html.COLLECTOR)),
                            {})
    assert "&lt;b&gt;note" in page and "<b>note" not in page
    monkeypatch.setattr(pieces, "PIECE_ROWS", 400)
    monkeypatch.setattr(pieces, "PIECE_BUDGET", 10 ** 9)
    assert len(pieces.split([path], None, jobs)) == jobs
    result = run_audit(AuditJob.of([path], ruleset, jobs=jobs,
                                   collector=html.page_collector(ruleset)))
    assert taken_by(result.logs.digest, "html").details
    assert html.render_html(result, {}) == page


def test_a_window_shows_the_logs_own_columns_by_name(exports):
    """The rows around a finding show the log's own extra columns after the
    format's, by name, whichever order its file wrote them in: the same at
    both casinos, whose files wrote them in opposite orders."""
    page = html.render_html(run_audit(_job(exports, html.page_collector(
        load_ruleset(RULESET)))), {})
    heads = [line for line in page.splitlines() if line.lstrip().startswith("line seq ts")
             or line.lstrip().startswith('<pre class="ctx">  line seq ts')]
    assert heads
    for head in heads:
        assert head.index(" alpha") < head.index(" zeta"), head


def test_the_command_writes_the_same_page_under_every_engine(exports, tmp_path):
    """`auditor check` (the collector that renders details in the engines,
    the gaming days and staff on duty worked out after): report.html is the
    same bytes under --jobs 1, --jobs 2 and dask."""
    pages = []
    for k, engine in enumerate(_engines()):
        out = tmp_path / f"out{k}"
        args = ["check", str(exports), "--ruleset", RULESET, "--site-from-path",
                "--format", "html", "--out", str(out), "--jobs", str(engine["jobs"])]
        if engine.get("engine"):
            args += ["--engine", engine["engine"]]
        result = run_cli(*args)
        assert result.exit_code == 1, result.output
        pages.append((out / "report.html").read_bytes())
    assert pages[0].count(b'<details class="finding"') > 10
    assert all(p == pages[0] for p in pages[1:])


def test_details_are_rendered_apart_only_where_workers_audit():
    """`auditor check` renders the details in the engines only when the
    audit runs in workers (--jobs over 1, or dask): in one process that
    would only add the windows' round trip to the same work."""
    from auditor.app.check import collector_for

    ruleset = load_ruleset(RULESET)
    apart = dict(collector_for({"html"}, ruleset, apart=True).named)["html"]
    at_home = dict(collector_for({"html"}, ruleset, apart=False).named)["html"]
    assert isinstance(apart, html.PageCollector)
    assert dict(apart.summaries) == {r.id: r.summary or "" for r in ruleset.rules}
    assert not isinstance(at_home, html.PageCollector)
    assert "html" not in dict(collector_for({"parquet"}, ruleset, apart=True).named)
