"""The log generator: deterministic, readable in every format, lawful by the
spec's own game rules (checked here independently of the generator's code),
and planting each violation where its finding must point."""

from __future__ import annotations

import gzip
import itertools
import json
import re

import click
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from auditor.cli.generate_cmd import generate_command
from auditor.generate import INJECTABLE, SCHEMA, check_codes, generate, write_log
from auditor.logs.schema import COLUMN_NAMES

FORMATS = ("csv", "csv.gz", "jsonl", "jsonl.gz", "ndjson", "parquet", "parquet.gz")


@pytest.fixture(scope="module")
def sample():
    return generate(tables=2, rolls=150, seed=3, inject=["call.wrong_total", "log.sequence_gap"])


def read_back(path) -> pa.Table:
    """Read a written log with pyarrow's own readers."""
    name = str(path)
    if ".csv" in name:
        opts = pa_csv.ConvertOptions(column_types={f.name: f.type for f in SCHEMA},
                                     strings_can_be_null=True)
        return pa_csv.read_csv(name, convert_options=opts)
    if ".jsonl" in name or ".ndjson" in name:
        return pa_json.read_json(name, parse_options=pa_json.ParseOptions(explicit_schema=SCHEMA))
    if name.endswith(".gz"):
        return pq.read_table(pa.BufferReader(gzip.decompress(path.read_bytes())))
    return pq.read_table(name)


# --- the table itself ----------------------------------------------------------

def test_columns_and_types(sample):
    assert tuple(sample.table.column_names) == COLUMN_NAMES
    assert sample.table.schema.equals(SCHEMA)
    assert sample.table.schema.field("ts").type == pa.timestamp("us", tz="UTC")


def test_same_seed_same_table_other_seed_other_table(sample):
    again = generate(tables=2, rolls=150, seed=3, inject=["call.wrong_total", "log.sequence_gap"])
    assert again.table.equals(sample.table)
    assert again.planted == sample.planted
    assert not generate(tables=2, rolls=150, seed=4).table.equals(sample.table)


# --- writing -------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_write_is_deterministic(tmp_path, sample, fmt):
    a, b, c = tmp_path / f"a.{fmt}", tmp_path / f"b.{fmt}", tmp_path / f"c.{fmt}"
    write_log(sample.table, a)
    write_log(generate(tables=2, rolls=150, seed=3,
                       inject=["call.wrong_total", "log.sequence_gap"]).table, b)
    write_log(generate(tables=2, rolls=150, seed=5).table, c)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_round_trips(tmp_path, sample, fmt):
    path = tmp_path / f"log.{fmt}"
    write_log(sample.table, path)
    back = read_back(path).select(list(COLUMN_NAMES))
    assert back.schema.equals(SCHEMA)
    assert back.equals(sample.table)
    assert not list(tmp_path.glob(".*.tmp"))  # the temporary file was moved into place


def test_csv_text_matches_the_spec_fragment(tmp_path, sample):
    path = tmp_path / "log.csv"
    write_log(sample.table, path)
    lines = path.read_text().splitlines()
    assert lines[0] == ",".join(COLUMN_NAMES)
    assert lines[1] == "T01,1,2026-03-01T20:00:00+00:00,table_open,game_supervisor,S01" + "," * 11
    roll = next(line for line in lines if ",roll," in line)
    assert re.fullmatch(r'T01,\d+,[-0-9T:+]+,roll,player,(P\d{4}),\d+,\1,"A\d,A\d",[1-6],[1-6],'
                        r',,,,,"one_hand,simultaneous,far_end[a-z_,]*"', roll), roll


def test_jsonl_omits_nulls_and_writes_iso_times(tmp_path, sample):
    path = tmp_path / "log.jsonl"
    write_log(sample.table, path)
    first = json.loads(path.read_text().splitlines()[0])
    assert first == {"table_id": "T01", "seq": 1, "ts": "2026-03-01T20:00:00+00:00",
                     "event": "table_open", "actor_role": "game_supervisor", "actor_id": "S01"}


def test_unknown_suffix_is_refused(tmp_path, sample):
    with pytest.raises(ValueError, match="cannot tell the log format"):
        write_log(sample.table, tmp_path / "log.txt")


# --- lawfulness, checked from the spec's rules -----------------------------------

def next_clockwise(occupied: set[int], after: int) -> int:
    seats = sorted(occupied)
    return next((s for s in seats if s > after), seats[0])


