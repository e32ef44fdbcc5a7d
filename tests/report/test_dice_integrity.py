"""Dice integrity (docs/dice-integrity.md): the faces each die showed, tested
against a fair die; flags are signals, never findings."""

from __future__ import annotations

import gc
import importlib.util
import json
import math
import random
import tempfile
import threading
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from builder import audit, cocked, dispute, lawful_table, no_roll, ruling
from click.testing import CliRunner

from auditor.audit.core import replay_state
from auditor.cli import main
from auditor.generate import generate, write_log
from auditor.logs.load import load_logs
from auditor.report.dice_report import stats_of
from auditor.report.dice_stats import (
    DiceLevel,
    chi2_sf_5,
    chi2_sf_10,
    dice_stats,
    holm,
)
from auditor.report.dice_tally import Spilled, custody_of, tally
from auditor.rules.ruleset import load_ruleset

# --- the arithmetic ------------------------------------------------------------------

@pytest.mark.parametrize(("x", "sf"), [(11.0705, 0.05), (15.0863, 0.01), (20.5150, 0.001),
                                        (4.35146, 0.5)])
def test_chi_square_5_survival_matches_the_tables(x, sf):
    assert chi2_sf_5(x) == pytest.approx(sf, rel=1e-4)


@pytest.mark.parametrize(("x", "sf"), [(18.3070, 0.05), (23.2093, 0.01), (29.5883, 0.001),
                                        (9.34182, 0.5)])
def test_chi_square_10_survival_matches_the_tables(x, sf):
    assert chi2_sf_10(x) == pytest.approx(sf, rel=1e-4)


def test_chi_square_10_survival_is_the_series_to_the_last_bit():
    """The closed form, its terms written out, gives the very floats of
    the series summed term by term (the reports' p-values unchanged)."""
    rng = random.Random(10)
    for x in [0.0, -1.0, 1e-300, 1e-9, 0.5, 2.0, 700.0, 1500.0,
              *(rng.uniform(0, 80) for _ in range(20_000))]:
        h = x / 2
        series = 1.0 if x <= 0 else \
            min(1.0, math.exp(-h) * sum(h ** k / math.factorial(k) for k in range(5)))
        assert chi2_sf_10(x) == series, x


def test_holm_steps_down_and_keeps_untested_apart():
    out = holm([0.01, 0.04, float("nan"), 0.03])
    assert out[0] == pytest.approx(0.03)
    assert out[3] == pytest.approx(0.06)
    assert out[1] == pytest.approx(0.06)  # monotone: never below the one before
    assert out[2] != out[2]


# --- what is counted -----------------------------------------------------------------

def _tally_of(builder, tmp_path):
    path = builder.write_csv(tmp_path / "log.csv")
    logs = load_logs([path])
    return tally(logs.events, replay_state(logs.events, load_ruleset("nz-table-games")))


def _faces(t, serial):
    row = t.dice[t.dice["serial"] == serial].iloc[0]
    return [int(row[f"face_{k}"]) for k in range(1, 7)]


def test_a_cocked_die_counts_the_face_opposite_the_resting_one(tmp_path):
    b = lawful_table()
    b.roll(2, 3, 4)
    cocked(b, "A2", 3)  # resting on 3: counts 4; the roll already says 4
    b.roll(2, 2, 6)
    cocked(b, "A1", 6)  # resting on 6: A1 counts 1, not 2
    t = _tally_of(b, tmp_path)
    assert _faces(t, "A1") == [1, 0, 1, 0, 0, 0]
    assert _faces(t, "A2") == [0, 0, 0, 1, 0, 1]


def test_a_ruling_fixes_the_disputed_die_and_a_void_ruling_drops_the_roll(tmp_path):
    b = lawful_table()
    b.roll(2, 3, 4)
    dispute(b, "A2")
    ruling(b, "game_supervisor", face=6)  # A2 counts 6, not 4
    b.roll(2, 5, 5)
    dispute(b, "A1")
    ruling(b, "game_supervisor", reason="void")
    t = _tally_of(b, tmp_path)
    assert _faces(t, "A1") == [0, 0, 1, 0, 0, 0]
    assert _faces(t, "A2") == [0, 0, 0, 0, 0, 1]


