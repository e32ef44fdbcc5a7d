"""Offer checks: each fires on its breach and stays quiet on the lawful case
next to it, under every shipped ruleset that enforces it."""

import pytest
from builder import DICE, STICK, THROW, LogBuilder, found, lawful_table, rulesets_with

RS = "nz-table-games"
SD = "sd-20-18-33"
NZ96 = "nz-1996"
NSW = "nsw-1992"
SEATS = (2, 5, 7)


def offers(b, tmp_path, ruleset):
    return found(b, tmp_path, ruleset, "offer.")


def opened(seats=SEATS, open_seat=None, bets=True) -> LogBuilder:
    """A table open, players seated with pass bets, nothing offered yet."""
    b = LogBuilder()
    b.open(seats=seats, open_seat=open_seat)
    if bets:
        for s in seats:
            b.bet(s)
    return b


def offer_role_for(ruleset: str) -> str:
    """Who lawfully offers after a relinquishment (NZ 1996 5.9: a dealer)."""
    return "dealer" if ruleset == NZ96 else STICK


def relinquished(shooter=2, seats=SEATS, rebet=SEATS) -> LogBuilder:
    """`shooter` sevens out and relinquishes; the players in `rebet` put new
    pass bets down. The next event is the offer to the next shooter."""
    b = lawful_table(seats=seats, shooter=shooter)
    b.seven_out(shooter, seats)
    for s in rebet:
        b.bet(s)
    return b


# --- offer.order: start of play -------------------------------------------

@pytest.mark.parametrize("ruleset", rulesets_with("offer.order"))
def test_order_start_fires_when_not_lowest_seat(tmp_path, ruleset):
    b = opened()
    seq = b.offer(5)
    assert offers(b, tmp_path, ruleset) == {("offer.order", "T1", seq)}


@pytest.mark.parametrize("ruleset", rulesets_with("offer.order"))
def test_order_start_quiet_to_lowest_seat(tmp_path, ruleset):
    b = opened()
    b.offer(2)
    b.accept(2)
    b.play(2, 4, 2)
    assert offers(b, tmp_path, ruleset) == set()


@pytest.mark.parametrize("ruleset", rulesets_with("offer.order"))
def test_order_start_refusal_fires_when_skipping_next_seat(tmp_path, ruleset):
    b = opened()
    b.offer(2)
    b.decline(2)
    seq = b.offer(7)
    assert offers(b, tmp_path, ruleset) == {("offer.order", "T1", seq)}


@pytest.mark.parametrize("ruleset", rulesets_with("offer.order"))
def test_order_start_refusal_quiet_clockwise(tmp_path, ruleset):
    b = opened()
    b.offer(2)
    b.decline(2)
    b.offer(5)
    b.decline(5)
    b.offer(7)
    b.accept(7)
    assert offers(b, tmp_path, ruleset) == set()


# The seat `table_open` names anchors the first offer only in SD
# (first_offer_anchor = "table_open_seat"); elsewhere it is the lowest seat.
FIRST_SEAT_WITH_OPEN_SEAT_5 = {SD: 5}


@pytest.mark.parametrize("ruleset", rulesets_with("offer.order"))
def test_order_start_with_table_open_seat_fires(tmp_path, ruleset):
    b = opened(open_seat=5)
    lawful = FIRST_SEAT_WITH_OPEN_SEAT_5.get(ruleset, 2)
    wrong = 2 if lawful == 5 else 5
    seq = b.offer(wrong)
    assert offers(b, tmp_path, ruleset) == {("offer.order", "T1", seq)}


@pytest.mark.parametrize("ruleset", rulesets_with("offer.order"))
def test_order_start_with_table_open_seat_quiet(tmp_path, ruleset):
    b = opened(open_seat=5)
    b.offer(FIRST_SEAT_WITH_OPEN_SEAT_5.get(ruleset, 2))
    assert offers(b, tmp_path, ruleset) == set()


def test_order_sd_open_seat_unoccupied_goes_to_next_clockwise(tmp_path):
    b = opened(open_seat=6)
    seq = b.offer(2)
    assert offers(b, tmp_path, SD) == {("offer.order", "T1", seq)}
    b = opened(open_seat=6)
    b.offer(7)
    assert offers(b, tmp_path, SD) == set()


