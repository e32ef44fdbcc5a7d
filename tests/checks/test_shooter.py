"""Shooter checks: each fires on its breach and stays quiet on the lawful
case next to it."""

from builder import cocked, found, lawful_table, no_roll

RS = "nz-table-games"


def test_lawful_session_has_no_findings(tmp_path):
    b = lawful_table()
    b.play(2, 3, 4, settlements=[(2, "pass", "win", 10), (5, "pass", "win", 10),
                                 (7, "pass", "win", 10)])
    for s in (2, 5, 7):
        b.bet(s)
    b.play(2, 4, 2)  # point 6
    b.play(2, 3, 4, settlements=[(2, "pass", "lose", 0), (5, "pass", "lose", 0),
                                 (7, "pass", "lose", 0)], pass_back=False)
    b.add("shooter_relinquish", role="player", seat=2, reason="seven_out")
    for s in (2, 5, 7):
        b.bet(s)
    offer = b.offer(5)
    b.accept(5)
    b.play(5, 6, 5, settlements=[(2, "pass", "win", 10), (5, "pass", "win", 10),
                                 (7, "pass", "win", 10)])
    for ruleset in ("nz-table-games", "nsw-1992"):
        assert found(b, tmp_path, ruleset) == set(), ruleset
    # NZ 1996 5.9: after a relinquishment a dealer, not the stickperson, offers.
    assert found(b, tmp_path, "nz-1996") == {("offer.wrong_role", "T1", offer)}


def test_ineligible_shooter_fires_when_pass_bet_taken_down(tmp_path):
    b = lawful_table()
    b.add("wager_removed", role="player", seat=2, bet="pass")
    seq = b.play(2, 4, 4, settlements=[])
    assert found(b, tmp_path, RS, "shooter.") == {("shooter.ineligible", "T1", seq)}


def test_ineligible_shooter_quiet_with_dont_pass(tmp_path):
    b = lawful_table()
    b.add("wager_removed", role="player", seat=2, bet="pass")
    b.bet(2, "dont_pass")
    b.play(2, 4, 4)
    assert found(b, tmp_path, RS, "shooter.") == set()


def test_not_accepted_fires_for_second_player(tmp_path):
    b = lawful_table()
    seq = b.play(5, 4, 4)
    assert ("shooter.not_accepted", "T1", seq) in found(b, tmp_path, RS)


def test_not_accepted_quiet_for_shooter(tmp_path):
    b = lawful_table()
    b.play(2, 4, 4)
    assert found(b, tmp_path, RS, "shooter.") == set()


def test_kept_after_seven_out_fires(tmp_path):
    b = lawful_table()
    b.play(2, 4, 2)
    b.play(2, 3, 4, settlements=[(s, "pass", "lose", 0) for s in (2, 5, 7)])
    b.bet(2)
    seq = b.play(2, 5, 5)
    assert found(b, tmp_path, RS, "shooter.") == {("shooter.kept_after_seven_out", "T1", seq)}


def test_kept_after_seven_out_quiet_when_the_seven_was_voided_or_recounted(tmp_path):
    """A 7 Out taken back (the roll voided, or a cocked die recounting it
    as the point) leaves the shooter with the dice."""
    b = lawful_table()
    b.play(2, 4, 2)
    b.roll(2, 3, 4)
    no_roll(b, "die_off_table")
    b.play(2, 5, 5)
    b.roll(2, 3, 4)
    cocked(b, "A2", resting_face=4)  # counts 3: 6, the point
    b.bet(2)
    b.play(2, 5, 5)
    assert found(b, tmp_path, RS, "shooter.kept_after_seven_out") == set()
    b.play(2, 4, 2)
    b.play(2, 3, 4, settlements=[(s, "pass", "lose", 0) for s in (2, 5, 7)])
    seq = b.play(2, 5, 5)
    assert found(b, tmp_path, RS, "shooter.kept_after_seven_out") == {
        ("shooter.kept_after_seven_out", "T1", seq)}


