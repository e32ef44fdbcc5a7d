"""Settlement checks (auditor/checks/settle.py) and the line-bet outcomes
they rest on (auditor/game/outcomes.py): each fires on its breach and stays
quiet on the lawful case beside it, under every shipped ruleset with a rule
using it. Findings are compared as the exact set of the family's
(code, table, seq)."""

import pytest
from builder import (
    THROW,
    LogBuilder,
    cocked,
    dispute,
    evidence_of,
    expected,
    found_family,
    no_roll,
    rulesets_with,
    ruling,
)

from auditor.game.outcomes import (
    come_outcome,
    dont_come_outcome,
    dont_pass_outcome,
    expected_outcome,
    pass_outcome,
)

FAMILY = "settle"
T = "T1"
OUTCOME_RS = rulesets_with("settle.wrong_outcome")
MISSING_RS = rulesets_with("settle.missing")
VOID_RS = rulesets_with("settle.void_roll")


def fam(b, tmp_path, rs):
    return found_family(b, tmp_path, rs, FAMILY)


def table(**bets) -> LogBuilder:
    """Seat 2 (the shooter) with a pass bet; seat 5 with `bets[5]`, a list of
    bet names (default: none). `table(s5=["dont_pass"])`."""
    b = LogBuilder()
    b.open(seats=(2, 5))
    b.bet(2)
    for name in bets.get("s5", []):
        b.bet(5, name)
    b.offer(2)
    b.accept(2)
    return b


def rnd(b, d1, d2, settlements=(), flags=THROW):
    """One lawful roll of the shooter at seat 2 with `settlements`:
    [(seat, bet, outcome)]."""
    return b.play(2, d1, d2, settlements=[(s, bet, o, 10 if o == "win" else 0)
                                          for s, bet, o in settlements], flags=flags)


def point_six(b):
    """Come-out 4+2: the point is 6, nothing decided."""
    return rnd(b, 4, 2)


# --- outcomes.py: the pure functions ----------------------------------------------


@pytest.mark.parametrize("total,want", [(7, "win"), (11, "win"), (2, "lose"), (3, "lose"),
                                        (12, "lose"), (4, None), (10, None)])
def test_pass_outcome_on_the_come_out(total, want):
    assert pass_outcome(0, total) == want


@pytest.mark.parametrize("total,want", [(6, "win"), (7, "lose"), (8, None), (11, None),
                                        (2, None), (12, None)])
def test_pass_outcome_with_a_point(total, want):
    assert pass_outcome(6, total) == want


@pytest.mark.parametrize("bar,total,want", [
    (12, 12, "push"), (12, 2, "win"), (12, 3, "win"), (12, 7, "lose"), (12, 11, "lose"),
    (2, 2, "push"), (2, 12, "win"), (2, 3, "win"), (12, 5, None)])
def test_dont_pass_outcome_on_the_come_out(bar, total, want):
    assert dont_pass_outcome(0, total, bar) == want


@pytest.mark.parametrize("total,want", [(6, "lose"), (7, "win"), (12, None), (2, None)])
def test_dont_pass_outcome_with_a_point_has_no_bar(total, want):
    assert dont_pass_outcome(6, total, 12) == want
    assert dont_pass_outcome(6, total, 2) == want


def test_come_and_dont_come_outcomes():
    assert come_outcome(0, 11) == "win" and come_outcome(0, 3) == "lose"
    assert come_outcome(5, 5) == "win" and come_outcome(5, 7) == "lose"
    assert come_outcome(5, 6) is None
    assert dont_come_outcome(0, 12, 12) == "push" and dont_come_outcome(0, 2, 12) == "win"
    assert dont_come_outcome(0, 7, 12) == "lose"
    assert dont_come_outcome(5, 7, 12) == "win" and dont_come_outcome(5, 5, 12) == "lose"
    assert dont_come_outcome(5, 12, 12) is None
    assert expected_outcome("come", 5, 0, 5, 12) == "win"  # works on the come-out
    with pytest.raises(ValueError):
        expected_outcome("field", 0, 0, 7, 12)


# --- pass line ------------------------------------------------------------------------


@pytest.mark.parametrize("rs", OUTCOME_RS)
@pytest.mark.parametrize("d1,d2,outcome", [(3, 4, "win"), (5, 6, "win"), (1, 1, "lose"),
                                           (1, 2, "lose"), (6, 6, "lose")])
def test_pass_on_the_come_out_settled_as_decided_is_quiet(tmp_path, rs, d1, d2, outcome):
    b = table()
    rnd(b, d1, d2, [(2, "pass", outcome)])
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
@pytest.mark.parametrize("d1,d2,outcome", [(3, 4, "lose"), (5, 6, "push"), (1, 1, "win"),
                                           (1, 2, "push"), (6, 6, "win")])