def test_order_sd_open_seat_refusal_wraps_around(tmp_path):
    b = opened(open_seat=7)
    b.offer(7)
    b.decline(7)
    seq = b.offer(5)
    assert offers(b, tmp_path, SD) == {("offer.order", "T1", seq)}
    b = opened(open_seat=7)
    b.offer(7)
    b.decline(7)
    b.offer(2)
    b.accept(2)
    assert offers(b, tmp_path, SD) == set()


@pytest.mark.parametrize("ruleset", rulesets_with("offer.order"))
def test_order_start_again_after_table_reopens(tmp_path, ruleset):
    # A new `table_open` forgets the previous session: the first offer goes
    # to the lowest seat again, not left of the last shooter.
    b = lawful_table(shooter=5)
    b.play(5, 4, 2)
    b.add("table_close", role="game_supervisor")
    b.open()
    for s in SEATS:
        b.bet(s)
    seq = b.offer(7)
    assert offers(b, tmp_path, ruleset) == {("offer.order", "T1", seq)}
    b.decline(7)
    b.offer(2)  # clockwise from 7, wrapping
    assert offers(b, tmp_path, ruleset) == {("offer.order", "T1", seq)}


# --- offer.order: after a relinquishment ----------------------------------
# NSW 1992 rule 3.2 speaks only of the start of play (3.8 was truncated), so
# the after-relinquishment order is tested under the rulesets that cite it.
AFTER_RELINQUISH = [rs for rs in rulesets_with("offer.order") if rs != NSW]


@pytest.mark.parametrize("ruleset", AFTER_RELINQUISH)
def test_order_after_relinquish_fires_not_left_of_shooter(tmp_path, ruleset):
    b = relinquished(shooter=5)
    seq = b.offer(2)
    assert offers(b, tmp_path, ruleset) == {("offer.order", "T1", seq)}


@pytest.mark.parametrize("ruleset", AFTER_RELINQUISH)
def test_order_after_relinquish_quiet_left_of_shooter(tmp_path, ruleset):
    b = relinquished(shooter=5)
    b.offer(7)
    b.accept(7)
    b.play(7, 4, 2)
    assert offers(b, tmp_path, ruleset) == set()


@pytest.mark.parametrize("ruleset", AFTER_RELINQUISH)
def test_order_after_relinquish_wraps_fires(tmp_path, ruleset):
    b = relinquished(shooter=7)
    seq = b.offer(5)
    assert offers(b, tmp_path, ruleset) == {("offer.order", "T1", seq)}


@pytest.mark.parametrize("ruleset", AFTER_RELINQUISH)
def test_order_after_relinquish_wraps_quiet(tmp_path, ruleset):
    b = relinquished(shooter=7)
    b.offer(2)
    b.accept(2)
    assert offers(b, tmp_path, ruleset) == set()


@pytest.mark.parametrize("ruleset", AFTER_RELINQUISH)
def test_order_after_relinquish_refusal_fires(tmp_path, ruleset):
    b = relinquished(shooter=2)
    b.offer(5)
    b.decline(5)
    seq = b.offer(2)
    assert offers(b, tmp_path, ruleset) == {("offer.order", "T1", seq)}


@pytest.mark.parametrize("ruleset", AFTER_RELINQUISH)
def test_order_after_relinquish_refusal_quiet(tmp_path, ruleset):
    b = relinquished(shooter=2)
    b.offer(5)
    b.decline(5)
    b.offer(7)
    b.accept(7)
    assert offers(b, tmp_path, ruleset) == set()


def test_order_without_relinquish_event_starts_left_of_shooter(tmp_path):
    # The 7 Out itself ends the shooter's turn; the log has no relinquish row.
    b = lawful_table(shooter=2)
    b.play(2, 4, 2)
    b.play(2, 3, 4, settlements=[(s, "pass", "lose", 0) for s in SEATS], pass_back=False)
    for s in SEATS:
        b.bet(s)
    seq = b.offer(7)
    assert offers(b, tmp_path, RS) == {("offer.order", "T1", seq)}


