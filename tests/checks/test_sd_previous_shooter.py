"""Issue 25, readings 2 and 3: S.D. Admin. R. 20:18:33:08(2), the previous
shooter who throws without a pass or don't pass bet, played into long
generated nights under the SD ruleset.

(2): a shooter who has made the come-out point and places no new line bet,
with come or don't come wagers left, is offered round the table; if nobody
else will shoot, the previous shooter throws "only for the purpose of
effecting a decision on the remaining come or don't come wagers", with the
on/off marker off on the don't pass line. "Once the remaining come or don't
come wagers have been decided ... the game shall proceed in accordance with
this chapter." A throw outside those conditions breaks (2)
(`shooter.marker_off_throw`) and is an ineligible shooter's
(`shooter.ineligible`): the catalogue's own example of one event, two
findings."""

import pytest
from night import Night, found_in

SD = "sd-20-18-33"
COME = ("come_", "dont_come_")


def come_wagers(sim) -> list[tuple[int, str]]:
    """(seat, bet) of every come and don't come wager on the layout."""
    return [(s, b) for s, w in sim.wagers.items() for b in w
            if b.startswith(COME) or b in ("come", "dont_come")]


def makes_the_point_and_stops_betting(n: Night) -> int:
    """The shooter makes the point and places no new line bet; nobody else
    holds one either (no other player will shoot). Returns the seat."""
    sim, seat = n.sim, n.shooter
    n.valid(*n.point_total(), reline_shooter=False)
    for s in list(sim.order):
        for bet in ("pass", "dont_pass"):
            if bet in sim.wagers[s]:
                n.ev("wager_removed", "player", s, bet=bet, amount=sim.wagers[s].pop(bet))
    assert come_wagers(sim)
    return seat


def offer_round_comes_back(n: Night, seat: int, relinquished: bool,
                           reason: str = "voluntary") -> int:
    """The dice offered round the table from the left of the previous
    shooter, every other player declining, and accepted again by the
    previous shooter (with or without a `shooter_relinquish` recorded
    first). Returns the seq of the acceptance."""
    sim = n.sim
    if relinquished:
        n.ev("shooter_relinquish", "player", seat, reason=reason)
    full = ",".join(sim.dice_set)
    for s in n.others_clockwise(seat):
        n.ev("dice_offered", "stickperson", s, dice=full)
        n.ev("dice_declined", "player", s)
    n.ev("dice_offered", "stickperson", seat, dice=full)
    accepted = n.ev("dice_accepted", "player", seat)
    n.ev("dice_selected", "player", seat, dice=sim.pair_text)
    n.ev("dice_to_bowl", "stickperson",
         dice=",".join(d for d in sim.dice_set if d not in sim.pair))
    return accepted


MARKERS = {
    "off on the don't pass line": {"outcome": "off", "flags": "dont_pass_line"},
    "no marker": None,
    "off elsewhere": {"outcome": "off"},
    "on, on the don't pass line": {"outcome": "on", "flags": "dont_pass_line"},
}


# --- reading 2: the dice come back to the previous shooter through the offer round ---

@pytest.mark.parametrize("relinquished", [False, True], ids=["offered", "relinquished"])
@pytest.mark.parametrize("marker", list(MARKERS))
def test_previous_shooter_back_through_the_offer_round(tmp_path, marker, relinquished):
    n = Night(seed=2510)
    n.until(lambda s: s.point and any(b.startswith(COME) and int(b.rsplit("_", 1)[1]) != s.point
                                      for _, b in come_wagers(s)))
    seat = makes_the_point_and_stops_betting(n)
    offer_round_comes_back(n, seat, relinquished)
    if MARKERS[marker]:
        n.ev("marker", "dealer", **MARKERS[marker])
    throw = n.valid(1, 2, new_wagers=False)  # craps: decides no come wager
    n.give_up("voluntary")
    got = found_in(n.finish(tmp_path / "night.csv"), SD)
    if marker == "off on the don't pass line":
        assert got == set()
    else:
        assert got == {("shooter.ineligible", "T01", throw),
                       ("shooter.marker_off_throw", "T01", throw)}


@pytest.mark.parametrize("round_held", [True, False], ids=["round", "kept"])
def test_a_line_bettor_who_declined_in_the_round_would_not_shoot(tmp_path, round_held):
    """Another player holds a don't pass bet. Offered the dice in the round
    and declining, they did not "elect to ... shoot the dice": the previous
    shooter's marker-off throw is inside (2). Never offered (the shooter
    kept the dice), they are a player who would shoot: outside (2)."""
    n = Night(seed=2510)
    n.until(lambda s: s.point and any(b.startswith(COME) and int(b.rsplit("_", 1)[1]) != s.point
                                      for _, b in come_wagers(s)))
    seat = makes_the_point_and_stops_betting(n)
    n.sim._place(n.others_clockwise(seat)[0], "dont_pass", 10.0)
    if round_held:
        offer_round_comes_back(n, seat, relinquished=False)
    n.ev("marker", "dealer", outcome="off", flags="dont_pass_line")
    throw = n.valid(1, 2, new_wagers=False)
    n.give_up("voluntary")
    got = found_in(n.finish(tmp_path / "night.csv"), SD)
    if round_held:
        assert got == set()
    else:
        assert got == {("shooter.ineligible", "T01", throw),
                       ("shooter.marker_off_throw", "T01", throw)}