def line_outcome(bet: str, number: int, point: int, total: int) -> str | None:
    """The spec's game state: pass/come by point (come: its own number),
    don't bets the mirror with the bar on 12."""
    p = number if bet in ("come", "dont_come") else point
    if p == 0:
        res = "win" if total in (7, 11) else "lose" if total in (2, 3, 12) else None
    else:
        res = "win" if total == p else "lose" if total == 7 else None
    if bet in ("dont_pass", "dont_come"):
        if p == 0 and total == 12:
            return "push"
        res = {"win": "lose", "lose": "win", None: None}[res]
    return res


def split_bet(name: str) -> tuple[str, int]:
    for fam in ("dont_come", "come"):
        if name.startswith(fam + "_"):
            return fam, int(name[len(fam) + 1:])
    return name, 0


class Referee:
    """Replays one table and asserts the structural rules as it goes."""

    def __init__(self, offer_role: str):
        self.offer_role = offer_role
        self.occupied: set[int] = set()
        self.wagers: dict[int, list[tuple[str, int]]] = {}  # line and come family
        self.point = 0
        self.shooter = 0
        self.ever_offered = False
        self.anchor: int | None = None     # None: no round in progress
        self.round_kind = ""
        self.dice_set: list[str] = []
        self.faces: list[int] | None = None
        self.pending: list[tuple[int, str, int, str]] = []
        self.after_off_table = False
        self.decided = False

    def has_line(self, seat: int) -> bool:
        return any(b in ("pass", "dont_pass") for b, _ in self.wagers.get(seat, []))

    def event(self, r: dict) -> None:
        e, seat = r["event"], r["seat"]
        assert "no_stick" not in (r["flags"] or ""), r
        handler = getattr(self, "on_" + e, None)
        if handler:
            handler(r, seat)

    def on_player_join(self, r, seat):
        assert 1 <= seat <= 14 and seat not in self.occupied
        self.occupied.add(seat)
        self.wagers[seat] = []

    def on_player_leave(self, r, seat):
        assert seat != self.shooter and not self.wagers[seat]
        self.occupied.discard(seat)

    def on_wager_placed(self, r, seat):
        fam, num = split_bet(r["bet"])
        if fam in ("pass", "dont_pass", "come", "dont_come"):
            self.wagers[seat].append((fam, num))

    def on_wager_removed(self, r, seat):
        fam = split_bet(r["bet"])[0]
        if fam in ("pass", "dont_pass", "come", "dont_come"):
            self.wagers[seat].remove(next(w for w in self.wagers[seat] if w[0] == fam))

    def on_dice_received(self, r, seat):
        self.dice_set = r["dice"].split(",")
        assert len(self.dice_set) == 5

    def on_die_off_table(self, r, seat):
        self.after_off_table = True

    def on_dice_offered(self, r, seat):
        if self.after_off_table:  # 6.1: the bowl's dice offered to the shooter
            assert seat == self.shooter and r["actor_role"] == "stickperson"
            self.after_off_table = False
            return
        if self.anchor is None:  # a new round: the start of play
            assert not self.ever_offered
            self.anchor, self.round_kind = 0, "start"
        self.ever_offered = True
        assert r["dice"].split(",") == self.dice_set  # the complete set, in set order
        want_role = "dealer" if self.round_kind == "after" and self.offer_role == "dealer" \
            else "stickperson"
        assert r["actor_role"] == want_role, r
        assert all(self.has_line(s) for s in self.occupied)  # everyone holds a line bet
        assert seat == next_clockwise(self.occupied, self.anchor), (r, self.anchor)

    def on_dice_declined(self, r, seat):
        self.anchor = seat

    def on_dice_accepted(self, r, seat):
        self.shooter, self.anchor = seat, None

    def on_shooter_relinquish(self, r, seat):
        assert seat == self.shooter
        self.anchor, self.round_kind, self.shooter = seat, "after", 0

    def on_roll(self, r, seat):
        assert not [p for p in self.pending if p[3] != "push"], self.pending  # all settled
        self.pending = []
        assert seat == self.shooter and r["actor_id"] == r["player_id"]
        assert self.has_line(seat), r
        assert len(r["dice"].split(",")) == 2
        self.faces = [r["die1"], r["die2"]]
        self.roll_dice = r["dice"].split(",")
        self.decided = False

    def on_die_cocked(self, r, seat):
        # the roll records the counted face: opposite the resting one
        assert self.faces[self.roll_dice.index(r["dice"])] == 7 - r["die1"]

    def on_no_roll(self, r, seat):
        assert r["actor_role"] == "stickperson" and r["flags"] == "before_rest"
        self.faces = None

    def on_total_called(self, r, seat):
        assert r["actor_role"] == "stickperson" and self.faces is not None
        total = sum(self.faces)
        assert r["total"] == total
        for s, ws in self.wagers.items():
            for fam, num in list(ws):
                res = line_outcome(fam, num, self.point, total)
                if fam in ("come", "dont_come") and num == 0 and total in (4, 5, 6, 8, 9, 10):
                    ws.remove((fam, num))
                    ws.append((fam, total))
                elif res is not None:
                    self.pending.append((s, fam, num, res))
                    if res != "push":
                        ws.remove((fam, num))
        if self.point == 0:
            self.point = total if total in (4, 5, 6, 8, 9, 10) else 0
        elif total in (7, self.point):
            self.point = 0

    def on_wager_settled(self, r, seat):
        fam, num = split_bet(r["bet"])
        if fam not in ("pass", "dont_pass", "come", "dont_come"):
            return
        match = next(p for p in self.pending
                     if p[0] == seat and p[1] == fam and (p[2] == num or num == 0))
        assert r["outcome"] == match[3], (r, match)
        assert r["amount"] == (0.0 if r["outcome"] != "win" else r["amount"])
        self.pending.remove(match)