# nz-table-games (skip_players_without_line_bet) passes over seat 5, which has
# no pass bet after the 7 Out; SD (3) offers to the player left of the shooter.

def test_order_skip_no_line_bet_nz_quiet_sd_fires(tmp_path):
    b = relinquished(shooter=2, rebet=(2, 7))
    seq = b.offer(7)
    assert offers(b, tmp_path, RS) == set()
    assert offers(b, tmp_path, SD) == {("offer.order", "T1", seq)}


def test_order_skip_no_line_bet_nz_fires_sd_quiet(tmp_path):
    b = relinquished(shooter=2, rebet=(2, 7))
    seq = b.offer(5)
    assert offers(b, tmp_path, RS) == {("offer.order", "T1", seq),
                                       ("offer.ineligible_player", "T1", seq)}
    assert offers(b, tmp_path, SD) == set()


def test_order_skip_no_line_bet_wraps_around(tmp_path):
    # Shooter 5 leaves; seat 7 has no line bet: the next line bettor is seat 2.
    b = relinquished(shooter=5, rebet=(2, 5))
    seq = b.offer(7)
    assert offers(b, tmp_path, RS) == {("offer.order", "T1", seq),
                                       ("offer.ineligible_player", "T1", seq)}
    b = relinquished(shooter=5, rebet=(2, 5))
    b.offer(2)
    assert offers(b, tmp_path, RS) == set()


# --- offer.ineligible_player ------------------------------------------------

@pytest.mark.parametrize("ruleset", rulesets_with("offer.ineligible_player"))
def test_ineligible_player_fires_after_relinquish(tmp_path, ruleset):
    b = relinquished(shooter=2, rebet=(2, 7))
    b.bet(5, "field")
    b.offer(7)
    b.decline(7)
    seq = b.offer(5)  # seat 5 holds only a field bet; seat 2 was next
    assert offers(b, tmp_path, ruleset) == {("offer.ineligible_player", "T1", seq),
                                            ("offer.order", "T1", seq)}


@pytest.mark.parametrize("ruleset", rulesets_with("offer.ineligible_player"))
def test_ineligible_player_quiet_for_line_bettors_and_at_start(tmp_path, ruleset):
    b = opened(bets=False)  # at the start of play the offer goes to the seat
    b.offer(2)
    b.decline(2)
    assert offers(b, tmp_path, ruleset) == set()
    b = relinquished(shooter=2, rebet=(2, 7))
    b.bet(5, "dont_pass")
    b.offer(5)
    b.decline(5)
    b.offer(7)
    assert offers(b, tmp_path, ruleset) == set()


# --- offer.incomplete_set ----------------------------------------------------

@pytest.mark.parametrize("ruleset", rulesets_with("offer.incomplete_set"))
def test_incomplete_set_fires_after_relinquish(tmp_path, ruleset):
    b = relinquished(shooter=2)
    seq = b.offer(5, role=offer_role_for(ruleset), dice="A1,A2,A3,A4")
    assert offers(b, tmp_path, ruleset) == {("offer.incomplete_set", "T1", seq)}


@pytest.mark.parametrize("ruleset", rulesets_with("offer.incomplete_set"))
def test_incomplete_set_quiet_complete_after_relinquish(tmp_path, ruleset):
    b = relinquished(shooter=2)
    b.offer(5, role=offer_role_for(ruleset))
    b.accept(5)
    assert offers(b, tmp_path, ruleset) == set()


# NZ 1996 5.9 governs only the offer after a relinquishment (the start-of-play
# rule was not read); the others govern every offer.
START_INCOMPLETE_FIRES = {RS: True, SD: True, NZ96: False}


@pytest.mark.parametrize("ruleset", rulesets_with("offer.incomplete_set"))
def test_incomplete_set_at_start_of_play(tmp_path, ruleset):
    b = opened()
    seq = b.offer(2, dice="A2,A3,A4,A5")
    expected = {("offer.incomplete_set", "T1", seq)} if START_INCOMPLETE_FIRES[ruleset] \
        else set()
    assert offers(b, tmp_path, ruleset) == expected


