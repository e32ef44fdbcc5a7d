"""Settlement checks (`settle.*`): line bets settled as the dice decided, every decision
settled, nothing settled on a void roll."""

from __future__ import annotations

import numpy as np

from auditor.checks.common import written
from auditor.checks.registry import Hits, Needs, check
from auditor.game.state import SETTLE_EXPECTED


@check("line_bet_outcome", "settle.wrong_outcome", needs=Needs(events=("roll", "wager_settled")))
def line_bet_outcome(ctx, params) -> Hits:
    """A line bet (pass, don't pass, come, don't come) was settled win, lose
    or push against what the dice decided (the bar number pushes; see the
    ruleset parameter `bar_number`).

    Fires on: a pass bet settled `lose` after a come-out 7; a don't pass
    settled `win` on a come-out 12 where 12 is barred; a pass settled on a roll
    that did not decide it.
    Quiet on: pass wins on a natural; don't pass pushes on the bar.
    Points at: the `wager_settled`.
    """
    sh = ctx.shared
    rows, expected = sh.sparse("settle_expected")  # (ids of SETTLE_EXPECTED)
    # each distinct outcome as those ids (-1: anything else), compared as numbers
    settled_as = np.array([SETTLE_EXPECTED.index(c) if isinstance(c, str) and c in SETTLE_EXPECTED
                           else -1 for c in sh.categories("outcome")], dtype=np.int64)
    wrong = settled_as.take(sh.codes("outcome")[rows]) != expected if len(rows) \
        else np.zeros(0, dtype=bool)
    rows, want = rows[wrong], [SETTLE_EXPECTED[w] for w in expected[wrong].tolist()]
    got = sh.values_at("outcome", rows)
    bets, seats = sh.values_at("bet", rows), sh.ints_at("seat", rows)
    roll_rows = sh.sparse_at("settle_roll", rows, None)
    seq = sh.seq
    messages, evidence = [], []
    for r, g, w, bet, seat, rr in zip(rows.tolist(), got, want, bets, seats, roll_rows):
        if w == "undecided":
            messages.append(f"{bet} at seat {seat} settled {g}, but the last "
                            f"roll did not decide it")
        else:
            messages.append(f"{bet} at seat {seat} settled {g}; the dice "
                            f"decided {w}")
        evidence.append({"expected": w, "settled": g,
                         "roll_seq": int(seq[rr]) if rr is not None and rr >= 0 else None})
    return Hits(rows, messages, evidence)


@check("line_bet_settled", "settle.missing")
def line_bet_settled(ctx, params) -> Hits:
    """A line bet decided by a valid roll was never settled before the next
    roll.

    Fires on: a come-out 7 with a pass bet at seat 2, and no `wager_settled`
    of it before the next roll (or the table's close).
    Quiet on: the pass bet settled `win`; a don't pass pushed on the bar (a
    push needs no settlement).
    Points at: the roll whose decision went unsettled.
    """
    rows, owed = written(ctx, "unsettled")
    return Hits(rows, ["decided wager(s) never settled: " + ", ".join(
        f"{o['bet']} at seat {o['seat']} ({o['outcome']})" for o in owe) for owe in owed],
        [{"unsettled": owe} for owe in owed])


@check("no_settlement_on_void_roll", "settle.void_roll")
def no_settlement_on_void_roll(ctx, params) -> Hits:
    """Wagers were settled on a roll that was declared no roll.

    Fires on: a roll, `no_roll`, then a `wager_settled` of any wager (line
    bet or not) before the next roll; a wager settled on the roll and the roll
    then declared no roll.
    Quiet on: no settlement until the next valid roll.
    Points at: the `wager_settled`.
    """
    rows, roll_rows = written(ctx, "settled_on_void")
    seq = ctx.shared.seq
    return Hits(rows, [f"wager settled on the void roll at seq {seq[rr]}"
                       for rr in roll_rows], [{"roll_seq": int(seq[rr])} for rr in roll_rows])
