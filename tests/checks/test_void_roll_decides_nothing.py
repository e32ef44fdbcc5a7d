"""Issue 25, reading 1: a void roll (voided by a `no_roll`, or a `ruling` of
`void`, before the next roll) is not a valid roll (spec, "Game state the
auditor derives"), so it is never a 7 Out, a point made or a come-out
natural. Each case is played into a long generated night; the firing twin
has the same total on a valid roll, the quiet twin has it voided."""

import pytest
from night import Night, found_in

from auditor.generate.session import NORMAL_THROW

VOID = ("no_roll", "ruling")


#: Faces of a 3: never a 7 nor a point made, and craps on the come-out.
THREE = (1, 2)


# --- seed 000 6.1: the lost-die allowance ends at a 7 Out, not a void 7 -------

#: Dice lost to call for a new set: the seed's 6.1 any; NSW 3.6 two.
LOST = {"nz-table-games": 1, "nsw-1992": 2}


def lose_dice(n: Night, lost: int) -> tuple[int, tuple[str, ...]]:
    """The shooter's `lost` dice leave the table (a no roll) and are not
    found; the shooter chooses from the remaining dice offered; a new set is
    placed, inspected, and the old set's dice in the bowl removed (6.1).
    Returns the `die_lost` seq and the shooter's pair (old-set dice)."""
    sim = n.sim
    seat, pair, old = sim.shooter, sim.pair, list(sim.dice_set)
    n.throw(2, 3, flags=NORMAL_THROW + ",die_off_table")
    n.ev("no_roll", "stickperson", reason="die_off_table", flags="before_rest")
    gone, kept = pair[:lost], pair[lost:]
    n.ev("die_off_table", "stickperson", dice=",".join(gone))
    bowl = [d for d in old if d not in pair]
    n.ev("dice_offered", "stickperson", seat, dice=",".join([*kept, *bowl]))
    new_pair = (*kept, *bowl[:lost])
    n.ev("dice_selected", "player", seat, dice=",".join(new_pair))
    rest = bowl[lost:]
    n.ev("dice_to_bowl", "stickperson", dice=",".join(rest))
    lost_seq = n.ev("die_lost", "stickperson", dice=",".join(gone))
    sim.pair, sim.pair_text = new_pair, ",".join(new_pair)
    sim._new_set(replacement=False)
    n.ev("dice_removed", "game_supervisor", dice=",".join(rest))
    return lost_seq, new_pair


@pytest.mark.parametrize("ruleset", sorted(LOST))
@pytest.mark.parametrize("how", VOID)
def test_a_void_seven_does_not_end_the_lost_die_allowance(tmp_path, ruleset, how):
    def night(seven_voided: bool):
        n = Night(seed=2501)
        n.until(lambda s: s.point)
        lost, pair = lose_dice(n, LOST[ruleset])
        n.valid(*THREE)  # the shooter plays on with the old dice
        seat = n.shooter
        if seven_voided:
            n.void(3, 4, how)  # a 7 with the point on, voided: no 7 Out
            n.valid(*THREE)
            seven = n.valid(3, 4, new_wagers=False, pass_back=False)  # the 7 Out
            n.give_up("seven_out", removed=pair)
            return n, lost, seven
        n.valid(3, 4, new_wagers=False)  # a valid 7: a 7 Out, settled
        n.sim._place(seat, *n.sim.pref[seat])
        again = n.valid(4, 5)  # old dice after the allowance, and after a 7 Out
        n.give_up("voluntary", removed=pair)
        return n, lost, again

    n, _, _ = night(seven_voided=True)
    assert found_in(n.finish(tmp_path / "voided.csv"), ruleset) == set()
    n, lost, again = night(seven_voided=False)
    assert found_in(n.finish(tmp_path / "valid.csv"), ruleset) == {
        ("dice.lost_die_procedure", "T01", lost),
        ("dice.lost_die_procedure", "T01", again),
        ("shooter.kept_after_seven_out", "T01", again)}


# --- the shooter's obligation to pass after a 7 Out ---------------------------

@pytest.mark.parametrize("ruleset", ["nz-table-games", "nz-1996", "sd-20-18-33", "nsw-1992"])
@pytest.mark.parametrize("how", VOID)
def test_a_void_seven_is_no_seven_out(tmp_path, ruleset, how):
    offer_role = "dealer" if ruleset == "nz-1996" else "stickperson"

    def night(seven_voided: bool):
        n = Night(seed=2502, offer_role=offer_role)
        n.until(lambda s: s.point)
        seat = n.shooter
        if seven_voided:
            n.void(3, 4, how)
            again = n.valid(*THREE)  # the shooter throws on: lawful
            n.seven_out()
            return n, again
        n.valid(3, 4, new_wagers=False)  # the 7 Out, settled; the dice back to the shooter
        n.sim._place(seat, *n.sim.pref[seat])
        again = n.valid(*THREE)
        n.give_up("voluntary")
        return n, again

    n, _ = night(seven_voided=True)
    assert found_in(n.finish(tmp_path / "voided.csv"), ruleset) == set()
    n, again = night(seven_voided=False)
    assert found_in(n.finish(tmp_path / "valid.csv"), ruleset) == {
        ("shooter.kept_after_seven_out", "T01", again)}