def test_a_voided_roll_is_not_counted_and_its_valid_twin_is(tmp_path):
    b = lawful_table()
    b.roll(2, 6, 6)
    no_roll(b, "discretion")
    b.roll(2, 1, 2)
    t = _tally_of(b, tmp_path)
    assert _faces(t, "A1") == [1, 0, 0, 0, 0, 0]
    assert _faces(t, "A2") == [0, 1, 0, 0, 0, 0]
    assert t.unread == 0


def test_custody_lists_receipt_and_inspections_by_whom(tmp_path):
    b = lawful_table()
    b.roll(2, 3, 4)
    t = _tally_of(b, tmp_path)
    a1 = custody_of(t.custody, None, "A1")
    assert list(a1["event"])[:4] == ["dice_received", "dice_inspected", "dice_inspected",
                                     "dice_inspected"]
    assert list(a1["actor_role"])[1:4] == ["dealer", "game_supervisor", "pit_manager"]


# --- flags ---------------------------------------------------------------------------

def _night(seed: int, rolls: int, lean: float | None = None):
    inject = ["dice.face_bias"] if lean is not None else []
    return generate(1, rolls, seed, inject, die_lean=lean if lean is not None else 0.6)


def _stats(log, tmp_path, level=None):
    path = tmp_path / "night.parquet"
    write_log(log.table, path)
    logs = load_logs([path])
    return dice_stats(tally(logs.events, replay_state(logs.events,
                                                      load_ruleset("nz-table-games"))),
                      level if level is not None else DiceLevel())


def test_fair_nights_flag_no_die_at_the_level(tmp_path):
    """A fair night's chance of any flag is at most the level (0.01): over
    eight seeds none may be flagged (one would already be a 1-in-13 event)."""
    flagged = [seed for seed in range(8)
               if _stats(_night(seed, 600), tmp_path).dice["flagged"].any()]
    assert flagged == []


def test_a_leaning_die_in_a_2000_roll_night_is_flagged_and_no_other(tmp_path):
    for seed in (1, 2, 3):
        stats = _stats(_night(seed, 2000, lean=0.6), tmp_path)
        assert list(stats.flagged["serial"]) == ["A1"], seed


def test_too_few_rolls_is_not_a_pass(tmp_path):
    stats = _stats(_night(0, 2000, lean=0.6), tmp_path, DiceLevel(min_rolls=10_000))
    assert not stats.dice["flagged"].any()
    assert set(stats.dice["status"]) == {"too few rolls"}
    assert stats.dice["p_value"].isna().all()


# --- the reports ---------------------------------------------------------------------

def _check(tmp_path, log, *extra, out_name="out"):
    path = tmp_path / "night.parquet"
    write_log(log.table, path)
    out = tmp_path / out_name
    result = CliRunner().invoke(main, ["check", str(path), "-r", "nz-table-games", "--out",
                                       str(out), "--format", "parquet", "--format", "json",
                                       "--format", "html", *extra])
    return result, out


def test_the_dice_are_tested_once_for_the_files_and_the_terminal(tmp_path, monkeypatch):
    """The statistics behind dice_stats.parquet, summary.json, the page and
    the terminal's DICE line are one computation (it was two: the terminal
    tested every die again)."""
    from auditor.report import dice_report

    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return dice_stats(*args, **kwargs)

    monkeypatch.setattr(dice_report, "dice_stats", counted)
    result, _ = _check(tmp_path, _night(2, 2000, lean=0.6))
    assert "DICE: die A1 flagged for inspection" in result.output
    assert len(calls) == 1


