"""The game the HTML report shows beside a finding (`auditor.report.html_state`):
derived from a built log whose state before each row is known."""

from __future__ import annotations

import numpy as np
import pytest
from builder import game_state_log, lawful_table

from auditor.game.replay import replay
from auditor.logs.load import load_logs, table_runs
from auditor.report.html_state import GameAt, decided, game_states


def states_at(tmp_path, builder, seqs: list[int], seats: list[int]) -> list[GameAt | None]:
    """The game before the rows of `seqs` (-1: no row) for findings of `seats`."""
    events = load_logs([builder.write_csv(tmp_path / "t.csv")]).events
    at = {int(s): i for i, s in enumerate(events["seq"].tolist())}
    positions = np.array([at.get(s, -1) for s in seqs], dtype=np.int64)
    return game_states(events, replay(events), positions, np.array(seats), table_runs(events))


def test_the_game_before_a_row_is_the_replays_and_the_sessions_rows(tmp_path):
    b, seq = game_state_log()
    shooter, other = states_at(tmp_path, b, [seq["last"], seq["last"]], [5, 7])
    assert shooter == GameAt(
        shooter=f"seat 5, accepted the dice at seq {seq['accept']} "
                f"(offered by the stickperson at seq {seq['offer']})",
        phase="point 6", seat="5", wagers="come \u00d72, pass",
        line_bet="holds a Pass or Don't Pass bet",
        dice=(f"A1: on the layout, thrown (roll at seq {seq['voided']})",
              f"A2: off the table (die_off_table at seq {seq['off_table']})",
              f"A3: in the bowl (dice_to_bowl at seq {seq['bowl']})",
              f"A4: in the bowl (dice_to_bowl at seq {seq['bowl']})",
              f"A5: in the bowl (dice_to_bowl at seq {seq['bowl']})"),
        last_roll=f"seq {seq['eight']}, total 8 with the point at 6: no line decision")
    assert (other.seat, other.wagers) == ("7", "pass")  # its place_8 won


def test_before_the_first_roll_and_in_a_new_session_nothing_is_carried_over(tmp_path):
    b, seq = game_state_log()
    b.add("table_close", role="game_supervisor")
    b.open(seats=(5,))
    opened = b.seq - len((5,))  # the dice in the bowl, before the player joins
    first = states_at(tmp_path, b, [1, b.seq, -1], [0, 5, 5])
    assert first[0] == GameAt("no shooter", "come-out", "", "", "", (),
                              "none in this session before this row")
    again = first[1]
    assert again.shooter == f"no shooter, since table_open at seq {opened - 5}"
    assert (again.phase, again.wagers, again.line_bet) == \
        ("come-out", "none", "holds no Pass or Don't Pass bet")
    assert again.dice == tuple(f"A{n}: in the bowl (dice_to_bowl at seq {opened})"
                               for n in range(1, 6))
    assert again.last_roll == "none in this session before this row"
    assert first[2] is None  # a quarantined row has no game


def test_a_seven_out_is_the_last_roll_and_the_shooter_gave_up_the_dice(tmp_path):
    b = lawful_table()
    gone = b.seven_out(2, (2, 5, 7))
    b.remove("A1,A2,A3,A4,A5")
    nxt = b.offer(5)
    (state,) = states_at(tmp_path, b, [nxt], [5])
    assert state.shooter == f"no shooter, since shooter_relinquish at seq {gone}"
    assert state.last_roll == \
        f"seq {gone - 7}, total 7 with the point at 6: seven out: Pass loses, Don't Pass wins"
    assert state.wagers == "none" and state.dice == ("removed from the table: A1, A2, A3, A4, A5",)


def test_more_than_a_dozen_removed_dice_are_counted_not_named(tmp_path):
    """A long session replaces its dice many times: past a dozen, the removed
    dice are a count, and the dice at the table are still each named."""
    b = lawful_table()
    b.remove("A1,A2,A3,A4,A5")
    for letter in "BC":  # ten more dice received and removed: 15 in all
        dice = ",".join(f"{letter}{n}" for n in range(1, 6))
        b.receive(dice)
        b.remove(dice)
    _, bowl = b.receive("D1,D2,D3,D4,D5")
    nxt = b.offer(5, dice="D1,D2,D3,D4,D5")
    (state,) = states_at(tmp_path, b, [nxt], [5])
    assert state.dice == (*(f"D{n}: in the bowl (dice_to_bowl at seq {bowl})"
                            for n in range(1, 6)), "removed from the table: 15 dice")
    # (a dozen or fewer are named: test_a_seven_out_is_the_last_roll_...)


@pytest.mark.parametrize(("point", "total", "words"), [
    (0, 7, "a natural: Pass wins, Don't Pass loses"),
    (0, 12, "craps: Pass loses"),
    (0, 4, "the point is set at 4"),
    (6, 6, "the point is made: Pass wins, Don't Pass loses"),
    (6, 7, "seven out: Pass loses, Don't Pass wins"),
    (6, 11, "no line decision"),
])
def test_what_a_roll_decided(point, total, words):
    assert decided(point, total) == words


def test_a_wager_settled_or_taken_down_before_any_was_placed_leaves_none_owed(tmp_path):
    b = lawful_table()
    b.settle(5, "place_6", "lose")  # (a log cut short: no placement before it)
    b.add("wager_removed", role="player", seat=5, bet="place_6")
    b.bet(5, "place_6", 12)
    b.settle(5, "place_6", "push")  # a push leaves it standing
    after = b.complete()
    (state,) = states_at(tmp_path, b, [after], [5])
    assert state.wagers == "pass, place_6"
