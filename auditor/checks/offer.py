"""Offer checks: to whom, in what order, by whom and what dice are offered."""

from __future__ import annotations

import numpy as np

from auditor.checks.common import in_sorted, seat_list, written
from auditor.checks.parameters import position_roles
from auditor.checks.registry import Hits, check
from auditor.game.replay import ROUND_AFTER_RELINQUISH, ROUND_START


def next_clockwise(mask: int, after: int) -> int:
    """The next seat in `mask` with a number above `after`, wrapping to the
    lowest; 0 when the mask is empty."""
    seats = seat_list(mask)
    if not seats:
        return 0
    for s in seats:
        if s > after:
            return s
    return seats[0]


ROUNDS = {"all": (ROUND_START, ROUND_AFTER_RELINQUISH),
          "after_relinquish": (ROUND_AFTER_RELINQUISH,),
          "start_of_play": (ROUND_START,)}


def _offers(ctx, offer_rounds: str = "all") -> tuple[np.ndarray, np.ndarray]:
    """Rows and round kinds of the offers a rule governs. Replacement offers
    after a die left the table (rule 6.1) are never among them."""
    rows, rounds = ctx.shared.sparse("offer_round")
    keep = np.isin(rounds, ROUNDS[offer_rounds])
    return rows[keep], rounds[keep]


def _next_clockwise(masks: np.ndarray, after: np.ndarray) -> np.ndarray:
    """`next_clockwise` of many masks at once: the lowest seat (bit 1..62)
    above `after`, else the lowest seat; 0 where there is none."""
    seats = masks.astype(np.uint64) & np.uint64(SEAT_BITS)
    shift = (np.clip(after, -1, 62) + 1).astype(np.uint64)
    above = (seats >> shift) << shift
    pick = np.where(above != 0, above, seats)
    low = pick & (~pick + np.uint64(1))  # the lowest bit set
    out = np.zeros(len(pick), dtype=np.int64)
    some = low != 0
    out[some] = np.log2(low[some].astype(np.float64)).astype(np.int64)  # exact: powers of 2
    return out


#: Bits 1..62: the seats `seat_list` reads.
SEAT_BITS = sum(1 << s for s in range(1, 63))


@check("offer_order", "offer.order",
       ("first_offer_anchor", "skip_players_without_line_bet", "offer_rounds"))
def offer_order(ctx, params) -> Hits:
    """The dice were offered out of turn.

    At the start of play the first offer goes to the player immediately left of
    the game supervisor (the lowest occupied seat), or, with
    `first_offer_anchor` = `table_open_seat`, to the seat `table_open` names;
    after a shooter leaves, to the player immediately left of that shooter;
    after a refusal, on clockwise. With `skip_players_without_line_bet`, offers
    after a shooter relinquishes pass over players without a Pass or Don't
    Pass wager. `offer_rounds` limits the rule to the offers the text read
    speaks of.
    Fires on: seats 2, 5 and 7 occupied, shooter at 5 relinquishes, the dice
    go first to seat 2.
    Quiet on: the same table offering first to seat 7, then (after 7 declines)
    to seat 2.
    Points at: the out-of-turn `dice_offered`.
    """
    st, sh = ctx.state, ctx.shared
    rows, kinds = _offers(ctx, params["offer_rounds"])
    anchor = sh.sparse_at("offer_anchor", rows, 0).astype(np.int64)
    mask = st["occupied"][rows].astype(np.int64)
    if params["first_offer_anchor"] == "table_open_seat":
        opens = sh.sparse_at("offer_open_seat", rows, None)
        open_seat = np.fromiter((int(o or 0) for o in opens), dtype=np.int64, count=len(rows))
        use = (kinds == ROUND_START) & (anchor == 0) & (open_seat != 0)
        anchor = np.where(use, open_seat - 1, anchor)
    if params["skip_players_without_line_bet"]:
        line = st["line_bettors"][rows].astype(np.int64)
        mask = np.where((kinds == ROUND_AFTER_RELINQUISH) & (line != 0), line, mask)
    expected = _next_clockwise(mask, anchor)
    got = sh.int_at("seat", rows)
    bad = (expected != 0) & (got != expected)
    out, messages, evidence = [], [], []
    for r, kind, a, m, want, seat in zip(*(x[bad].tolist() for x in
                                           (rows, kinds, anchor, mask, expected, got))):
        out.append(r)
        messages.append(f"dice offered to seat {seat}; seat {want} was next in turn")
        evidence.append({"expected_seat": want, "offered_seat": seat,
                         "round": "start_of_play" if kind == ROUND_START
                         else "after_relinquish",
                         "after_seat": a, "eligible_seats": seat_list(m)})
    return Hits(np.asarray(out, dtype=np.int64), messages, evidence)