def test_a_flag_is_no_finding_and_keeps_the_exit_code(tmp_path):
    result, out = _check(tmp_path, _night(2, 2000, lean=0.6))
    assert result.exit_code == 0, result.output
    assert "DICE: die A1 flagged for inspection" in result.output
    assert pq.read_table(out / "findings.parquet").num_rows == 0
    dice = pq.read_table(out / "dice_stats.parquet").to_pandas()
    assert list(dice.columns[:12]) == ["site", "serial", "rolls", "face_1", "face_2", "face_3",
                                       "face_4", "face_5", "face_6", "statistic", "p_value",
                                       "p_adjusted"]
    assert list(dice[dice["flagged"]]["serial"]) == ["A1"]
    summary = json.loads((out / "summary.json").read_text())
    assert [d["serial"] for d in summary["dice"]["flagged"]] == ["A1"]
    assert summary["dice"]["alpha"] == 0.01
    assert summary["verdict"]["exit_code"] == 0
    page = (out / "report.html").read_text()
    assert "Die <code>A1</code>" in page and "dice_received" in page
    manifest = json.loads((out / "manifest.json").read_text())
    assert {"dice_stats.parquet", "dice_totals.parquet"} <= {f["name"] for f in
                                                             manifest["files"]}
    verified = CliRunner().invoke(main, ["verify", str(out)])
    assert verified.exit_code == 0, verified.output


def test_its_fair_twin_is_quiet_and_the_bytes_are_the_same_twice(tmp_path):
    result, out = _check(tmp_path, _night(2, 2000))
    assert result.exit_code == 0 and "DICE:" not in result.output
    first = (out / "dice_stats.parquet").read_bytes()
    _, out2 = _check(tmp_path, _night(2, 2000), out_name="again")
    assert (out2 / "dice_stats.parquet").read_bytes() == first
    assert (out2 / "dice_totals.parquet").read_bytes() == (out / "dice_totals.parquet").read_bytes()


def test_dice_alpha_option_sets_the_level_and_verify_renders_it_again(tmp_path):
    _result, out = _check(tmp_path, _night(2, 2000), "--dice-alpha", "0.999")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dice"]["alpha"] == 0.999
    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 0


def test_the_library_audit_counts_from_the_events(tmp_path):
    log = _night(3, 2000, lean=0.6)
    path = tmp_path / "n.parquet"
    write_log(log.table, path)
    assert list(stats_of(audit([path], "nz-table-games")).flagged["serial"]) == ["A1"]


def test_a_ruleset_sets_the_level_without_changing_shipped_hashes(tmp_path):
    shipped = load_ruleset("nz-table-games")
    assert "dice_alpha" not in shipped.parameters
    own = tmp_path / "mine.toml"
    own.write_text('[ruleset]\nid = "mine"\ntitle = "t"\nstatus = "provisional"\nextends = "nz-table-games"\n'
                   '[ruleset.parameters]\ndice_alpha = 0.05\ndice_min_rolls = 200\n')
    rs = load_ruleset(str(own))
    assert rs.parameters["dice_alpha"] == 0.05 and rs.parameters["dice_min_rolls"] == 200


# --- every engine counts the same ----------------------------------------------------

def _two_site_folder(tmp_path):
    root = tmp_path / "exports"
    for site, seed in (("casino-a", 4), ("casino-b", 5)):
        (root / site).mkdir(parents=True)
        write_log(generate(1, 1200, seed, ["dice.face_bias"], die_lean=0.6).table,
                  root / site / "night.parquet")
    return root


def _dice_table(tmp_path, root, name, *extra):
    out = tmp_path / name
    result = CliRunner().invoke(main, ["check", str(root), "-r", "nz-table-games", "--out",
                                       str(out), "--site-from-path", *extra])
    assert result.exit_code == 0, result.output
    return pq.read_table(out / "dice_stats.parquet")


def test_a_die_is_its_site_and_serial_and_every_engine_counts_alike(tmp_path):
    root = _two_site_folder(tmp_path)
    one = _dice_table(tmp_path, root, "one")
    frame = one.to_pandas()
    flagged = frame[frame["flagged"]]
    assert list(zip(flagged["site"], flagged["serial"])) == [("casino-a", "A1"),
                                                            ("casino-b", "A1")]
    assert frame["rolls"].sum() == 2 * 2 * 1200
    two = _dice_table(tmp_path, root, "two", "--jobs", "2")
    assert two.equals(one)