@pytest.mark.parametrize("seed,offer_role", [(0, "stickperson"), (1, "dealer"),
                                             (2, "stickperson")])
def test_generated_log_is_lawful(seed, offer_role):
    log = generate(tables=3, rolls=800, seed=seed, offer_role=offer_role)
    assert log.planted == []
    t = log.table
    seen = {}
    events = set(t.column("event").to_pylist())
    assert {"die_off_table", "die_cocked", "no_roll", "shooter_relinquish"} <= events
    for tid in ("T01", "T02", "T03"):
        rows = t.filter(pa.compute.equal(t.column("table_id"), tid)).to_pylist()
        assert [r["seq"] for r in rows] == list(range(1, len(rows) + 1))
        assert all(a["ts"] < b["ts"] for a, b in itertools.pairwise(rows))
        assert rows[0]["event"] == "table_open" and rows[-1]["event"] == "table_close"
        referee = Referee(offer_role)
        for r in rows:
            referee.event(r)
        seen[tid] = sum(r["event"] == "roll" for r in rows)
        assert log.valid_rolls[tid] == 800
    assert all(n > 800 for n in seen.values())  # plus the void rolls


def test_opening_and_offer_sequence():
    rows = generate(tables=1, rolls=5, seed=9).table.to_pylist()
    events = [r["event"] for r in rows]
    assert events[:6] == ["table_open"] + ["staff_on"] * 5
    assert {r["actor_role"] for r in rows[1:6]} == {"stickperson", "dealer", "boxperson",
                                                    "game_supervisor"}
    i = events.index("dice_received")
    assert events[i:i + 5] == ["dice_received"] + ["dice_inspected"] * 3 + ["dice_to_bowl"]
    assert [r["actor_role"] for r in rows[i + 1:i + 4]] == ["dealer", "game_supervisor",
                                                           "pit_manager"]
    accepted = events.index("dice_accepted")
    assert events[accepted + 1:accepted + 3] == ["dice_selected", "dice_to_bowl"]
    kept, rest = rows[accepted + 1]["dice"].split(","), rows[accepted + 2]["dice"].split(",")
    assert len(kept) == 2 and sorted(kept + rest) == rows[i]["dice"].split(",")


# --- planting ----------------------------------------------------------------

POINTED_EVENT = {
    "shooter.ineligible": "roll", "shooter.not_accepted": "roll",
    "shooter.kept_after_seven_out": "roll",
    "shooter.order_to_pass_unauthorised": "shooter_relinquish",
    "offer.order": "dice_offered", "offer.incomplete_set": "dice_offered",
    "offer.wrong_role": "dice_offered", "dice.set_size": "dice_received",
    "dice.not_inspected": "dice_to_bowl", "dice.not_in_bowl": "dice_selected",
    "dice.stick_not_used": "dice_collected",
    "dice.passed_before_settlement": "dice_to_shooter",
    "throw.two_hands": "roll", "throw.not_simultaneous": "roll", "throw.short": "roll",
    "call.missing": "roll", "call.wrong_total": "total_called",
    "call.wrong_role": "total_called", "noroll.missing": "roll",
    "noroll.improper": "no_roll", "noroll.late": "no_roll", "noroll.wrong_role": "no_roll",
    "dispute.wrong_role": "ruling", "overrule.authority": "overrule",
    "settle.wrong_outcome": "wager_settled", "settle.missing": "roll",
}