def test_pass_on_the_come_out_settled_against_the_dice_fires(tmp_path, rs, d1, d2, outcome):
    b = table()
    rnd(b, d1, d2)
    settle = b.settle(2, "pass", outcome)
    assert fam(b, tmp_path, rs) == {("settle.wrong_outcome", T, settle)}
    ev = evidence_of(b, tmp_path, rs, "settle.wrong_outcome")[settle]
    assert ev["settled"] == outcome and ev["expected"] != outcome


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_point_made_and_seven_out(tmp_path, rs):
    b = table()
    point_six(b)
    rnd(b, 5, 3)  # 8: nothing
    rnd(b, 3, 3, [(2, "pass", "win")])  # point made
    b.bet(2)
    point_six(b)
    rnd(b, 2, 5, [(2, "pass", "lose")])  # 7 Out
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_seven_out_settled_as_a_win_fires(tmp_path, rs):
    b = table()
    point_six(b)
    rnd(b, 2, 5)
    settle = b.settle(2, "pass", "win", 10)
    assert fam(b, tmp_path, rs) == {("settle.wrong_outcome", T, settle)}


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_pass_settled_on_a_roll_that_did_not_decide_it_fires(tmp_path, rs):
    b = table()
    point_six(b)
    roll = b.roll(2, 5, 3)  # 8 with the point at 6
    b.call(8)
    settle = b.settle(2, "pass", "win", 10)
    assert fam(b, tmp_path, rs) == {("settle.wrong_outcome", T, settle)}
    ev = evidence_of(b, tmp_path, rs, "settle.wrong_outcome")[settle]
    assert ev == {"expected": "undecided", "settled": "win", "roll_seq": roll}


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_come_out_point_settled_fires(tmp_path, rs):
    b = table()
    b.roll(2, 4, 2)
    b.call(6)
    settle = b.settle(2, "pass", "lose")
    assert fam(b, tmp_path, rs) == {("settle.wrong_outcome", T, settle)}


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_settling_one_decision_twice_fires_on_the_second(tmp_path, rs):
    b = table()
    b.roll(2, 3, 4)
    b.call(7)
    b.settle(2, "pass", "win", 10)
    second = b.settle(2, "pass", "win", 10)
    assert fam(b, tmp_path, rs) == {("settle.wrong_outcome", T, second)}


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_the_point_survives_a_change_of_shooter(tmp_path, rs):
    """The point belongs to the table: a new shooter with the point on."""
    b = table(s5=["pass"])
    point_six(b)
    b.add("shooter_relinquish", role="player", seat=2, reason="voluntary")
    b.offer(5)
    b.accept(5)
    b.play(5, 4, 3, settlements=[(2, "pass", "lose", 0), (5, "pass", "lose", 0)])
    assert fam(b, tmp_path, rs) == set()


# --- don't pass and the bar --------------------------------------------------------------


@pytest.mark.parametrize("rs", OUTCOME_RS)
@pytest.mark.parametrize("d1,d2,outcome", [(3, 4, "lose"), (5, 6, "lose"), (1, 1, "win"),
                                           (1, 2, "win")])
def test_dont_pass_on_the_come_out_mirrors_pass(tmp_path, rs, d1, d2, outcome):
    b = table(s5=["dont_pass"])
    pass_outcome_ = {"win": "lose", "lose": "win"}[outcome]
    rnd(b, d1, d2, [(2, "pass", pass_outcome_), (5, "dont_pass", outcome)])
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
@pytest.mark.parametrize("settled", [True, False], ids=["push-settled", "push-not-settled"])
def test_dont_pass_pushes_on_the_bar_12(tmp_path, rs, settled):
    b = table(s5=["dont_pass"])
    rnd(b, 6, 6, [(2, "pass", "lose")] + ([(5, "dont_pass", "push")] if settled else []))
    # The push leaves the wager standing: it then wins on a 7 Out.
    point_six(b)
    b.bet(2)
    rnd(b, 3, 4, [(2, "pass", "lose"), (5, "dont_pass", "win")])
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
@pytest.mark.parametrize("outcome", ["win", "lose"])
def test_dont_pass_settled_win_or_lose_on_the_bar_fires(tmp_path, rs, outcome):
    b = table(s5=["dont_pass"])
    rnd(b, 6, 6)
    b.settle(2, "pass", "lose")
    settle = b.settle(5, "dont_pass", outcome, 10 if outcome == "win" else 0)
    assert fam(b, tmp_path, rs) == {("settle.wrong_outcome", T, settle)}
    assert evidence_of(b, tmp_path, rs, "settle.wrong_outcome")[settle]["expected"] == "push"


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_dont_pass_with_a_point(tmp_path, rs):
    b = table(s5=["dont_pass"])
    point_six(b)
    rnd(b, 3, 3, [(2, "pass", "win"), (5, "dont_pass", "lose")])  # point made
    b.bet(2)
    b.bet(5, "dont_pass")
    point_six(b)
    rnd(b, 3, 4, [(2, "pass", "lose"), (5, "dont_pass", "win")])  # 7 Out
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_dont_pass_wrong_on_a_seven_out_fires(tmp_path, rs):
    b = table(s5=["dont_pass"])
    point_six(b)
    rnd(b, 3, 4)
    b.settle(2, "pass", "lose")
    settle = b.settle(5, "dont_pass", "lose")
    assert fam(b, tmp_path, rs) == {("settle.wrong_outcome", T, settle)}