def _a_leaning_die_at_two_tables(tmp_path):
    """exports/: die A1 (no site) leaning at T01 and at T02, one file each."""
    root = tmp_path / "exports"
    root.mkdir()
    for first in (1, 2):
        log = generate(1, 1500, 7 + first, ["dice.face_bias"], first_table=first,
                       die_lean=0.6)
        write_log(log.table, root / f"t{first}.parquet")
    return root


def test_a_die_thrown_in_two_batches_shows_its_sessions_shooters_and_custody_whole(
        tmp_path, monkeypatch):
    """Die A1 (no site) leans at T01 and at T02, one file each: audited a
    batch a file, under --jobs 1 and 2, its flagged entry (tables, sessions,
    shooters summed, custody) is what one audit of both files shows, and
    the whole page is the same."""
    from auditor.report.dice_report import html_context
    from auditor.report.html import COLLECTOR, render_html
    from auditor.run import AuditJob, run_audit, stream

    root = _a_leaning_die_at_two_tables(tmp_path)
    ruleset = load_ruleset("nz-table-games")
    meta = {"test": "dice parts"}
    once = run_audit(AuditJob.of([root], ruleset, collector=COLLECTOR))
    whole = html_context(once)
    [die] = [d for d in whole["flagged"] if d["die"] == "A1"]
    assert die["tables"] == ["T01", "T02"]
    assert len(die["sessions"]) == 2 and die["shooters"] and die["custody"]
    page = render_html(once, meta)
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    engines = [{"jobs": 1}, {"jobs": 2}]
    if importlib.util.find_spec("distributed") is not None:
        engines.append({"jobs": 2, "engine": "dask"})  # (a local cluster)
    for engine in engines:
        parts = run_audit(AuditJob.of([root], ruleset, collector=COLLECTOR, **engine))
        shooters = parts.logs.digest["dice"].shooters_of.parts
        assert len(shooters) == 2
        # (the workers of two wrote them to files, read back for A1)
        assert [isinstance(p, Spilled) for p in shooters] == [engine["jobs"] == 2] * 2
        assert html_context(parts) == whole, engine
        assert render_html(parts, meta) == page, engine


def test_a_flagged_die_s_page_reads_only_the_spilled_parts_that_name_it(tmp_path, monkeypatch):
    """Die A1 flagged at two sites, one batch each, under --jobs 2: the page
    of each reads back only its own site's spilled parts (not every batch's,
    as a year's batches would make it), and the page is that of one process."""
    from auditor.report import dice_tally
    from auditor.report.html import COLLECTOR, render_html
    from auditor.run import AuditJob, run_audit, stream

    root = _two_site_folder(tmp_path)
    ruleset = load_ruleset("nz-table-games")
    page = render_html(run_audit(AuditJob.of([root], ruleset, collector=COLLECTOR,
                                             site_from_path=True)), {})
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    result = run_audit(AuditJob.of([root], ruleset, jobs=2, collector=COLLECTOR,
                                   site_from_path=True))
    tally = result.logs.digest["dice"]
    lists = (tally.sessions_of, tally.shooters_of, tally.custody)
    assert all(len(d.parts) == 2 and all(isinstance(p, Spilled) for p in d.parts)
               for d in lists)
    assert [p.dice >= {(site, "A1")} for p in tally.custody.parts
            for site in ("casino-a", "casino-b")] == [True, False, False, True]
    # (a batch's sessions and shooters name the same dice: one set, sent once)
    assert all(a.dice == b.dice and a.dice is b.dice
               for a, b in zip(tally.sessions_of.parts, tally.shooters_of.parts))
    read = []
    frame = dice_tally.Spilled.frame
    monkeypatch.setattr(dice_tally.Spilled, "frame", lambda self: read.append(self) or frame(self))
    assert render_html(result, {}) == page
    assert "casino-a/A1" in page and "casino-b/A1" in page
    # each flagged die: its site's part of each of the three lists, once
    assert sorted(lists.index(d) for p in read for d in lists if p in d.parts) == [0, 0, 1, 1, 2, 2]
    assert len(read) == len(set(map(id, read))) == 6


