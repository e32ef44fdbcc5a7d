"""Throw and call checks (auditor/checks/throw_call.py): each fires on its
breach and stays quiet on the lawful case beside it, under every shipped
ruleset with a rule using it. Findings are compared as the exact set of the
family's (code, table, seq)."""

import pytest
from builder import (
    LogBuilder,
    cocked,
    dispute,
    evidence_of,
    expected,
    found_family,
    lawful_table,
    no_roll,
    overrule,
    ruling,
)

FAMILY = ("throw", "call")
T = "T1"


def fam(b, tmp_path, rs):
    return found_family(b, tmp_path, rs, FAMILY)


def cases(code, *extra):
    """(ruleset, *extra) for every shipped ruleset enforcing `code`."""
    from builder import rulesets_with

    return [(rs, *extra) for rs in rulesets_with(code)]


# --- the throw ---------------------------------------------------------------

#: code, the faulty flag, the throw flags with that fault
FAULTS = [
    ("throw.two_hands", "two_hands", "two_hands,simultaneous,far_end"),
    ("throw.not_simultaneous", "not_simultaneous", "one_hand,not_simultaneous,far_end"),
    ("throw.short", "short", "one_hand,simultaneous,short"),
]
FAULT_CASES = [(rs, code, reason, flags) for code, reason, flags in FAULTS
               for (rs,) in cases(code)]


@pytest.mark.parametrize("rs,code,reason,flags", FAULT_CASES)
def test_throw_fault_that_stood_fires(tmp_path, rs, code, reason, flags):
    b = lawful_table()
    seq = b.play(2, 4, 2, flags=flags)  # point 6: nothing to settle
    assert fam(b, tmp_path, rs) == {(code, T, seq)}


@pytest.mark.parametrize("rs,code,reason,flags", FAULT_CASES)
def test_throw_fault_on_a_later_roll_fires_there_only(tmp_path, rs, code, reason, flags):
    b = lawful_table()
    b.play(2, 4, 2)
    seq = b.play(2, 5, 3, flags=flags)
    b.play(2, 5, 4)
    assert fam(b, tmp_path, rs) == {(code, T, seq)}


@pytest.mark.parametrize("rs,code,reason,flags", FAULT_CASES)
def test_throw_fault_voided_by_a_no_roll_is_quiet(tmp_path, rs, code, reason, flags):
    b = lawful_table()
    b.roll(2, 4, 2, flags=flags)
    no_roll(b, reason)  # R 6.5: the stickperson voids the improper throw
    b.play(2, 4, 2)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs,code,reason,flags", FAULT_CASES)
def test_throw_fault_voided_by_a_void_ruling_is_quiet(tmp_path, rs, code, reason, flags):
    b = lawful_table()
    b.roll(2, 4, 2, flags=flags)
    dispute(b, "A1", seat=2)
    ruling(b, _supervisor(rs), "void")
    b.play(2, 4, 2)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("throw.short")])