def _what_was_planted(code: str, rows: list[dict], i: int) -> bool:
    """The planted row (rows[i]) shows the violation."""
    r, prev, nxt = rows[i], rows[i - 1], rows[i + 1]
    flags = (r["flags"] or "").split(",")
    checks = {
        "shooter.ineligible": lambda: prev["event"] == "wager_removed"
        and prev["seat"] == r["seat"] and prev["bet"] in ("pass", "dont_pass"),
        "shooter.order_to_pass_unauthorised": lambda: r["reason"] == "ordered"
        and r["actor_role"] == "dealer",
        "offer.incomplete_set": lambda: len(r["dice"].split(",")) == 4,
        "offer.wrong_role": lambda: r["actor_role"] == "boxperson",
        "dice.set_size": lambda: len(r["dice"].split(",")) == 4,
        "dice.not_inspected": lambda: rows[i - 2]["event"] == "dice_received"
        and (prev["event"], prev["actor_role"]) == ("dice_inspected", "dealer"),
        "dice.not_in_bowl": lambda: nxt["event"] != "dice_to_bowl",
        "dice.stick_not_used": lambda: r["flags"] == "no_stick",
        "dice.passed_before_settlement": lambda: prev["event"] == "dice_collected"
        and any(x["event"] == "wager_settled" for x in rows[i + 1:i + 4]),
        "throw.two_hands": lambda: "two_hands" in flags,
        "throw.not_simultaneous": lambda: "not_simultaneous" in flags,
        "throw.short": lambda: "short" in flags,
        "call.missing": lambda: nxt["event"] != "total_called",
        "call.wrong_total": lambda: r["total"] != prev["die1"] + prev["die2"],
        "call.wrong_role": lambda: r["actor_role"] == "dealer",
        "noroll.missing": lambda: "die_on_die" in flags and nxt["event"] == "total_called",
        "noroll.improper": lambda: r["reason"] == "chips_contact",
        "noroll.late": lambda: r["flags"] == "after_rest",
        "noroll.wrong_role": lambda: r["actor_role"] == "dealer",
        "dispute.wrong_role": lambda: r["actor_role"] == "stickperson",
        "overrule.authority": lambda: r["actor_role"] == "dealer",
        "settle.wrong_outcome": lambda: r["bet"] == "pass" and r["outcome"] == "lose",
        "log.sequence_gap": lambda: r["seq"] == prev["seq"] + 2,
        "log.out_of_order": lambda: r["ts"] < prev["ts"],
    }
    return checks.get(code, lambda: True)()


@pytest.mark.parametrize("code", INJECTABLE)
def test_each_code_is_planted_where_its_finding_points(code):
    log = generate(tables=2, rolls=120, seed=21, inject=[code])
    assert [p["code"] for p in log.planted] == [code, code]
    for p in log.planted:
        rows = log.table.filter(pa.compute.equal(log.table.column("table_id"),
                                                 p["table_id"])).to_pylist()
        i = next(k for k, r in enumerate(rows) if r["seq"] == p["seq"])
        if code in POINTED_EVENT:
            assert rows[i]["event"] == POINTED_EVENT[code], (p, rows[i])
        assert _what_was_planted(code, rows, i), (p, rows[i - 2:i + 3])
        assert p["note"]


def test_all_codes_together_once_per_table():
    log = generate(tables=2, rolls=200, seed=8, inject=INJECTABLE)
    by_table = {}
    for p in log.planted:
        by_table.setdefault(p["table_id"], []).append(p["code"])
    assert {t: sorted(c) for t, c in by_table.items()} == {
        "T01": sorted(INJECTABLE), "T02": sorted(INJECTABLE)}
    assert log.planted == sorted(log.planted, key=lambda p: (p["table_id"], p["seq"], p["code"]))
    seqs = {(r["table_id"], r["seq"]) for r in
            log.table.select(["table_id", "seq"]).to_pylist()}
    assert all((p["table_id"], p["seq"]) in seqs for p in log.planted)