# --- SD 20:18:33:08(2): a void roll of the point makes no "previous shooter" ----

@pytest.mark.parametrize("how", VOID)
def test_a_void_roll_of_the_point_makes_no_previous_shooter(tmp_path, how):
    """A don't pass shooter takes the bet down with the point on (lawful
    under SD's come-out eligibility) and throws the point: made, they are
    the previous shooter of (2), and their next throw without a line bet and
    without the marker breaks (2) and the eligibility rule; voided, the point
    is still on and that throw breaks nothing."""
    ruleset = "sd-20-18-33"

    def night(point_voided: bool):
        n = Night(seed=2503)
        n.until(lambda s: s.point and "dont_pass" in s.wagers[s.shooter]
                and "pass" not in s.wagers[s.shooter])
        sim, seat = n.sim, n.shooter
        n.ev("wager_removed", "player", seat, bet="dont_pass",
             amount=sim.wagers[seat].pop("dont_pass"))
        if point_voided:
            n.void(*n.point_total(), how)
        else:
            n.valid(*n.point_total(), reline_shooter=False)
        again = n.valid(1, 2, new_wagers=False)  # no line bet, no marker
        n.give_up("voluntary")
        return n, again

    n, _ = night(point_voided=True)
    assert found_in(n.finish(tmp_path / "voided.csv"), ruleset) == set()
    n, again = night(point_voided=False)
    assert found_in(n.finish(tmp_path / "valid.csv"), ruleset) == {
        ("shooter.ineligible", "T01", again), ("shooter.marker_off_throw", "T01", again)}


# --- seed 000 5.11: a void come-out natural is no determination -----------------

def everyone_declines(n: Night) -> int:
    """A 7 Out; every other player is offered the dice and declines (the
    outgoing shooter does not count as available): the stickperson throws.
    Returns the outgoing shooter's seat."""
    sim = n.sim
    n.valid(3, 4, new_wagers=False, pass_back=False)
    out = n.shooter
    n.ev("shooter_relinquish", "player", out, reason="seven_out")
    sim.shooter = 0
    sim._line_bets_for_all()
    for s in n.others_clockwise(out):
        n.ev("dice_offered", "stickperson", s, dice=",".join(sim.dice_set))
        n.ev("dice_declined", "player", s)
    return out


def stick_void(n: Night, d1: int, d2: int, how: str) -> int:
    """The stickperson's throw, voided as a player's would be."""
    sim = n.sim
    seq = n.ev("roll", "stickperson", dice=sim.pair_text, die1=d1, die2=d2, flags=NORMAL_THROW)
    if how == "no_roll":
        n.ev("no_roll", "stickperson", reason="discretion", flags="before_rest")
    else:
        n.ev("dispute", "player", sim.order[0], dice=sim.pair[0])
        n.ev("ruling", "game_supervisor", reason="void")
    n.ev("dice_collected", "stickperson", dice=sim.pair_text, flags="stick")
    return seq


@pytest.mark.parametrize("how", VOID)
def test_a_void_come_out_natural_is_no_determination(tmp_path, how):
    """The stickperson throws only until a determination (seed 000 5.11): a
    come-out 11 that wins the pass bets is one; voided, it is not, and the
    stickperson throws on."""
    ruleset = "nz-table-games"

    def night(natural_voided: bool):
        n = Night(seed=2504)
        n.until(lambda s: s.point)
        out = everyone_declines(n)
        if natural_voided:
            stick_void(n, 5, 6, how)
            again = n.stick_valid(5, 6)  # the determination
        else:
            n.stick_valid(5, 6)  # the determination
            again = n.stick_valid(1, 2)
        # The round goes on from the last refusal: the outgoing shooter, then
        # the table's own round from their left.
        n.sim._line_bets_for_all()
        n.ev("dice_offered", "stickperson", out, dice=",".join(n.sim.dice_set))
        n.ev("dice_declined", "player", out)
        n.sim._between_hands(out)
        return n, again

    n, _ = night(natural_voided=True)
    assert found_in(n.finish(tmp_path / "voided.csv"), ruleset) == set()
    n, again = night(natural_voided=False)
    assert found_in(n.finish(tmp_path / "valid.csv"), ruleset) == {
        ("shooter.stickperson_throw", "T01", again)}