@check("offer_line_bettors_only", "offer.ineligible_player")
def offer_line_bettors_only(ctx, params) -> Hits:
    """Dice offered, after a shooter relinquished, to a player without a Pass
    or Don't Pass wager where the rules offer them only to such players.

    Fires on: a `dice_offered` to seat 4 after a relinquishment while seat 4
    holds only a field bet.
    Quiet on: offers to players holding a line bet; offers at the start of play.
    Points at: the `dice_offered`.
    """
    rows, kinds = _offers(ctx)
    rows = rows[kinds == ROUND_AFTER_RELINQUISH]
    seats = ctx.shared.int_at("seat", rows)
    line_bettors = ctx.state["line_bettors"][rows].astype(np.int64)
    bad = ((line_bettors >> np.clip(seats, 0, 63)) & 1) == 0
    return Hits(rows[bad],
                [f"dice offered to seat {s}, which held no Pass or Don't Pass wager"
                 for s in seats[bad].tolist()])


@check("offer_complete_set", "offer.incomplete_set", ("offer_rounds",))
def offer_complete_set(ctx, params) -> Hits:
    """The offer was not of the complete set of dice at the table.

    Parameter: `offer_rounds` (`all`, or `after_relinquish` when the text read
    speaks only of offers after a shooter relinquishes, as NZ 1996 5.9).
    Fires on: five dice at the table, `dice_offered` names four.
    Quiet on: all five offered; the offer of the remaining dice to the shooter
    after a die left the table (rule 6.1); with `after_relinquish`, offers at
    the start of play.
    Points at: the `dice_offered`.
    """
    rows, missing = written(ctx, "offer_missing_dice")
    governed = in_sorted(_offers(ctx, params["offer_rounds"])[0], rows).tolist()
    keep = [(r, m) for r, m, ok in zip(rows, missing, governed) if ok]
    return Hits(np.asarray([r for r, _ in keep], dtype=np.int64),
                [f"offer left out die(s) {', '.join(m)} of the set" for _, m in keep],
                [{"missing_dice": m} for _, m in keep])


@check("offer_role", "offer.wrong_role",
       ("offer_roles", "offer_rounds", "boxperson_is_game_supervisor"))
def offer_role(ctx, params) -> Hits:
    """The dice were offered by a role the rules do not name.

    Parameters: `offer_roles` (stickperson; a dealer in NZ 1996),
    `offer_rounds` (`all`, or `after_relinquish` when the text read speaks only
    of offers after a shooter relinquishes), and `boxperson_is_game_supervisor`
    (either name of that position accepts both).
    Fires on: a boxperson offering the dice where only the stickperson may.
    Quiet on: the stickperson offering.
    Points at: the `dice_offered`.
    """
    sh = ctx.shared
    rows = _offers(ctx, params["offer_rounds"])[0]
    roles = position_roles(params["offer_roles"], params["boxperson_is_game_supervisor"])
    out = rows[~sh.is_in("actor_role", roles, rows)]
    return Hits(out, [f"dice offered by {role}; the rules name "
                      f"{' or '.join(params['offer_roles'])}"
                      for role in sh.values_at("actor_role", out)])