def test_dask_spills_from_its_task_per_table_too(tmp_path, monkeypatch):
    """A small input dask audits a task per table (not in batches): each
    table's task spills its per-die rows to the local cluster's folder, and
    the page is the page of one process."""
    pytest.importorskip("distributed")
    from auditor.report.html import COLLECTOR, render_html
    from auditor.run import AuditJob, run_audit

    root = _a_leaning_die_at_two_tables(tmp_path)
    ruleset = load_ruleset("nz-table-games")
    page = render_html(run_audit(AuditJob.of([root], ruleset, collector=COLLECTOR)), {})
    spill = tmp_path / "tmp"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    result = run_audit(AuditJob.of([root], ruleset, engine="dask", jobs=2,
                                   collector=COLLECTOR))
    parts = result.logs.digest["dice"].custody.parts
    assert len(parts) == 2 and all(isinstance(p, Spilled) for p in parts)
    assert "Die <code>A1</code>" in page and render_html(result, {}) == page
    del result, parts
    gc.collect()
    for closing in [t for t in threading.enumerate() if t.name == "auditor-dask-close"]:
        closing.join(30)  # (the local cluster closes beside the reports)
    assert list(spill.iterdir()) == []  # (dask's own files were in a folder of the audit's)


@pytest.mark.parametrize("tasks", ["a task per table", "batches"])
def test_a_cluster_of_your_own_sends_the_rows_and_the_client_spills_them(
        tmp_path, monkeypatch, cluster, tasks):
    """--scheduler: the workers may not share this machine's disk, so they
    are given no folder and send the per-die rows with their results; the
    client writes them to a folder of its own as each result arrives (not
    kept in its memory). The same page; the folder goes with the result."""
    from auditor.report.html import COLLECTOR, render_html
    from auditor.run import AuditJob, run_audit, stream

    root = _a_leaning_die_at_two_tables(tmp_path)
    ruleset = load_ruleset("nz-table-games")
    page = render_html(run_audit(AuditJob.of([root], ruleset, collector=COLLECTOR)), {})
    if tasks == "batches":
        monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
        monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    spill = tmp_path / "tmp"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    given = set()  # (in the client?, given a folder?); the cluster's workers are threads here
    spill_taken = stream.spill_taken

    def recorded(collector, taken, folder):
        given.add((threading.current_thread() is threading.main_thread(), folder is not None))
        return spill_taken(collector, taken, folder)

    monkeypatch.setattr(stream, "spill_taken", recorded)
    result = run_audit(AuditJob.of([root], ruleset, engine="dask",
                                   scheduler=cluster.scheduler_address, collector=COLLECTOR))
    assert given == {(False, False), (True, True)}
    parts = result.logs.digest["dice"].custody.parts
    assert len(parts) == 2 and all(isinstance(p, Spilled) for p in parts)
    assert all(Path(p.path).parent.parent == spill for p in parts)
    assert render_html(result, {}) == page
    del result, parts
    gc.collect()
    assert list(spill.iterdir()) == []


def _two_batches(tmp_path, monkeypatch):
    from auditor.run import stream

    root = tmp_path / "exports"
    root.mkdir()
    for first in (1, 2):
        write_log(generate(1, 300, first, first_table=first).table, root / f"t{first}.parquet")
    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    spill = tmp_path / "tmp"
    spill.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spill))
    return root, spill


def test_the_rows_spilled_by_the_workers_are_removed_with_the_result(tmp_path, monkeypatch):
    from auditor.report.html import COLLECTOR
    from auditor.run import AuditJob, run_audit

    root, spill = _two_batches(tmp_path, monkeypatch)
    result = run_audit(AuditJob.of([root], load_ruleset("nz-table-games"), jobs=2,
                                   collector=COLLECTOR))
    files = [Path(p.path) for p in result.logs.digest["dice"].custody.parts]
    assert len(files) == 2 and all(f.exists() and f.parent.parent == spill for f in files)
    del result
    gc.collect()
    assert list(spill.iterdir()) == []


