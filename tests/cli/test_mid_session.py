"""Tables whose log starts or ends in the middle of a session: the lawful NZ
sample night split at T01's seq 638 (a roll). The second half alone finds
nothing and names T01 as starting mid-session with the rules it could not
judge; the first half alone names T01 as ending mid-session; both together
give exactly the whole night's findings (none). A breach that needs no
earlier state (a wrong call, dice passed without the stick) planted in the
second half is still found when it is audited alone. The same under
--jobs, the dask engine and the streaming path."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from builder import report_findings, report_provenance
from builder import run_cli as run

from auditor.audit.midsession import TableStart
from auditor.logs.sessions import TableMarks
from auditor.run import stream

NIGHT = Path(__file__).resolve().parents[2] / "sample_logs" / "nz-table-games" / \
    "night-clean.csv"
SPLIT = 638
RULESET = "nz-table-games"
#: The rules of nz-table-games that need state from before T01's seq 638.
UNKNOWN_AT_START = {
    "R5.1-5.4-bowl", "R5.1-set-of-five", "R5.2-failed-die", "R5.2-inspection",
    "R5.3-5.9-offer-order", "R5.3-eligible-shooter", "R5.4-choose-two",
    "R5.4-shooter-accepted", "R5.7-all-settled", "R5.7-settle-then-pass",
    "R5.7-settled-as-decided", "R5.8-pass-on-seven-out", "R5.9-complete-set",
    "R5.9-offer-line-bettors", "R6.1-die-off-table", "R6.1-lost-die", "R6.4-approved-dice",
    "R6.4-void-roll", "log.unknown_reference"}


def _halves(tmp_path: Path, plant: bool = False) -> tuple[Path, Path, Path]:
    """first.csv (T01 up to seq 637, and T02), second.csv (T01 from seq 638)
    and t02.csv (T02 alone); `plant`: T01's call at seq 702 says 3 (the dice
    showed 2) and the dice at seq 710 go back to the shooter without the
    stick (`no_stick`)."""
    with open(NIGHT, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    header = list(rows[0])
    if plant:
        for r in rows:
            if r["table_id"] == "T01" and r["seq"] == "702":
                assert r["event"] == "total_called" and r["total"] == "2"
                r["total"] = "3"
            if r["table_id"] == "T01" and r["seq"] == "710":
                assert r["event"] == "dice_to_shooter" and r["flags"] == "stick"
                r["flags"] = "no_stick"
    second = [r for r in rows if r["table_id"] == "T01" and int(r["seq"]) >= SPLIT]
    first = [r for r in rows if r not in second]
    out = []
    for name, part in (("first.csv", first), ("second.csv", second),
                       ("t02.csv", [r for r in rows if r["table_id"] == "T02"])):
        path = tmp_path / "logs" / name
        path.parent.mkdir(exist_ok=True)
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=header)
            writer.writeheader()
            writer.writerows(part)
        out.append(path)
    return tuple(out)


def _found(out: Path) -> list[tuple[str, str, int]]:
    f = report_findings(out)
    return [(c, t, int(s)) for c, t, s in zip(f["code"], f["table_id"], f["seq"])]


def _check(tmp_path: Path, name: str, *args) -> tuple[object, Path]:
    out = tmp_path / name
    res = run("check", *args, "-r", RULESET, "--out", out, "--no-config",
              "--format", "parquet", "--format", "json")
    return res, out


def test_the_second_half_alone_finds_nothing_and_says_t01_starts_mid_session(tmp_path):
    _, second, _ = _halves(tmp_path)
    res, out = _check(tmp_path, "second", second)
    assert res.exit_code == 0, res.output
    assert _found(out) == []
    meta = report_provenance(out)
    assert meta["mid_session"] == [{"table": "T01", "starts_at": SPLIT, "first_event": "roll",
                                    "file": str(second),
                                    "reason": "log starts mid-session at seq 638"}]
    unseen = [e for e in meta["not_evaluated"] if e.get("table") == "T01"]
    assert {e["rule"] for e in unseen} == UNKNOWN_AT_START
    assert all(e["reason"] == "log starts mid-session at seq 638" and e["seq_from"] == SPLIT
               for e in unseen)
    # the dice are known again at T01's full set received (seq 919)
    assert {e["seq_to"] for e in unseen if e["rule"] == "R5.2-inspection"} == {918}
    assert "PASS — incomplete: 19 rule(s) not evaluated (log starts mid-session at seq 638)" \
        in res.output
    assert "MID-SESSION: T01 starts at seq 638 (roll, not table_open)" in res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["provenance"]["mid_session"] == meta["mid_session"]
    assert run("verify", out).exit_code == 0


def test_the_first_half_alone_says_t01_ends_mid_session(tmp_path):
    first, _, _ = _halves(tmp_path)
    res, out = _check(tmp_path, "first", first)
    assert res.exit_code == 0, res.output
    assert _found(out) == []
    meta = report_provenance(out)
    assert meta["mid_session"] == [{"table": "T01", "ends_at": SPLIT - 1,
                                    "last_event": "dice_to_shooter",
                                    "reason": "log ends mid-session at seq 637 (no "
                                              "table_close)"}]
    assert meta["not_evaluated"] == []  # nothing was pending at seq 637
    assert "MID-SESSION" not in res.output and "incomplete" not in res.output


def test_a_procedure_pending_at_the_end_of_the_first_half_is_not_judged(tmp_path):
    """The first half cut after T01's seq 604: the 7 Out at seq 602 is
    called and the dice collected, its wagers not settled yet (the dealer
    settles them from 605): not reported as missed, the rule not evaluated
    from there; the same rows with a table_close after them: missed."""
    first, _, _ = _halves(tmp_path)
    with open(first, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    cut = [r for r in rows if not (r["table_id"] == "T01" and int(r["seq"]) > 604)]
    close = {**{k: "" for k in rows[0]}, "table_id": "T01", "seq": "605",
             "ts": next(r for r in cut if r["seq"] == "604" and r["table_id"] == "T01")["ts"],
             "event": "table_close", "actor_role": "game_supervisor", "actor_id": "S01"}
    for name, part in (("cut.csv", cut), ("closed.csv", cut + [close])):
        with open(tmp_path / name, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(sorted(part, key=lambda r: (r["table_id"], int(r["seq"]))))
    res, out = _check(tmp_path, "cut", tmp_path / "cut.csv")
    assert res.exit_code == 0, res.output
    assert _found(out) == []
    [entry] = report_provenance(out)["not_evaluated"]
    assert (entry["rule"], entry["table"], entry["reason"]) == (
        "R5.7-all-settled", "T01", "log ends mid-session at seq 604")
    assert entry["seq_from"] == 602 and entry["seq_to"] == 604
    assert "MID-SESSION: T01 ends at seq 604 (no table_close" in res.output
    closed, out = _check(tmp_path, "closed", tmp_path / "closed.csv")
    assert closed.exit_code == 1
    assert ("settle.missing", "T01", 602) in _found(out)


def test_both_halves_together_are_the_whole_night(tmp_path):
    first, second, _ = _halves(tmp_path)
    res, out = _check(tmp_path, "both", first, second)
    whole_res, whole = _check(tmp_path, "whole", NIGHT)
    assert res.exit_code == whole_res.exit_code == 0
    assert _found(out) == _found(whole) == []
    meta = report_provenance(out)
    assert "mid_session" not in meta and meta["not_evaluated"] == []
    assert "MID-SESSION" not in res.output and "incomplete" not in res.output


def test_a_breach_needing_no_earlier_state_is_found_in_the_second_half_alone(tmp_path):
    _, second, _ = _halves(tmp_path, plant=True)
    res, out = _check(tmp_path, "second", second)
    assert res.exit_code == 1, res.output
    assert _found(out) == [("call.wrong_total", "T01", 702),
                           ("dice.stick_not_used", "T01", 710)]


@pytest.mark.parametrize("engine", ["jobs", "dask", "streaming"])
def test_the_same_under_every_engine(tmp_path, monkeypatch, engine):
    """The second half of T01 and the whole of T02, apart and in two files."""
    _, second, t02 = _halves(tmp_path, plant=True)
    args = [second, t02]
    if engine == "jobs":
        args += ["--jobs", "2"]
    elif engine == "dask":
        pytest.importorskip("distributed")
        args += ["--engine", "dask", "--jobs", "2"]
    else:  # each file a batch of its own
        monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
        monkeypatch.setattr(stream, "STREAM_EVENTS", 1)
    res, out = _check(tmp_path, engine, *args)
    alone, one = _check(tmp_path, "one", second, t02)
    assert res.exit_code == alone.exit_code == 1, res.output
    assert _found(out) == _found(one) == [("call.wrong_total", "T01", 702),
                                          ("dice.stick_not_used", "T01", 710)]
    assert report_provenance(out)["mid_session"] == report_provenance(one)["mid_session"]
    assert report_provenance(out)["not_evaluated"] == \
        report_provenance(one)["not_evaluated"]


def _second_half_as(tmp_path: Path, name: str, dice_at: dict, rename: dict | None = None,
                    table: str = "T01") -> Path:
    """The second half of T01 with the `dice` of the rows at `dice_at`'s seqs
    replaced, `rename` applied to the serials of every later row, and the
    table named `table`."""
    _, second, _ = _halves(tmp_path)
    with open(second, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        s = int(r["seq"])
        r["table_id"] = table
        if s in dice_at:
            r["dice"] = dice_at[s]
        elif rename and s > max(dice_at) and r["dice"]:
            r["dice"] = ",".join(rename.get(d, d) for d in r["dice"].split(","))
    path = tmp_path / name
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


#: The rules of nz-table-games that need the dice at the table.
DICE_RULES = {"R5.1-5.4-bowl", "R5.1-set-of-five", "R5.2-failed-die", "R5.2-inspection",
              "R5.4-choose-two", "R5.9-complete-set", "R6.1-die-off-table", "R6.1-lost-die",
              "R6.4-approved-dice", "log.unknown_reference"}


def _dice_ranges(out: Path) -> dict[str, int]:
    return {e["rule"]: e["seq_to"] for e in report_provenance(out)["not_evaluated"]
            if e["rule"] in DICE_RULES}


def test_one_replacement_die_leaves_the_other_dice_unknown(tmp_path):
    """T01's second half with one die (A3) removed at seq 918 and one (B3)
    received and inspected in its place at 919-922, play going on with
    A1, A2, B3, A4, A5: the four A dice came before the log's start, so
    the dice rules stay not evaluated to the end (not the 46 findings of
    reading the lone die as the whole set: `dice.set_size` at 919,
    `dice.unknown_die` at every use of an A die...)."""
    one = _second_half_as(tmp_path, "one.csv", {918: "A3", 919: "B3", 920: "B3", 921: "B3",
                                                922: "B3"},
                          rename={"B1": "A1", "B2": "A2", "B4": "A4", "B5": "A5"})
    res, out = _check(tmp_path, "one", one)
    assert res.exit_code == 0, res.output
    assert _found(out) == []
    assert _dice_ranges(out) == dict.fromkeys(DICE_RULES, 1275)


def test_a_full_set_received_establishes_the_dice_and_a_breach_after_it_is_found(tmp_path):
    """The full set B1-B5 received at seq 919 (as the night has it), then
    inspected without B5 (920-922): the dice are known from 919, and B5
    going into the bowl uninspected (923) is found in this half alone."""
    planted = _second_half_as(tmp_path, "planted.csv",
                              {920: "B1,B2,B3,B4", 921: "B1,B2,B3,B4", 922: "B1,B2,B3,B4"})
    res, out = _check(tmp_path, "planted", planted)
    assert res.exit_code == 1, res.output
    assert _found(out) == [("dice.not_inspected", "T01", 923)]
    assert _dice_ranges(out) == {**dict.fromkeys(DICE_RULES, 918),
                                 "log.unknown_reference": 1275}  # (it needs the seats too)


def _started(*moves, set_size: int = 5) -> TableStart:
    t = TableStart("T1", set_size)
    t.add(TableMarks((100, "roll"), (200, "roll"), {"dice": list(moves)}), "a.csv")
    return t


def test_the_dice_received_since_the_start_less_those_removed_make_the_set():
    # a die replaced again and again: never more than one known die at the table
    chain = [(110 + 10 * i + (sign < 0) * 5, sign, (f"R{i}",)) for i in range(6)
             for sign in (1, -1)]
    assert _started(*chain).established("dice") is None
    # two dice, then three more: a set of five known from the second receipt
    assert _started((120, 1, ("R1", "R2")), (150, 1, ("R3", "R4", "R5"))) \
        .established("dice") == 150
    # the same dice named twice count once; a set of five more is asked for under six
    assert _started((120, 1, ("R1", "R2")), (130, 1, ("R1", "R2", "R3", "R4"))) \
        .established("dice") is None
    assert _started((120, 1, ("R1", "R2", "R3", "R4", "R5")), set_size=6) \
        .established("dice") is None
    # what came before the start is not counted
    assert _started((90, 1, ("R1", "R2", "R3", "R4", "R5"))).established("dice") is None


def _all_formats(tmp_path: Path, name: str, log: Path) -> tuple[str, Path]:
    """Every report of `log`: the text format on standard output, the
    others in OUT; (the text, OUT). GitHub's annotations are the text of
    `github:-` in a second run."""
    out = tmp_path / name
    res = run("check", log, "-r", RULESET, "--out", out, "--no-config", "--format", "html",
              "--format", "json", "--format", "junit", "--format", "sarif",
              "--format", "text:-")
    gh = run("check", log, "-r", RULESET, "--out", tmp_path / (name + "-gh"), "--no-config",
             "--format", "github:-")
    assert res.exit_code == gh.exit_code == 0, res.output
    return res.output + gh.output, out


def test_every_format_names_the_table_the_seq_range_and_the_reason(tmp_path):
    """The second half alone, its table named `T<1>&%` (a log's text): each
    format says e.g. R5.2-inspection not evaluated at `T<1>&% seq 638-918`,
    why, escaped for that format."""
    import xml.etree.ElementTree as ET

    log = _second_half_as(tmp_path, "second.csv", {}, table="T<1>&%")
    printed, out = _all_formats(tmp_path, "second", log)
    where, why = "T<1>&% seq 638-918", "log starts mid-session at seq 638"
    # text (standard output and the terminal): one NOT EVALUATED line, rule by rule
    assert f"R5.2-inspection at {where}, " in printed
    assert "R5.7-all-settled at T<1>&% seq 638-1275, " in printed
    # GitHub: the data escaped (% as %25), the table and range in the message
    assert [line for line in printed.splitlines() if line.endswith(
        ",title=not evaluated R5.2-inspection::rule R5.2-inspection (dice.not_inspected) "
        f"not evaluated at T<1>&%25 seq 638-918: {why}")]
    # JUnit: the skipped case and the suite's property
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    case = next(c for c in suite.iter("testcase")
                if c.get("name").startswith("R5.2-inspection "))
    assert case.find("skipped").get("message") == \
        f"not evaluated: {log} at {where}: {why}"
    assert f"R5.2-inspection @ {log} at {where}: {why}" in \
        [p.get("value") for p in suite.iter("property") if p.get("name") == "not_evaluated"]
    # SARIF: the notification's message, and the table and range as properties
    sarif = json.loads((out / "findings.sarif").read_text())
    note = next(n for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
                if n["associatedRule"]["id"] == "R5.2-inspection")
    assert note["message"]["text"] == ("rule R5.2-inspection (dice.not_inspected) not "
                                       f"evaluated in {log} at {where}: {why}")
    assert note["properties"] == {"table": "T<1>&%", "seq_from": 638, "seq_to": 918}
    # HTML: a Where column, escaped
    page = (out / "report.html").read_text()
    assert "<th>Where</th>" in page
    assert "<td>T&lt;1&gt;&amp;% seq 638-918</td><td>log starts mid-session at seq 638</td>" \
        in page
    # summary.json: the entry itself
    entry = next(e for e in json.loads((out / "summary.json").read_text())["not_evaluated"]
                 if e["rule"] == "R5.2-inspection")
    assert (entry["table"], entry["seq_from"], entry["seq_to"], entry["reason"]) == (
        "T<1>&%", 638, 918, why)


def test_no_format_speaks_of_mid_session_on_the_whole_night(tmp_path):
    printed, out = _all_formats(tmp_path, "whole", NIGHT)
    texts = [printed] + [(out / f).read_text() for f in ("junit.xml", "findings.sarif",
                                                         "report.html", "summary.json")]
    for text in texts:
        assert "mid-session" not in text and " seq 638-" not in text
    assert "<th>Where</th>" not in texts[-2] and "not_evaluated" not in texts[1]