def test_incomplete_set_sd_six_dice_all_offered(tmp_path):
    six = DICE + ",A6"
    b = LogBuilder()
    b.open(dice=six)
    for s in SEATS:
        b.bet(s)
    seq = b.offer(2)  # five of the six
    assert offers(b, tmp_path, SD) == {("offer.incomplete_set", "T1", seq)}
    b = LogBuilder()
    b.open(dice=six)
    b.bet(2)
    b.offer(2, dice=six)
    b.accept(2, dice=six)
    assert offers(b, tmp_path, SD) == set()


def test_incomplete_set_quiet_on_replacement_offer_after_die_off_table(tmp_path):
    b = lawful_table()
    b.roll(2, 3, 4, flags=THROW + ",die_off_table")
    b.add("no_roll", role=STICK, reason="die_off_table", flags="before_rest")
    b.add("die_off_table", role=STICK, dice="A2")
    b.offer(2, dice="A1,A3,A4,A5")  # the remaining dice, to the shooter (6.1)
    b.add("dice_selected", role="player", seat=2, dice="A1,A3")
    b.to_bowl("A4,A5")
    assert offers(b, tmp_path, RS) == set()


# --- offer.wrong_role ----------------------------------------------------------

def wrong_role_for(ruleset: str) -> str:
    return STICK if ruleset == NZ96 else "dealer"


# NSW 1992 rule 3.2 (the stickperson offers) speaks of the start of play only.
ROLE_AFTER_RELINQUISH = [rs for rs in rulesets_with("offer.wrong_role") if rs != NSW]


@pytest.mark.parametrize("ruleset", ROLE_AFTER_RELINQUISH)
def test_wrong_role_fires_after_relinquish(tmp_path, ruleset):
    b = relinquished(shooter=2)
    seq = b.offer(5, role=wrong_role_for(ruleset))
    assert offers(b, tmp_path, ruleset) == {("offer.wrong_role", "T1", seq)}


@pytest.mark.parametrize("ruleset", ROLE_AFTER_RELINQUISH)
def test_wrong_role_quiet_after_relinquish(tmp_path, ruleset):
    b = relinquished(shooter=2)
    b.offer(5, role=offer_role_for(ruleset))
    b.decline(5)
    b.offer(7, role=offer_role_for(ruleset))
    b.accept(7)
    assert offers(b, tmp_path, ruleset) == set()


# At the start of play NZ 1996 names nobody (offer_rounds = "after_relinquish").
START_ROLE_FIRES = {RS: True, SD: True, NSW: True, NZ96: False}


@pytest.mark.parametrize("ruleset", rulesets_with("offer.wrong_role"))
def test_wrong_role_at_start_of_play(tmp_path, ruleset):
    b = opened()
    seq = b.offer(2, role="boxperson")
    b.decline(2)
    b.offer(5)  # the stickperson: lawful everywhere at the start
    expected = {("offer.wrong_role", "T1", seq)} if START_ROLE_FIRES[ruleset] else set()
    assert offers(b, tmp_path, ruleset) == expected


@pytest.mark.parametrize("ruleset", rulesets_with("offer.wrong_role"))
def test_wrong_role_quiet_stickperson_at_start(tmp_path, ruleset):
    b = lawful_table()
    b.play(2, 4, 2)
    assert offers(b, tmp_path, ruleset) == set()


def test_nz1996_dealer_offers_after_relinquish_whole_session(tmp_path):
    b = relinquished(shooter=2)
    b.offer(5, role="dealer")
    b.accept(5)
    b.play(5, 6, 5, settlements=[(s, "pass", "win", 10) for s in SEATS])
    assert offers(b, tmp_path, NZ96) == set()


def test_nsw_governs_only_start_of_play_offers(tmp_path):
    """NSW 3.2 speaks of the start of play; 3.8 (relinquishment) was not
    read, so offers after a relinquishment are not judged under nsw-1992."""
    b = relinquished(shooter=5)
    b.offer(2, role="dealer")  # out of turn and by a dealer: not judged
    assert offers(b, tmp_path, "nsw-1992") == set()
    start = opened()
    wrong = start.offer(5, role="dealer")
    assert offers(start, tmp_path, "nsw-1992") == {
        ("offer.order", "T1", wrong), ("offer.wrong_role", "T1", wrong)}