@pytest.mark.parametrize("where", ["no folder", "no room"])
def test_rows_that_cannot_be_spilled_travel_with_the_results(tmp_path, monkeypatch, where):
    """No temporary folder to be had, or a worker that cannot write to it
    (a full disk): the rows come back in the results, the same page."""
    from auditor.report import dice_tally
    from auditor.report.html import COLLECTOR, render_html
    from auditor.run import AuditJob, run_audit

    root, _ = _two_batches(tmp_path, monkeypatch)
    ruleset = load_ruleset("nz-table-games")
    page = render_html(run_audit(AuditJob.of([root], ruleset, collector=COLLECTOR)), {})
    if where == "no folder":
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "missing"))
    else:
        def full(frame, folder, named=None):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(dice_tally.Spilled, "of", staticmethod(full))
    result = run_audit(AuditJob.of([root], ruleset, jobs=2, collector=COLLECTOR))
    parts = result.logs.digest["dice"].custody.parts
    assert len(parts) == 2 and not any(isinstance(p, Spilled) for p in parts)
    assert render_html(result, {}) == page


def test_a_pool_that_fails_leaves_no_spilled_rows(tmp_path, monkeypatch):
    from auditor.errors import LogFileError
    from auditor.report.html import COLLECTOR
    from auditor.run import AuditJob, run_audit, stream

    root, spill = _two_batches(tmp_path, monkeypatch)
    audit_batch = stream.audit_batch

    def second_unreadable(paths, *args):  # (in the worker that reads it: forked, patched)
        if any(str(p).endswith("t2.parquet") for p in paths):
            raise LogFileError(str(paths[0]), "unreadable (as the test has it)")
        return audit_batch(paths, *args)

    monkeypatch.setattr(stream, "audit_batch", second_unreadable)
    made, mkdtemp = [], tempfile.mkdtemp
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **kw: made.append(mkdtemp(**kw)) or made[-1])
    with pytest.raises(LogFileError):
        run_audit(AuditJob.of([root], load_ruleset("nz-table-games"), jobs=2,
                              collector=COLLECTOR))
    assert len(made) == 1 and list(spill.iterdir()) == []


def test_the_faces_counted_add_up_to_the_totals_the_replay_decided(tmp_path):
    """Every counted roll's two faces make the total the game counted
    (after cocked dice), and each session's totals add up to its rolls."""
    log = generate(2, 400, 9)
    path = tmp_path / "n.parquet"
    write_log(log.table, path)
    logs = load_logs([path])
    state = replay_state(logs.events, load_ruleset("nz-table-games"))
    t = tally(logs.events, state)
    rows, totals = state.arrays("roll_counted_total")
    decided = dict(zip(rows.tolist(), totals.tolist()))  # (the last decision of a roll)
    voided = set(state.rows("roll_voided").tolist())
    valid = [r for r in decided if r not in voided]
    counted = np.bincount([decided[r] - 2 for r in valid], minlength=11)
    sessions = t.sessions[[f"total_{k}" for k in range(2, 13)]].to_numpy().sum(axis=0)
    assert sessions.tolist() == counted.tolist()
    assert t.dice[[f"face_{k}" for k in range(1, 7)]].to_numpy().sum() == 2 * len(valid)
    assert int(t.sets[[f"total_{k}" for k in range(2, 13)]].to_numpy().sum()) == len(valid)
    assert (t.sets["set"] >= 1).all() and (t.sets["dice"] != "").all()


def test_generate_plants_a_leaning_die_and_lists_it(tmp_path):
    out = tmp_path / "night.csv"
    result = CliRunner().invoke(main, ["generate", "--rolls", "300", "--seed", "3", "--out",
                                       str(out), "--inject", "dice.face_bias",
                                       "--die-lean", "0.5"])
    assert result.exit_code == 0, result.output
    planted = json.loads((tmp_path / "night.csv.planted.json").read_text())
    assert [(p["code"], p["table_id"]) for p in planted] == [("dice.face_bias", "T01")]
    assert "die A1 leans" in planted[0]["note"]
    bad = CliRunner().invoke(main, ["generate", "--out", str(out), "--inject", "dice.bogus"])
    assert bad.exit_code == 2 and "dice.face_bias" in bad.output