@pytest.mark.parametrize("hand_ends", ["point made", "7 Out"])
def test_a_seven_out_leaves_no_previous_shooter(tmp_path, hand_ends):
    """The dice come back through the round to a shooter who throws with no
    line bet and no marker: after making the point that breaks (2) and the
    eligibility rule; after a 7 Out (no point made) only the latter."""
    n = Night(seed=2510)
    n.until(lambda s: s.point and any(b.startswith(COME) and int(b.rsplit("_", 1)[1]) != s.point
                                      for _, b in come_wagers(s)))
    if hand_ends == "point made":
        seat = makes_the_point_and_stops_betting(n)
        offer_round_comes_back(n, seat, relinquished=False)
    else:
        seat = n.shooter
        n.valid(3, 4, new_wagers=False, pass_back=False)
        offer_round_comes_back(n, seat, relinquished=True, reason="seven_out")
    throw = n.valid(1, 2, new_wagers=False)
    n.give_up("voluntary")
    got = found_in(n.finish(tmp_path / "night.csv"), SD)
    if hand_ends == "point made":
        assert got == {("shooter.ineligible", "T01", throw),
                       ("shooter.marker_off_throw", "T01", throw)}
    else:
        assert got == {("shooter.ineligible", "T01", throw)}


def quiet_with_a_line_bet_both_codes_without(night, tmp_path) -> None:
    """The lawful twin (the previous shooter holds a line bet) finds nothing;
    without one, the throw is both ineligible and off the marker."""
    n, _ = night(line_bet=True)
    assert found_in(n.finish(tmp_path / "lawful.csv"), SD) == set()
    n, throw = night(line_bet=False)
    assert found_in(n.finish(tmp_path / "breach.csv"), SD) == {
        ("shooter.ineligible", "T01", throw), ("shooter.marker_off_throw", "T01", throw)}


def test_previous_shooter_back_through_the_offer_round_with_no_come_wager_left(tmp_path):
    """The come wagers were taken down before the round: nothing is left to
    decide, so (2) does not let the previous shooter throw, marker or not;
    the lawful twin places a line bet first."""
    def night(line_bet: bool):
        n = Night(seed=2510)
        n.until(lambda s: s.point and any(
            b.startswith(COME) and int(b.rsplit("_", 1)[1]) != s.point
            for _, b in come_wagers(s)))
        seat = makes_the_point_and_stops_betting(n)
        sim = n.sim
        for s, bet in come_wagers(sim):
            n.ev("wager_removed", "player", s, bet=bet, amount=sim.wagers[s].pop(bet))
        offer_round_comes_back(n, seat, relinquished=False)
        n.ev("marker", "dealer", outcome="off", flags="dont_pass_line")
        if line_bet:
            sim._place(seat, "pass", 10.0)
        throw = n.valid(1, 2, new_wagers=False)
        n.give_up("voluntary")
        return n, throw

    quiet_with_a_line_bet_both_codes_without(night, tmp_path)


# --- reading 3: the exception ends once the remaining come wagers are decided ----

def one_come_bet_on_a_number(sim) -> bool:
    """The point is on and the layout's only come or don't come wager is one
    come bet on a number other than the point."""
    bets = come_wagers(sim)
    return bool(sim.point) and len(bets) == 1 and bets[0][1].startswith("come_") \
        and int(bets[0][1].rsplit("_", 1)[1]) != sim.point


@pytest.mark.parametrize("new_come_bet", [False, True], ids=["", "new come bet"])
@pytest.mark.parametrize("round_held", [True, False], ids=["round", "kept"])
@pytest.mark.parametrize("deciding", ["sets a point", "come-out seven"])
def test_exception_ends_once_the_come_wagers_are_decided(tmp_path, deciding, round_held,
                                                         new_come_bet):
    """The previous shooter's marker-off throw decides the last come wager
    (its number, which also sets the table's point; or a come-out 7). The
    next throw without a line bet is outside (2) whatever that roll did to
    the point, and whatever come bet another player has placed since (not
    one of the wagers that remained); the lawful twin places a line bet
    before it."""
    def night(line_bet: bool):
        n = Night(seed=2511)
        n.until(one_come_bet_on_a_number)
        (_, bet), = come_wagers(n.sim)
        number = int(bet.rsplit("_", 1)[1])
        seat = makes_the_point_and_stops_betting(n)
        if round_held:
            offer_round_comes_back(n, seat, relinquished=False)
        n.ev("marker", "dealer", outcome="off", flags="dont_pass_line")
        n.valid(1, 2, new_wagers=False)  # inside (2): the come bet remains
        if deciding == "sets a point":
            n.valid(number // 2, number - number // 2, new_wagers=False)
            assert n.sim.point == number
        else:
            n.valid(3, 4, new_wagers=False)
            assert n.sim.point == 0
        assert not come_wagers(n.sim)
        if new_come_bet:
            other = n.others_clockwise(seat)[0]
            n.sim._place(other, "come", 5.0)
        if line_bet:
            n.sim._place(seat, "pass", 10.0)
        throw = n.valid(1, 2, new_wagers=False)
        n.give_up("voluntary")
        return n, throw

    quiet_with_a_line_bet_both_codes_without(night, tmp_path)