def test_kept_after_seven_out_quiet_when_passed(tmp_path):
    b = lawful_table()
    b.play(2, 4, 2)
    b.play(2, 3, 4, settlements=[(s, "pass", "lose", 0) for s in (2, 5, 7)], pass_back=False)
    b.add("shooter_relinquish", role="player", seat=2, reason="seven_out")
    for s in (2, 5, 7):
        b.bet(s)
    b.offer(5)
    b.accept(5)
    b.play(5, 5, 5)
    assert found(b, tmp_path, RS, "shooter.") == set()


def test_order_to_pass_by_dealer_fires(tmp_path):
    b = lawful_table()
    seq = b.add("shooter_relinquish", role="dealer", seat=2, reason="ordered")
    assert found(b, tmp_path, RS, "shooter.") == {
        ("shooter.order_to_pass_unauthorised", "T1", seq)}


def test_order_to_pass_by_game_supervisor_quiet(tmp_path):
    b = lawful_table()
    b.add("shooter_relinquish", role="game_supervisor", seat=2, reason="ordered")
    assert found(b, tmp_path, RS, "shooter.") == set()


def test_order_to_pass_sd_boxperson(tmp_path):
    # SD (1)(b) names the boxperson; the log's game supervisor is that
    # position (the spec's "game supervisor (boxperson)"); a dealer is not.
    b = lawful_table()
    b.add("shooter_relinquish", role="boxperson", seat=2, reason="ordered")
    b.add("shooter_relinquish", role="game_supervisor", seat=2, reason="ordered")
    seq = b.add("shooter_relinquish", role="pit_manager", seat=2, reason="ordered")
    assert found(b, tmp_path, "sd-20-18-33", "shooter.") == {
        ("shooter.order_to_pass_unauthorised", "T1", seq)}


def test_order_to_pass_nsw_distinguishes_a_games_supervisor(tmp_path):
    # NSW 1.1: a games supervisor is a casino supervisor, not the boxperson.
    b = lawful_table()
    b.add("shooter_relinquish", role="boxperson", seat=2, reason="ordered")
    seq = b.add("shooter_relinquish", role="game_supervisor", seat=2, reason="ordered")
    assert found(b, tmp_path, "nsw-1992", "shooter.") == {
        ("shooter.order_to_pass_unauthorised", "T1", seq)}


def _everyone_declines(b):
    b.play(2, 4, 2)  # point 6 with a come bet
    b.play(2, 3, 4, settlements=[(s, "pass", "lose", 0) for s in (2, 5, 7)], pass_back=False)
    b.add("shooter_relinquish", role="player", seat=2, reason="seven_out")


def test_stickperson_throw_quiet_when_nobody_will_shoot(tmp_path):
    b = lawful_table()
    b.bet(5, "come")
    b.play(2, 4, 2)        # point 6; the come bet travels to 6
    b.play(2, 3, 4, settlements=[(s, "pass", "lose", 0) for s in (2, 5, 7)]
           + [(5, "come_6", "lose", 0)], pass_back=False)
    b.add("shooter_relinquish", role="player", seat=2, reason="seven_out")
    b.bet(5, "place_6")
    b.bet(5, "come")
    b.bet(5, "pass")
    b.offer(5)
    b.decline(5)
    b.roll(0, 2, 2, role="stickperson")  # undetermined come bet, nobody willing
    assert found(b, tmp_path, RS, "shooter.stickperson") == set()


def test_stickperson_throw_fires_when_player_willing(tmp_path):
    b = lawful_table()
    seq = b.roll(0, 2, 2, role="stickperson")
    assert ("shooter.stickperson_throw", "T1", seq) in found(b, tmp_path, RS)


def test_marker_off_throw_sd(tmp_path):
    b = lawful_table(seats=(2,))
    b.play(2, 4, 2)  # point 6
    b.bet(2, "come")
    b.play(2, 5, 3)  # the come bet travels to 8
    b.play(2, 3, 3, settlements=[(2, "pass", "win", 10)])  # point made
    # No new pass bet, marker off on the don't pass line: lawful under (2).
    b.add("marker", role="dealer", outcome="off", flags="dont_pass_line")
    b.play(2, 5, 5)
    assert found(b, tmp_path, "sd-20-18-33", "shooter.") == set()