def test_unknown_code_is_refused():
    with pytest.raises(ValueError, match="unknown injection code 'nope'.*call.missing"):
        generate(1, 10, 0, inject=["nope"])
    assert check_codes("call.missing, call.missing,throw.short") == ["call.missing",
                                                                      "throw.short"]


def test_a_long_session_holds_together():
    """Not a timing test: a larger run keeps its shape (events per roll)."""
    log = generate(tables=1, rolls=20_000, seed=4)
    assert 6 < log.table.num_rows / log.valid_rolls["T01"] < 20
    assert log.table.column("seq").to_pylist()[-1] == log.table.num_rows


# --- the command ---------------------------------------------------------------

def test_command_writes_log_and_planted_list(tmp_path):
    out = tmp_path / "t.jsonl.gz"
    args = ["--tables", "2", "--rolls", "100", "--seed", "5", "--out", str(out),
            "--inject", "call.wrong_total,dice.stick_not_used", "--offer-role", "dealer"]
    res = CliRunner().invoke(generate_command, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    planted_path = tmp_path / "t.jsonl.gz.planted.json"
    first = planted_path.read_bytes()
    planted = json.loads(first)
    assert len(planted) == 4
    assert planted == sorted(planted, key=lambda p: (p["table_id"], p["seq"]))
    assert read_back(out).num_rows > 0
    CliRunner().invoke(generate_command, args, catch_exceptions=False)
    assert planted_path.read_bytes() == first


def test_command_without_inject_writes_no_planted_list(tmp_path):
    out = tmp_path / "t.csv"
    res = CliRunner().invoke(generate_command, ["--rolls", "20", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.exists() and not (tmp_path / "t.csv.planted.json").exists()


def test_command_rejects_unknown_code(tmp_path):
    res = CliRunner().invoke(generate_command, ["--out", str(tmp_path / "t.csv"),
                                                "--inject", "call.missing,bogus.code"])
    assert res.exit_code == 2
    assert "bogus.code" in res.output and "call.wrong_total" in res.output
    assert not (tmp_path / "t.csv").exists()


def test_command_help_has_an_example():
    res = CliRunner().invoke(generate_command, ["--help"])
    assert res.exit_code == 0 and "Example:" in res.output


# --- tables kept open for days (--days) -------------------------------------------

def _sessions(frame) -> list[tuple[int, object, object]]:
    """(table_open's seq, its ts, the session's last ts) per session of one
    table's rows (a pandas frame), in order."""
    frame = frame.reset_index(drop=True)
    opens = frame.index[frame["event"] == "table_open"].tolist()
    ends = [*opens[1:], len(frame)]
    return [(int(frame["seq"].iat[a]), frame["ts"].iat[a], frame["ts"].iat[b - 1])
            for a, b in zip(opens, ends)]


def test_days_play_a_session_a_day_after_the_first():
    one = generate(tables=2, rolls=40, seed=3, inject=["call.wrong_total"])
    week = generate(tables=2, rolls=40, seed=3, inject=["call.wrong_total"], days=3)
    one_day, days = one.table.to_pandas(), week.table.to_pandas()
    for tid in ("T01", "T02"):
        rows = days[days["table_id"] == tid].reset_index(drop=True)
        first = one_day[one_day["table_id"] == tid].reset_index(drop=True)
        # the first day is the one-day table itself (T02's players are
        # numbered on after T01's three days); then two more sessions
        assert rows.iloc[:len(first)].drop(columns=["actor_id", "player_id"]).equals(
            first.drop(columns=["actor_id", "player_id"]))
        assert tid == "T02" or rows.iloc[:len(first)].equals(first)
        assert rows["seq"].tolist() == list(range(1, len(rows) + 1))
        sessions = _sessions(rows)
        assert len(sessions) == 3
        assert [str(ts.date()) for _, ts, _ in sessions] == ["2026-03-01", "2026-03-02",
                                                             "2026-03-03"]
        assert (rows["event"] == "table_close").sum() == 3
    assert sum(p["code"] == "call.wrong_total" for p in week.planted) == 2 * 3


def test_a_session_longer_than_a_day_pushes_the_next_one_back():
    sessions = _sessions(generate(tables=1, rolls=2000, seed=1, days=2).table.to_pandas())
    (_, opened, closed), (_, reopened, _) = sessions
    assert closed.date() > opened.date()  # the first session runs past midnight
    assert (reopened - closed).total_seconds() == 600


def test_command_days_option(tmp_path):
    out = tmp_path / "week.parquet"
    res = CliRunner().invoke(generate_command, ["--rolls", "20", "--days", "2",
                                                "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert read_back(out).column("event").to_pylist().count("table_open") == 2
    bad = CliRunner().invoke(generate_command, ["--days", "0", "--out", str(tmp_path / "x.csv")])
    assert bad.exit_code == 2 and "Traceback" not in bad.output and "--days" in bad.output
    with pytest.raises(ValueError, match="days"):
        generate(tables=1, rolls=5, seed=1, days=0)


def test_dice_not_in_bowl_planted_just_before_table_close_is_found(tmp_path):
    """Seed 000 5.4 owes the return of the dice not chosen on the choice
    itself: a `dice_selected` followed directly by `table_close` is a breach
    the check finds (seed 35 plants one so), through both commands."""
    from builder import report_findings, run_cli

    log = tmp_path / "night.parquet"
    res = run_cli("generate", "--tables", 1, "--rolls", 30, "--seed", 35,
                  "--inject", "dice.not_in_bowl", "--out", log)
    assert res.exit_code == 0, res.output
    planted = json.loads((tmp_path / "night.parquet.planted.json").read_text())
    rows = pq.read_table(log).to_pylist()
    i = next(k for k, r in enumerate(rows) if r["seq"] == planted[0]["seq"])
    assert [r["event"] for r in rows[i:i + 2]] == ["dice_selected", "table_close"]
    res = run_cli("check", log, "--ruleset", "nz-table-games", "--out", tmp_path / "out")
    assert res.exit_code == 1, res.output
    f = report_findings(tmp_path / "out")
    assert {(c, t, int(s)) for c, t, s in zip(f["code"], f["table_id"], f["seq"])} == {
        ("dice.not_in_bowl", p["table_id"], p["seq"]) for p in planted}


@pytest.mark.parametrize("interleaved", [False, True])
def test_by_night_cuts_a_log_of_days_as_a_casino_exports_it_nightly(interleaved):
    from auditor.generate import by_night

    log = generate(3, 20, seed=9, days=4).table
    nights = by_night(log, interleaved)
    assert len(nights) == 4 and sum(n.num_rows for n in nights) == log.num_rows
    for k, night in enumerate(nights):
        rows = night.to_pylist()
        assert sorted({r["table_id"] for r in rows}) == ["T01", "T02", "T03"]
        for table in ("T01", "T02", "T03"):
            own = [r for r in rows if r["table_id"] == table]
            assert own[0]["event"] == "table_open"  # its session of the night, whole
            assert [r["event"] for r in own].count("table_open") == 1
            assert [r["seq"] for r in own] == sorted(r["seq"] for r in own)
        ids = [r["table_id"] for r in rows]
        if interleaved:
            assert [r["ts"] for r in rows] == sorted(r["ts"] for r in rows)
        else:
            assert ids == sorted(ids)  # a table after another
    seqs = [r["seq"] for n in nights for r in n.to_pylist() if r["table_id"] == "T02"]
    assert seqs == list(range(1, len(seqs) + 1))  # seq running on from night to night


@pytest.mark.parametrize("option", ["--tables", "--rolls", "--days"])
def test_a_log_past_reach_is_refused_before_anything_is_generated(tmp_path, option):
    """10**20 tables ran until memory was gone, 10**20 rolls ended in a
    SystemError, 10**20 days in a MemoryError (found 2026-12-07)."""
    out = tmp_path / "x.csv"
    res = CliRunner().invoke(generate_command, [option, str(10 ** 20), "--out", str(out)])
    assert res.exit_code == 2, res.output
    assert "events; one log holds at most 100,000,000 (write several files, each with " \
           "its own --first-table and --seed)" in res.output
    assert not out.exists()


def test_the_reach_of_one_log_is_its_events_about():
    from auditor.cli.generate_cmd import _within_reach

    _within_reach(1, 8_333_330, 1)  # 100,000,000 events, about: written
    _within_reach(8, 400_000, 1)    # the benchmarks' largest file, 38.4 million
    with pytest.raises(click.UsageError, match="about 100,000,012 events"):
        _within_reach(1, 8_333_331, 1)
    with pytest.raises(click.UsageError, match="--tables 2 x --days 50 x --rolls 83334"):
        _within_reach(2, 83_334, 50)