def _bar_two(tmp_path):
    path = tmp_path / "bar2.toml"
    path.write_text('[ruleset]\nid = "bar2"\ntitle = "bar 2"\nstatus = "verified"\n'
                    'extends = "nz-table-games"\n\n[ruleset.parameters]\nbar_number = 2\n',
                    encoding="utf-8")
    return str(path)


def test_bar_two_ruleset_parameter(tmp_path):
    rs = _bar_two(tmp_path)
    b = table(s5=["dont_pass"])
    rnd(b, 1, 1, [(2, "pass", "lose"), (5, "dont_pass", "push")])  # 2 is barred
    b.bet(2)
    rnd(b, 6, 6, [(2, "pass", "lose"), (5, "dont_pass", "win")])  # 12 wins
    assert fam(b, tmp_path, rs) == set()
    # The same log under the default bar 12 is wrong twice.
    f = fam(b, tmp_path, "nz-table-games")
    assert {c for c, _, _ in f} == {"settle.wrong_outcome"} and len(f) == 2


# --- come and don't come ----------------------------------------------------------------


@pytest.mark.parametrize("rs", OUTCOME_RS)
@pytest.mark.parametrize("number", [5, 6])
@pytest.mark.parametrize("named", [True, False], ids=["come_N", "come"])
def test_come_bet_travels_to_its_number_and_wins_there(tmp_path, rs, number, named):
    b = table()
    b.roll(2, 4, 4)  # the point is 8
    b.call(8)
    b.bet(5, "come")
    rnd(b, number - 1, 1)  # the come bet travels to its number
    name = f"come_{number}" if named else "come"
    rnd(b, number - 2, 2, [(5, name, "win")])  # the number again: it wins (either name)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_come_bet_settled_under_the_wrong_number_fires(tmp_path, rs):
    b = table()
    point_six(b)
    b.bet(5, "come")
    rnd(b, 4, 1)  # travels to 5
    roll = b.roll(2, 2, 3)
    b.call(5)
    settle = b.settle(5, "come_6", "win", 10)  # it is on 5, not 6
    b.complete()  # (settlement said complete: the come_5 is missed, not pending)
    assert fam(b, tmp_path, rs) == expected(
        rs, ("settle.wrong_outcome", T, settle), ("settle.missing", T, roll))


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_come_bet_on_its_number_loses_on_seven(tmp_path, rs):
    b = table()
    point_six(b)
    b.bet(5, "come")
    rnd(b, 4, 1)  # travels to 5
    rnd(b, 3, 4, [(2, "pass", "lose"), (5, "come_5", "lose")])
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_come_bet_on_its_number_keeps_working_on_the_come_out(tmp_path, rs):
    b = table()
    point_six(b)
    b.bet(5, "come")
    rnd(b, 4, 1)  # travels to 5
    rnd(b, 3, 3, [(2, "pass", "win")])  # point made: come-out next
    b.bet(2)
    rnd(b, 3, 4, [(2, "pass", "win"), (5, "come", "lose")])  # come-out 7: come_5 loses
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
@pytest.mark.parametrize("d1,d2,outcome", [(3, 4, "win"), (5, 6, "win"), (1, 2, "lose"),
                                           (6, 6, "lose"), (1, 1, "lose")])