def test_rows_are_ordered_naturally_none_last_and_equal_names_fall_to_the_next_column():
    from auditor.report.dice_stats import _order

    site = ["casino-b", None, "casino-a", "casino-a", "casino-a"]
    table = ["T1", "T1", "T10", "T2", "T02"]
    seq = [5, 1, 3, 9, 4]
    # casino-a: T2 and T02 read as one name (seq decides), then T10; casino-b; none last
    assert _order([site, table, seq]).tolist() == [4, 3, 2, 0, 1]


def test_serials_ranked_by_arrow_rank_as_their_python_keys_do():
    """Serials of letters then digits are ranked on (text, number) by Arrow
    and numpy; any other text by its Python key: the same places either way
    (equal keys, A01 and A1, placed alike; no digits before digits)."""
    from auditor.report.dice_stats import _natural_ranks, _prefix_and_number
    from auditor.report.dice_tally import natural_order

    def by_key(values):
        keys = [natural_order(v) for v in values]
        return [sum(k < keys[i] for k in keys) for i in range(len(keys))]

    simple = ["A10", "A2", "A02", "B1", "A", "AB3", "", "A0", "Z-9", "a1", "000"]
    other = [*simple, "A1B2"]  # (a number inside: Python's key)
    wide = [*simple, "\u00e91"]  # (not ASCII: Python's key)
    assert _prefix_and_number(simple) is not None
    assert _prefix_and_number(other) is None and _prefix_and_number(wide) is None
    for values in (simple, other, wide):
        assert _natural_ranks(values).tolist() == by_key(values)
    # "", "000", "A", "A0", "A02" = "A2", "A10", "AB3", "B1", "Z-9", "a1"
    assert _natural_ranks(simple).tolist() == [6, 4, 4, 8, 2, 7, 0, 3, 9, 10, 1]


def test_dice_without_a_site_come_out_in_one_order_whatever_order_they_are_joined_in():
    # --jobs N and dask join the tallies of groups of tables in another order
    # than one process: a missing site (NaN, a new float object per frame)
    # must not leave the rows in the order they came (NaN equals nothing).
    import pandas as pd

    from auditor.report.dice_stats import level_of
    from auditor.report.dice_tally import FACES, DiceTally

    def tally(serials):
        return DiceTally(dice=pd.DataFrame({"site": [float("nan") for _ in serials],
                                            "serial": serials,
                                            **{f: [30] * len(serials) for f in FACES}}))

    level = level_of(load_ruleset("nz-table-games"))
    a = dice_stats(tally(["A2", "A10", "A1", "B1"]), level).dice
    b = dice_stats(tally(["B1", "A1", "A10", "A2"]), level).dice
    assert a["serial"].tolist() == b["serial"].tolist() == ["A1", "A2", "A10", "B1"]


def test_a_die_thrown_in_two_parts_keeps_no_site_when_joined():
    """A serial thrown at tables of two batches (or two pieces of one file)
    is summed into one row whose missing site stays None, as one tally of
    every table gives it (grouping made it NaN: `"site": NaN` in
    summary.json, where one process writes null)."""
    import pandas as pd

    from auditor.report.dice_tally import FACES, DiceTally, join

    def part(serials, site=None):
        return DiceTally(dice=pd.DataFrame({"site": [site] * len(serials), "serial": serials,
                                            **{f: [3] * len(serials) for f in FACES}}))

    joined = join([part(["A1", "A2"]), part(["A1"]), part(["A1"], "casino-a")]).dice
    assert joined["site"].tolist() == [None, None, "casino-a"]
    assert joined["serial"].tolist() == ["A1", "A2", "A1"]
    assert joined["face_1"].tolist() == [6, 3, 3]
