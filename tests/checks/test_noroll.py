"""No roll, dispute and overrule checks (auditor/checks/noroll.py): each fires
on its breach and stays quiet on the lawful case beside it, under every
shipped ruleset with a rule using it. Findings are compared as the exact set
of the family's (code, table, seq)."""

import pytest
from builder import (
    THROW,
    dispute,
    evidence_of,
    found_family,
    lawful_table,
    no_roll,
    overrule,
    reopen,
    rulesets_with,
    ruling,
)

FAMILY = ("noroll", "dispute", "overrule")
T = "T1"
SEATS = (2, 5, 7)

MANDATORY = ["die_off_table", "die_on_die", "on_bank_chips", "in_bowl_or_rail",
             "multi_face_on_object", "fraudulent", "unapproved_die", "uncallable",
             "wrong_thrower"]


def fam(b, tmp_path, rs):
    return found_family(b, tmp_path, rs, FAMILY)


def _win_all(b):
    return [(s, "pass", "win", 10) for s in SEATS]


def _rebet(b):
    for s in SEATS:
        b.bet(s)


# --- noroll.missing: mandatory no roll ---------------------------------------------


@pytest.mark.parametrize("rs", rulesets_with("noroll.missing"))
@pytest.mark.parametrize("condition", MANDATORY)
def test_mandatory_no_roll_not_voided_and_settled_fires(tmp_path, rs, condition):
    b = lawful_table()
    seq = b.play(2, 3, 4, flags=f"{THROW},{condition}", settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == {("noroll.missing", T, seq)}
    assert evidence_of(b, tmp_path, rs, "noroll.missing")[seq] == {"conditions": [condition]}


@pytest.mark.parametrize("rs", rulesets_with("noroll.missing"))
@pytest.mark.parametrize("condition", MANDATORY)
def test_mandatory_no_roll_voided_is_quiet(tmp_path, rs, condition):
    b = lawful_table()
    b.roll(2, 3, 4, flags=f"{THROW},{condition}")
    no_roll(b, condition)
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", rulesets_with("noroll.missing"))
def test_mandatory_no_roll_voided_by_a_void_ruling_is_quiet(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 4, flags=f"{THROW},multi_face_on_object")
    dispute(b, "A1", seat=2)
    ruling(b, "game_supervisor", "void")
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", rulesets_with("noroll.missing"))
def test_roll_that_only_touched_chips_stands(tmp_path, rs):
    b = lawful_table()
    b.play(2, 3, 4, flags=f"{THROW},chips_contact", settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", rulesets_with("noroll.missing"))
def test_mandatory_no_roll_not_voided_with_nothing_settled_is_quiet(tmp_path, rs):
    """The catalogue's breach is 'not voided *and* wagers settled on it'."""
    b = lawful_table()
    b.play(2, 4, 2, flags=f"{THROW},die_on_die")  # point 6: nothing decided
    b.play(2, 5, 4)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", rulesets_with("noroll.missing"))
def test_mandatory_no_roll_with_a_proposition_bet_settled_fires(tmp_path, rs):
    """Any wager settled on the roll counts, not only line bets."""
    b = lawful_table()
    b.bet(5, "field")
    seq = b.roll(2, 4, 5, flags=f"{THROW},on_bank_chips")  # point 9; field wins on 9
    b.call(9)
    b.collect()
    b.settle(5, "field", "win", 10)
    b.complete()
    b.pass_back(2)
    assert fam(b, tmp_path, rs) == {("noroll.missing", T, seq)}


@pytest.mark.parametrize("rs", rulesets_with("noroll.missing"))
def test_mandatory_no_roll_fires_on_the_roll_settled_only(tmp_path, rs):
    b = lawful_table()
    b.play(2, 4, 2, flags=f"{THROW},die_off_table")  # point 6, nothing settled
    seq = b.play(2, 5, 1, flags=f"{THROW},die_on_die", settlements=_win_all(b))
    _rebet(b)
    b.play(2, 5, 6, settlements=_win_all(b))  # a lawful natural after it
    assert fam(b, tmp_path, rs) == {("noroll.missing", T, seq)}


# --- noroll.improper: chips other than the bank -----------------------------------


@pytest.mark.parametrize("rs", rulesets_with("noroll.improper"))
def test_no_roll_for_chips_contact_fires(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 4, flags=f"{THROW},chips_contact")
    seq = no_roll(b, "chips_contact")
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == {("noroll.improper", T, seq)}


@pytest.mark.parametrize("rs", rulesets_with("noroll.improper"))
def test_no_roll_for_bank_chips_is_proper(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 4, flags=f"{THROW},on_bank_chips")
    no_roll(b, "on_bank_chips")
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", rulesets_with("noroll.improper"))
@pytest.mark.parametrize("ground", ["die_on_die", "short"])
def test_chips_contact_no_roll_of_a_roll_with_another_ground_is_quiet(tmp_path, rs, ground):
    """Not 'only because' of the chips: the roll was void (6.4) or voidable (6.5)."""
    b = lawful_table()
    flags = "one_hand,simultaneous,short" if ground == "short" else f"{THROW},{ground}"
    b.roll(2, 3, 4, flags=f"{flags},chips_contact")
    no_roll(b, "chips_contact")
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", rulesets_with("noroll.improper"))
@pytest.mark.parametrize("rolled_first", [False, True])
def test_chips_contact_no_roll_is_about_a_roll_of_its_own_session(tmp_path, rs, rolled_first):
    """The roll a no roll is about is the last of its session: after the
    table closed and opened again, the last session's roll (void anyway, die
    on die) is not it; with a roll of its own session so grounded, quiet."""
    b = lawful_table()
    b.roll(2, 3, 4, flags=f"{THROW},die_on_die,chips_contact")
    no_roll(b, "die_on_die")
    reopen(b)
    if rolled_first:
        b.roll(2, 3, 4, flags=f"{THROW},die_on_die,chips_contact")
    seq = no_roll(b, "chips_contact")
    b.play(2, 3, 4, settlements=_win_all(b))
    expected = set() if rolled_first else {("noroll.improper", T, seq)}
    assert fam(b, tmp_path, rs) == expected


# --- noroll.late ---------------------------------------------------------------------


@pytest.mark.parametrize("rs", rulesets_with("noroll.late"))
def test_no_roll_after_rest_fires(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 4, flags="one_hand,simultaneous,short")
    seq = no_roll(b, "short", flags="after_rest")
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == {("noroll.late", T, seq)}


@pytest.mark.parametrize("rs", rulesets_with("noroll.late"))
@pytest.mark.parametrize("flags", ["before_rest", ""], ids=["before_rest", "not-recorded"])
def test_no_roll_before_rest_is_quiet(tmp_path, rs, flags):
    b = lawful_table()
    b.roll(2, 3, 4, flags="one_hand,simultaneous,short")
    no_roll(b, "short", flags=flags)
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == set()


# --- noroll.wrong_role ------------------------------------------------------------------


@pytest.mark.parametrize("rs", rulesets_with("noroll.wrong_role"))
@pytest.mark.parametrize("role", ["dealer", "pit_manager", "player"])
def test_no_roll_by_another_role_fires(tmp_path, rs, role):
    b = lawful_table()
    b.roll(2, 3, 4, flags=f"{THROW},die_on_die")
    seq = no_roll(b, "die_on_die", role=role)
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == {("noroll.wrong_role", T, seq)}


@pytest.mark.parametrize("rs", rulesets_with("noroll.wrong_role"))
# (the boxperson: the game supervisor's position by its other name)
@pytest.mark.parametrize("role", ["stickperson", "game_supervisor", "boxperson"])
def test_no_roll_by_stickperson_or_game_supervisor_is_quiet(tmp_path, rs, role):
    b = lawful_table()
    b.roll(2, 3, 4, flags=f"{THROW},die_on_die")
    no_roll(b, "die_on_die", role=role)
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", rulesets_with("noroll.wrong_role"))
def test_discretionary_no_roll_by_game_supervisor_is_quiet(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 4)
    no_roll(b, "discretion", role="game_supervisor")
    b.play(2, 3, 4, settlements=_win_all(b))
    assert fam(b, tmp_path, rs) == set()


# --- dispute.wrong_role -----------------------------------------------------------------


def _lawful_ruler(rs):
    from auditor.rules.ruleset import load_ruleset

    return load_ruleset(rs).parameters["dispute_roles"][0]


@pytest.mark.parametrize("rs", rulesets_with("dispute.wrong_role"))
@pytest.mark.parametrize("decision", [("face_determined", 5), ("void", None)],
                         ids=["face", "void"])
def test_dispute_ruled_by_the_empowered_role_is_quiet(tmp_path, rs, decision):
    reason, face = decision
    b = lawful_table()
    b.roll(2, 3, 4)
    dispute(b, "A1", seat=2)
    ruling(b, _lawful_ruler(rs), reason, face)
    if reason == "void":
        b.play(2, 4, 2)
    else:
        b.call(9)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", rulesets_with("dispute.wrong_role"))
@pytest.mark.parametrize("decision", [("face_determined", 5), ("void", None)],
                         ids=["face", "void"])
def test_dispute_ruled_by_the_stickperson_fires(tmp_path, rs, decision):
    reason, face = decision
    b = lawful_table()
    b.roll(2, 3, 4)
    dispute(b, "A1", seat=2)
    seq = ruling(b, "stickperson", reason, face)
    if reason == "void":
        b.play(2, 4, 2)
    else:
        b.call(9)
    assert fam(b, tmp_path, rs) == {("dispute.wrong_role", T, seq)}


def test_game_supervisor_ruling_is_the_box_persons_in_south_dakota(tmp_path):
    """SD 20:18:33:11: the box person or pit supervisor, not the dealer,
    decides; the log's game supervisor is the box person's position (the
    spec's "game supervisor (boxperson)"), so its ruling is not a breach."""
    b = lawful_table()
    b.roll(2, 3, 4)
    dispute(b, "A1", seat=2)
    ruling(b, "game_supervisor", face=5)
    b.call(9)
    dispute(b, "A1", seat=2)
    pit = ruling(b, "pit_manager", face=5)
    dispute(b, "A1", seat=2)
    dealer = ruling(b, "dealer", face=5)
    assert fam(b, tmp_path, "sd-20-18-33") == {("dispute.wrong_role", T, dealer)}
    # R 6.3 and NZ 5.5(d) name the game supervisor alone (and so its boxperson).
    assert fam(b, tmp_path, "nz-table-games") == {("dispute.wrong_role", T, pit),
                                                  ("dispute.wrong_role", T, dealer)}


def test_boxperson_ruling_is_the_game_supervisors_under_the_seed(tmp_path):
    b = lawful_table()
    b.roll(2, 3, 4)
    dispute(b, "A1", seat=2)
    ruling(b, "boxperson", face=5)
    b.call(9)
    for rs in ("nz-table-games", "nz-1996", "sd-20-18-33"):
        assert fam(b, tmp_path, rs) == set(), rs


# --- overrule.authority ---------------------------------------------------------------------


@pytest.mark.parametrize("rs", rulesets_with("overrule.authority"))
@pytest.mark.parametrize("who,whom", [
    ("game_supervisor", "stickperson"),
    ("pit_manager", "stickperson"),
    ("pit_manager", "game_supervisor"),
    ("casino_manager", "game_supervisor"),
    ("casino_manager", "pit_manager"),
    ("casino_manager", "casino_manager"),  # a more senior manager over a less senior one
    ("boxperson", "stickperson"),  # the game supervisor's position by its other name
    ("pit_manager", "boxperson"),
])
def test_overrule_with_authority_is_quiet(tmp_path, rs, who, whom):
    b = lawful_table()
    b.roll(2, 3, 5)
    b.call(9)
    overrule(b, who, whom)
    b.call(8)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", rulesets_with("overrule.authority"))
@pytest.mark.parametrize("who,whom", [
    ("dealer", "stickperson"),
    ("boxperson", "pit_manager"),
    ("stickperson", "game_supervisor"),
    ("game_supervisor", "pit_manager"),
    ("game_supervisor", "game_supervisor"),
    ("pit_manager", "casino_manager"),
])
def test_overrule_without_authority_fires(tmp_path, rs, who, whom):
    b = lawful_table()
    b.roll(2, 3, 5)
    b.call(9)
    seq = overrule(b, who, whom)
    b.call(8)
    assert fam(b, tmp_path, rs) == {("overrule.authority", T, seq)}