def test_untravelled_come_bet_decided_like_a_come_out(tmp_path, rs, d1, d2, outcome):
    b = table()
    point_six(b)
    b.bet(5, "come")
    pass_settle = [(2, "pass", "lose")] if d1 + d2 == 7 else []
    rnd(b, d1, d2, pass_settle + [(5, "come", outcome)])
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_untravelled_come_bet_settled_as_on_a_number_fires(tmp_path, rs):
    b = table()
    point_six(b)
    b.bet(5, "come")
    roll = rnd(b, 4, 1)  # travels to 5: nothing to settle
    assert fam(b, tmp_path, rs) == set()
    b.roll(2, 5, 6)
    b.call(11)
    settle = b.settle(5, "come_5", "win", 10)  # 11 does not decide a come bet on 5
    assert fam(b, tmp_path, rs) == {("settle.wrong_outcome", T, settle)}
    assert roll < settle


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_two_come_bets_one_travelled_on_a_seven(tmp_path, rs):
    """On a 7 the come bet on 5 loses and the new come bet wins."""
    b = table()
    point_six(b)
    b.bet(5, "come")
    rnd(b, 4, 1)  # travels to 5
    b.bet(5, "come")
    rnd(b, 3, 4, [(2, "pass", "lose"), (5, "come", "win"), (5, "come_5", "lose")])
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_dont_come(tmp_path, rs):
    b = table()
    point_six(b)
    b.bet(5, "dont_come")
    rnd(b, 4, 1)  # travels to 5
    b.bet(5, "dont_come")
    rnd(b, 6, 6, [(5, "dont_come", "push")])  # the new one pushes on the bar 12
    b.bet(5, "dont_come")
    # On 2 the pushed one (still standing) and the third both win.
    rnd(b, 1, 1, [(5, "dont_come", "win"), (5, "dont_come", "win")])
    b.bet(5, "dont_come")
    rnd(b, 3, 4, [(2, "pass", "lose"), (5, "dont_come_5", "win"), (5, "dont_come", "lose")])
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_dont_come_on_its_number_loses_when_it_repeats(tmp_path, rs):
    b = table()
    point_six(b)
    b.bet(5, "dont_come")
    rnd(b, 4, 1)
    rnd(b, 3, 2, [(5, "dont_come_5", "lose")])
    b.roll(2, 3, 4)
    b.call(7)
    b.settle(2, "pass", "lose")
    settle = b.settle(5, "dont_come_5", "win", 10)  # already lost: nothing left
    assert fam(b, tmp_path, rs) == {("settle.wrong_outcome", T, settle)}


# --- a cocked die and a ruling decide by the counted total -----------------------------


@pytest.mark.parametrize("rs", OUTCOME_RS)
@pytest.mark.parametrize("roll_face", [5, 2], ids=["roll-records-counted", "roll-records-resting"])
def test_settlement_follows_the_cocked_die(tmp_path, rs, roll_face):
    b = table()
    b.roll(2, roll_face, 2)  # A1 rests showing 2: counts 5; the total is 7
    cocked(b, "A1", 2)
    b.call(7)
    b.collect()
    b.settle(2, "pass", "win", 10)
    b.complete()
    b.pass_back(2)
    b.bet(2)
    rnd(b, 4, 2)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_settlement_by_the_resting_face_of_a_cocked_die_fires(tmp_path, rs):
    b = table()
    roll = b.roll(2, 2, 2)  # read as 4 ...
    cocked(b, "A1", 2)      # ... but A1 counts 5: a natural 7
    b.call(7)
    b.collect()
    b.complete()
    b.pass_back(2)
    rnd(b, 2, 2)  # the shooter throws on as if the point were 4
    settle = b.settle(2, "pass", "win", 10)
    assert fam(b, tmp_path, rs) == {("settle.missing", T, roll),
                                    ("settle.wrong_outcome", T, settle)}


@pytest.mark.parametrize("rs", OUTCOME_RS)
def test_settlement_follows_the_ruled_face(tmp_path, rs):
    b = table()
    b.roll(2, 3, 4)  # recorded 7 ...
    dispute(b, "A1", seat=2)
    ruling(b, "game_supervisor", face=5)  # ... ruled 5 + 4: the point is 9
    b.call(9)
    b.collect()
    b.complete()
    b.pass_back(2)
    rnd(b, 4, 5, [(2, "pass", "win")])
    assert fam(b, tmp_path, rs) == set()


# --- settle.missing ------------------------------------------------------------------------


@pytest.mark.parametrize("rs", MISSING_RS)
def test_decision_not_settled_before_the_next_roll_fires_at_the_deciding_roll(tmp_path, rs):
    b = table(s5=["dont_pass"])
    roll = rnd(b, 3, 4, [(2, "pass", "win")])  # the don't pass loss is never taken
    b.bet(2)
    rnd(b, 4, 2)
    assert fam(b, tmp_path, rs) == {("settle.missing", T, roll)}
    assert evidence_of(b, tmp_path, rs, "settle.missing")[roll] == {
        "unsettled": [{"seat": 5, "bet": "dont_pass", "outcome": "lose"}]}