def test_marker_off_throw_sd_fires_without_marker(tmp_path):
    b = lawful_table(seats=(2,))
    b.play(2, 4, 2)
    b.bet(2, "come")
    b.play(2, 5, 3)
    b.play(2, 3, 3, settlements=[(2, "pass", "win", 10)])
    seq = b.play(2, 5, 5)
    assert found(b, tmp_path, "sd-20-18-33", "shooter.") == {
        ("shooter.marker_off_throw", "T1", seq), ("shooter.ineligible", "T1", seq)}


# --- seed 000 5.11: what "a determination" is, and who is "available" ---------

def _stick_play(b, d1, d2, settlements=()):
    """A stickperson's throw, called, collected and settled. Returns its seq."""
    seq = b.roll(0, d1, d2, role="stickperson")
    b.call(d1 + d2)
    b.collect()
    for s, bet, outcome, amount in settlements:
        b.settle(s, bet, outcome, amount)
    b.complete()
    return seq


def _come_bets_left_on_come_out(b):
    """Shooter 2 makes point 6 while seat 5's come bets travel to 8 and 9,
    then relinquishes: the table is on the come-out with only come bets on
    numbers, and nobody holds a line bet."""
    b.play(2, 4, 2)  # point 6
    b.bet(5, "come")
    b.play(2, 5, 3)  # travels to 8
    b.bet(5, "come")
    b.play(2, 5, 4)  # travels to 9
    b.play(2, 4, 2, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)], pass_back=False)
    b.relinquish(2, reason="voluntary")


def test_stickperson_throws_on_after_a_come_out_total_that_decides_nothing(tmp_path):
    # An 11 on the come-out wins or loses no wager on the layout (come bets on
    # 8 and 9 only): no determination, so the stickperson throws on.
    b = lawful_table()
    _come_bets_left_on_come_out(b)
    _stick_play(b, 5, 6)
    _stick_play(b, 4, 4, settlements=[(5, "come_8", "win", 10)])  # the determination
    assert found(b, tmp_path, RS) == set()


def test_stickperson_throw_fires_after_a_come_out_total_that_decided_a_wager(tmp_path):
    # The come-out 8 wins the come bet on 8 (come bets on numbers keep
    # working on the come-out): a determination, so another throw is a breach.
    b = lawful_table()
    _come_bets_left_on_come_out(b)
    _stick_play(b, 4, 4, settlements=[(5, "come_8", "win", 10)])
    seq = _stick_play(b, 5, 6)
    assert found(b, tmp_path, RS) == {("shooter.stickperson_throw", "T1", seq)}


def _shooter_leaves_with_a_pass_bet(b):
    """Shooter 2 makes the point with seat 5's come bet on 8, bets pass again
    and gives up the dice: the only line bettor is the outgoing shooter."""
    b.play(2, 4, 2)  # point 6
    b.bet(5, "come")
    b.play(2, 5, 3)  # travels to 8
    b.play(2, 4, 2, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)], pass_back=False)
    b.bet(2)
    b.relinquish(2, reason="voluntary")


def test_stickperson_throw_quiet_when_only_the_outgoing_shooter_holds_a_line_bet(tmp_path):
    # The shooter who has just relinquished is not a player "available and
    # willing" to shoot (seed 000 5.11).
    b = lawful_table()
    _shooter_leaves_with_a_pass_bet(b)
    _stick_play(b, 5, 5)  # point 10; come bet on 8 and the pass bet undetermined
    assert found(b, tmp_path, RS) == set()


def test_stickperson_throw_fires_when_another_line_bettor_has_not_declined(tmp_path):
    b = lawful_table()
    _shooter_leaves_with_a_pass_bet(b)
    b.bet(7)  # seat 7 holds a line bet and was never offered the dice
    seq = _stick_play(b, 5, 5)
    assert found(b, tmp_path, RS, "shooter.") == {("shooter.stickperson_throw", "T1", seq)}
