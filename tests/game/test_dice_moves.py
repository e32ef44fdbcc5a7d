"""Where each die is (`ReplayState.dice_moves`): every move from one place
to another, as a reader (a check, the HTML view) finds it, exactly."""

from __future__ import annotations

from builder import STICK, LogBuilder, lawful_table

from auditor.game.replay import replay
from auditor.game.state import DIE_LOCATIONS
from auditor.logs.load import load_logs


def _moves(b: LogBuilder, tmp_path) -> list[tuple[int, str, str, int]]:
    """(seq, die, place, set) of every move, in the order made."""
    events = load_logs([b.write_csv(tmp_path / "log.csv")]).events
    moves = replay(events).dice_moves
    seqs = events["seq"].to_numpy()
    return [(int(seqs[r]), moves.serials[d], DIE_LOCATIONS[w], s)
            for r, d, w, s in zip(moves.rows.tolist(), moves.die.tolist(),
                                  moves.where.tolist(), moves.set_id.tolist())]


def test_a_die_is_followed_from_receipt_to_removal(tmp_path):
    # seq 2: A1..A5 received; 6: into the bowl; 9: offered; 11: A1,A2 chosen
    b = lawful_table(seats=(2,))
    b.play(2, 4, 2)  # rolled and collected: in play all along, no move
    off = b.add("die_off_table", role=STICK, dice="A1")
    found = b.add("die_retrieved", role=STICK, dice="A1")
    removed = b.remove("A1")
    second = b.add("dice_received", role="security", dice="A1")
    got = [m for m in _moves(b, tmp_path) if m[1] == "A1"]
    assert got == [(2, "A1", "new", 1), (6, "A1", "bowl", 1), (9, "A1", "offered", 1),
                   (11, "A1", "in_play", 1), (off, "A1", "off_table", 1),
                   (found, "A1", "new", 1), (removed, "A1", "removed", 1),
                   (second, "A1", "new", 2)]


def test_a_roll_out_of_the_bowl_moves_the_dice_into_play(tmp_path):
    """A stickperson's throw of dice still in the bowl: a move, logged."""
    b = LogBuilder()
    b.open(seats=(2,))
    roll = b.roll(0, 3, 3, role=STICK, dice="A4,A5")
    got = [m for m in _moves(b, tmp_path) if m[0] >= roll]
    assert got == [(roll, "A4", "in_play", 1), (roll, "A5", "in_play", 1)]