def test_lawful_throw_is_quiet(tmp_path, rs):
    b = lawful_table()
    b.play(2, 4, 2)
    b.play(2, 1, 1, flags="simultaneous,far_end,one_hand")  # any order of the flags
    b.play(2, 3, 3, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    assert fam(b, tmp_path, rs) == set()


def test_several_faults_on_one_roll_each_fire(tmp_path):
    b = lawful_table()
    seq = b.play(2, 4, 2, flags="two_hands,not_simultaneous,short")
    assert fam(b, tmp_path, "nz-table-games") == {
        ("throw.two_hands", T, seq), ("throw.not_simultaneous", T, seq),
        ("throw.short", T, seq)}
    # SD reads no one-hand rule.
    assert fam(b, tmp_path, "sd-20-18-33") == {
        ("throw.not_simultaneous", T, seq), ("throw.short", T, seq)}


def test_include_voided_rolls_counts_the_fault_on_a_voided_roll(tmp_path):
    ruleset = tmp_path / "strict.toml"
    ruleset.write_text(
        '[ruleset]\nid = "strict"\ntitle = "strict"\nstatus = "verified"\n'
        'extends = "nz-table-games"\n\n'
        '[[rule]]\nid = "R5.5-one-hand"\nparams = { include_voided_rolls = true }\n',
        encoding="utf-8")
    b = lawful_table()
    seq = b.roll(2, 4, 2, flags="two_hands,not_simultaneous,far_end")
    no_roll(b, "two_hands")
    b.play(2, 4, 2)
    # Only the rule with the parameter set counts the voided roll.
    assert fam(b, tmp_path, str(ruleset)) == {("throw.two_hands", T, seq)}
    assert fam(b, tmp_path, "nz-table-games") == set()


# --- the call ------------------------------------------------------------------


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.missing")])
def test_call_missing_fires_at_the_roll(tmp_path, rs):
    b = lawful_table()
    seq = b.roll(2, 4, 2)
    b.collect()
    b.pass_back(2)
    b.play(2, 5, 3)
    assert fam(b, tmp_path, rs) == {("call.missing", T, seq)}


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.missing")])
def test_call_missing_on_the_last_roll_of_the_log(tmp_path, rs):
    b = lawful_table()
    b.play(2, 4, 2)
    seq = b.roll(2, 5, 3)
    assert fam(b, tmp_path, rs) == {("call.missing", T, seq)}


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.missing")])
def test_call_present_is_quiet(tmp_path, rs):
    b = lawful_table()
    b.play(2, 4, 2)
    b.play(2, 5, 3)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.missing")])
def test_no_call_needed_after_a_no_roll(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 4, 2, flags="one_hand,simultaneous,far_end,die_on_die")
    no_roll(b, "die_on_die")
    b.play(2, 4, 2)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
def test_wrong_total_fires_at_the_call(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 5)
    call = b.call(9)
    b.collect()
    b.pass_back(2)
    assert fam(b, tmp_path, rs) == {("call.wrong_total", T, call)}
    assert evidence_of(b, tmp_path, rs, "call.wrong_total")[call]["counted"] == 8


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
def test_right_total_is_quiet(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 5)
    b.call(8)
    b.collect()
    b.pass_back(2)
    assert fam(b, tmp_path, rs) == set()


# --- a cocked die: the face opposite the resting one counts (R 6.2, NZ 5.5(c)) --


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
@pytest.mark.parametrize("roll_face", [5, 2], ids=["roll-records-counted", "roll-records-resting"])
def test_cocked_die_called_by_its_counted_face_is_lawful(tmp_path, rs, roll_face):
    b = lawful_table()
    b.roll(2, roll_face, 2)  # A1 rests on chips showing 2: it counts 5
    cocked(b, "A1", 2)
    b.call(7)
    b.collect()
    b.pass_back(2)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
@pytest.mark.parametrize("roll_face", [5, 2], ids=["roll-records-counted", "roll-records-resting"])
def test_cocked_die_called_by_its_resting_face_fires(tmp_path, rs, roll_face):
    b = lawful_table()
    b.roll(2, roll_face, 2)
    cocked(b, "A1", 2)
    call = b.call(4)  # 2 + 2: the resting face read as uppermost
    b.collect()
    b.pass_back(2)
    assert fam(b, tmp_path, rs) == {("call.wrong_total", T, call)}
    ev = evidence_of(b, tmp_path, rs, "call.wrong_total")[call]
    assert (ev["called"], ev["counted"]) == (4, 7)


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
def test_both_dice_cocked(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 1, 1)
    cocked(b, "A1", 1)  # counts 6
    cocked(b, "A2", 3)  # counts 4
    call = b.call(2)
    b.call(10)
    assert fam(b, tmp_path, rs) == {("call.wrong_total", T, call)}


# --- a disputed face ------------------------------------------------------------


def _supervisor(rs):
    from auditor.rules.ruleset import load_ruleset

    return load_ruleset(rs).parameters["dispute_roles"][0]


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
def test_call_follows_the_face_ruled_in_a_dispute(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 4)
    dispute(b, "A1", seat=2)
    ruling(b, _supervisor(rs), face=5)  # A1 ruled 5: the total is 9
    b.call(9)
    b.collect()
    b.pass_back(2)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
def test_call_of_the_face_overturned_in_a_dispute_fires(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 4)
    dispute(b, "A1", seat=2)
    ruling(b, _supervisor(rs), face=5)
    call = b.call(7)
    b.collect()
    b.pass_back(2)
    assert fam(b, tmp_path, rs) == {("call.wrong_total", T, call)}


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.missing")])
def test_roll_ruled_void_needs_no_call(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 4)
    dispute(b, "A2", seat=2)
    ruling(b, _supervisor(rs), "void")
    b.play(2, 4, 2)
    assert fam(b, tmp_path, rs) == set()


# --- an overrule stays in the evidence of the wrong call ------------------------


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
def test_wrong_call_overruled_still_fires_with_the_overrule_in_evidence(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 3, 5)
    call = b.call(9)
    over = overrule(b, "game_supervisor", "stickperson")
    b.call(8)
    b.collect()
    b.pass_back(2)
    assert fam(b, tmp_path, rs) == {("call.wrong_total", T, call)}
    ev = evidence_of(b, tmp_path, rs, "call.wrong_total")[call]
    assert ev["overruled_by"] == {"seq": over, "role": "game_supervisor"}
    assert (ev["called"], ev["counted"]) == (9, 8)


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
def test_overrule_of_an_earlier_roll_is_not_attached_to_a_later_call(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 4, 2)
    b.call(6)
    overrule(b, "game_supervisor", "stickperson")
    b.roll(2, 3, 5)
    call = b.call(9)
    assert fam(b, tmp_path, rs) == {("call.wrong_total", T, call)}
    assert "overruled_by" not in evidence_of(b, tmp_path, rs, "call.wrong_total")[call]


# --- who calls ------------------------------------------------------------------


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_role")])
def test_call_by_a_dealer_fires(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 4, 2)
    call = b.call(6, role="dealer")
    b.collect()
    b.pass_back(2)
    # The total was called (no call.missing) and was right; only the caller is wrong.
    assert fam(b, tmp_path, rs) == {("call.wrong_role", T, call)}


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_role")])
def test_call_by_the_stickperson_is_quiet(tmp_path, rs):
    b = lawful_table()
    b.play(2, 4, 2)
    assert fam(b, tmp_path, rs) == set()


@pytest.mark.parametrize("rs", [rs for (rs,) in cases("call.wrong_total")])
def test_wrong_total_by_a_dealer_gives_both_findings(tmp_path, rs):
    b = lawful_table()
    b.roll(2, 4, 2)
    call = b.call(5, role="dealer")
    assert fam(b, tmp_path, rs) == expected(
        rs, ("call.wrong_total", T, call), ("call.wrong_role", T, call))


# --- tables are independent -------------------------------------------------------


def test_two_tables_are_judged_apart(tmp_path):
    """A roll not called at the end of T1 is missing even though T2 calls one."""
    b1 = lawful_table()
    miss = b1.roll(2, 4, 2)
    b2 = LogBuilder("T2")
    b2.open()
    for s in (2, 5, 7):
        b2.bet(s)
    b2.offer(2)
    b2.accept(2)
    b2.roll(2, 4, 2)
    b2.call(6)
    b1.rows.extend(b2.rows)
    assert fam(b1, tmp_path, "nz-table-games") == {("call.missing", T, miss)}


def test_overrule_at_another_table_is_not_attached_to_the_call(tmp_path):
    b1 = lawful_table()
    b1.roll(2, 3, 5)
    call = b1.call(9)  # T1's last event: a wrong call, never overruled
    b2 = LogBuilder("T2")
    b2.open()
    overrule(b2, "game_supervisor", "stickperson")
    b1.rows.extend(b2.rows)
    assert fam(b1, tmp_path, "nz-table-games") == {("call.wrong_total", T, call)}
    assert "overruled_by" not in evidence_of(b1, tmp_path, "nz-table-games",
                                             "call.wrong_total")[call]
