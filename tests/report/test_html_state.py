"""The game the HTML report shows beside a finding (`auditor.report.html_state`):
derived from a built log whose state before each row is known."""

from __future__ import annotations

import numpy as np
import pytest
from builder import STICK, LogBuilder, game_state_log, lawful_table

from auditor.game.replay import replay
from auditor.logs.load import load_logs
from auditor.logs.tables import table_runs
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
        dice=(f"A1: in play (dice_selected at seq {seq['select']})",
              f"A2: off the table (die_off_table at seq {seq['off_table']})",
              f"A3: in the bowl (dice_to_bowl at seq {seq['bowl']})",
              f"A4: in the bowl (dice_to_bowl at seq {seq['bowl']})",
              f"A5: in the bowl (dice_to_bowl at seq {seq['bowl']})"),
        last_roll=f"seq {seq['eight']}, total 8 with the point at 6: no line decision")
    assert (other.seat, other.wagers) == ("7", "pass")  # its place_8 won


def test_before_the_first_roll_and_in_a_new_session_nothing_is_carried_over(tmp_path):
    b, _ = game_state_log()
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


def test_the_dice_are_those_of_the_findings_own_table_and_session(tmp_path):
    """Two tables with the same serials: each finding's dice are its own
    table's; a finding at a `table_open` row is judged in the session before
    it (its dice as that session left them), the next row in the new one."""
    first = lawful_table()
    first.remove("A1,A2,A3,A4,A5")
    last_of_first = first.add("die_lost", role=STICK, dice="A1")  # (after removal: still removed)
    second = lawful_table()
    second.table = "T2"
    for row in second.rows:
        row["table_id"] = "T2"
    bowl = next(r["seq"] for r in reversed(second.rows) if r["event"] == "dice_to_bowl")
    offered = second.offer(5)
    both = LogBuilder()
    both.rows = first.rows + second.rows
    events = load_logs([both.write_csv(tmp_path / "t.csv")]).events
    at = {(t, int(s)): i for i, (t, s) in enumerate(zip(events["table_id"], events["seq"]))}
    t1, t2 = game_states(events, replay(events),
                         np.array([at[("T1", last_of_first)], at[("T2", offered)]]),
                         np.array([0, 5]), table_runs(events))
    assert t1.dice == ("removed from the table: A1, A2, A3, A4, A5",)
    assert t2.dice == (*(f"A{n}: in play (dice_selected at seq {bowl - 1})" for n in (1, 2)),
                       *(f"A{n}: in the bowl (dice_to_bowl at seq {bowl})" for n in (3, 4, 5)))

    reopened = lawful_table()
    reopened.remove("A1,A2")
    closed = reopened.add("table_close", role="game_supervisor")
    opened = closed + 1
    reopened.open(seats=(5,))
    (at_open, after) = states_at(tmp_path, reopened, [opened, opened + 1], [0, 0])
    assert at_open.dice[-1] == "removed from the table: A1, A2" and len(at_open.dice) == 4
    assert after.dice == ()  # nothing received yet in the new session


@pytest.mark.parametrize("seed", range(5))
def test_groups_count_in_order_never_below_none_and_sort_stably(seed):
    """`_Groups` sorts by radix (keys below 2**32) and counts by running sums:
    the same as a stable sort and a loop over each group's entries."""
    from auditor.report.html_state import _Groups, _stable_order

    rng = np.random.default_rng(seed)
    keys = rng.integers(0, [70_000, 2**32 - 1][seed % 2], size=5_000)
    keys[:50] = keys[0]  # ties keep their order
    assert np.array_equal(_stable_order(keys), np.argsort(keys, kind="stable"))
    groups = _Groups(keys % 40, np.arange(len(keys)), len(keys))
    # counts taken below zero, and (the usual night) counts never below zero
    for delta in (rng.choice([-1, 1, 0], size=len(keys)), rng.choice([1, 0], size=len(keys))):
        count = groups.running_count(delta)
        expected, held = np.empty(len(keys), dtype=np.int64), {}
        for position, entry in enumerate(groups.order.tolist()):
            g = int(keys[entry] % 40)
            held[g] = max(held.get(g, 0) + int(delta[entry]), 0)
            expected[position] = held[g]
        assert np.array_equal(count, expected)