@pytest.mark.parametrize("rs", MISSING_RS)
def test_decision_settled_is_quiet(tmp_path, rs):
    b = table(s5=["dont_pass"])
    rnd(b, 3, 4, [(2, "pass", "win"), (5, "dont_pass", "lose")])
    b.bet(2)
    rnd(b, 4, 2)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", MISSING_RS)
@pytest.mark.parametrize("close", [True, False], ids=["table_close", "end-of-log"])
def test_decision_not_settled_before_the_table_closes_fires(tmp_path, rs, close):
    b = table()
    point_six(b)
    roll = b.roll(2, 3, 4)
    b.call(7)
    if close:
        b.add("table_close", role="game_supervisor")
    # A log that ends without table_close ends mid-session: the settlement
    # still pending there is not judged (decision 92).
    assert fam(b, tmp_path, rs) == ({("settle.missing", T, roll)} if close else set())


@pytest.mark.parametrize("rs", MISSING_RS)
def test_travelled_come_bet_decision_unsettled_fires(tmp_path, rs):
    b = table()
    point_six(b)
    b.bet(5, "come")
    rnd(b, 4, 1)
    roll = rnd(b, 3, 4, [(2, "pass", "lose")])
    b.add("shooter_relinquish", role="player", seat=2, reason="seven_out")
    assert fam(b, tmp_path, rs) == {("settle.missing", T, roll)}
    assert evidence_of(b, tmp_path, rs, "settle.missing")[roll] == {
        "unsettled": [{"seat": 5, "bet": "come_5", "outcome": "lose"}]}


@pytest.mark.parametrize("rs", MISSING_RS)
def test_no_settlement_owed_on_a_void_roll(tmp_path, rs):
    b = table()
    b.roll(2, 3, 4, flags=f"{THROW},die_on_die")
    no_roll(b, "die_on_die")
    b.roll(2, 4, 2)
    b.call(6)
    assert fam(b, tmp_path, rs) == set()


# --- settle.void_roll ----------------------------------------------------------------------


@pytest.mark.parametrize("rs", VOID_RS)
def test_settlement_after_a_no_roll_fires_at_the_settlement(tmp_path, rs):
    b = table()
    roll = b.roll(2, 3, 4, flags=f"{THROW},die_off_table")
    no_roll(b, "die_off_table")
    settle = b.settle(2, "pass", "win", 10)
    # The void roll decided nothing, so the settlement is also against the dice.
    assert fam(b, tmp_path, rs) == {("settle.void_roll", T, settle),
                                    ("settle.wrong_outcome", T, settle)}
    assert evidence_of(b, tmp_path, rs, "settle.void_roll")[settle] == {"roll_seq": roll}


@pytest.mark.parametrize("rs", VOID_RS)
def test_settlement_after_a_void_ruling_fires(tmp_path, rs):
    b = table()
    b.roll(2, 3, 4)
    dispute(b, "A1", seat=2)
    ruling(b, "game_supervisor", "void")
    settle = b.settle(2, "pass", "win", 10)
    assert fam(b, tmp_path, rs) == {("settle.void_roll", T, settle),
                                    ("settle.wrong_outcome", T, settle)}


@pytest.mark.parametrize("rs", VOID_RS)
def test_proposition_bet_settled_after_a_no_roll_fires(tmp_path, rs):
    b = table()
    b.bet(5, "field")
    b.roll(2, 4, 5, flags=f"{THROW},on_bank_chips")
    no_roll(b, "on_bank_chips")
    settle = b.settle(5, "field", "win", 10)
    assert fam(b, tmp_path, rs) == {("settle.void_roll", T, settle)}


@pytest.mark.parametrize("rs", VOID_RS)
def test_settlement_then_no_roll_fires_at_the_settlement(tmp_path, rs):
    """Paid on the roll, then the roll declared void: settled on a void roll."""
    b = table()
    b.roll(2, 3, 4, flags=f"{THROW},die_on_die")
    b.call(7)
    settle = b.settle(2, "pass", "win", 10)
    no_roll(b, "die_on_die", flags="after_rest")
    assert fam(b, tmp_path, rs) == {("settle.void_roll", T, settle)}


@pytest.mark.parametrize("rs", VOID_RS)
def test_no_settlement_until_the_next_valid_roll_is_quiet(tmp_path, rs):
    b = table()
    b.roll(2, 3, 4, flags=f"{THROW},die_off_table")
    no_roll(b, "die_off_table")
    rnd(b, 3, 4, [(2, "pass", "win")])
    assert fam(b, tmp_path, rs) == set()
