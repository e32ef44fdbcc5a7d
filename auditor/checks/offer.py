"""Offer checks: to whom, in what order, by whom and what dice are offered."""

from __future__ import annotations

import numpy as np

from auditor.checks.common import col, role_in, seat_list, written
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


def _offers(ctx, offer_rounds: str = "all"):
    """(row, round kind) of the offers a rule governs. Replacement offers
    after a die left the table (rule 6.1) are never among them."""
    rows, rounds = written(ctx, "offer_round")
    governed = ROUNDS[offer_rounds]
    return [(r, k) for r, k in zip(rows, rounds) if k in governed]


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
    st = ctx.state
    seats = ctx.events["seat"].to_numpy(dtype=np.int64, na_value=0)
    anchors, opens = st.lookup("offer_anchor"), st.lookup("offer_open_seat")
    occupied, line_bettors = st["occupied"], st["line_bettors"]
    out, messages, evidence = [], [], []
    for r, kind in _offers(ctx, params["offer_rounds"]):
        anchor = int(anchors[int(r)])
        mask = int(occupied[r])
        if kind == ROUND_START and anchor == 0:
            open_seat = int(opens.get(int(r)) or 0)
            if params["first_offer_anchor"] == "table_open_seat" and open_seat:
                anchor = open_seat - 1
        if kind == ROUND_AFTER_RELINQUISH and params["skip_players_without_line_bet"]:
            line = int(line_bettors[r])
            if line:
                mask = line
        expected = next_clockwise(mask, anchor)
        got = int(seats[r])
        if expected and got != expected:
            out.append(r)
            messages.append(f"dice offered to seat {got}; seat {expected} was next in turn")
            evidence.append({"expected_seat": expected, "offered_seat": got,
                             "round": "start_of_play" if kind == ROUND_START
                             else "after_relinquish",
                             "after_seat": anchor, "eligible_seats": seat_list(mask)})
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
    seats = ctx.events["seat"].to_numpy(dtype=np.int64, na_value=0)
    line_bettors = ctx.state["line_bettors"]
    out = [r for r, kind in _offers(ctx) if kind == ROUND_AFTER_RELINQUISH
           and not (int(line_bettors[r]) >> int(seats[r])) & 1]
    return Hits(np.asarray(out, dtype=np.int64),
                [f"dice offered to seat {seats[r]}, which held no Pass or Don't Pass wager"
                 for r in out])


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
    governed = {r for r, _ in _offers(ctx, params["offer_rounds"])}
    keep = [(r, m) for r, m in zip(rows, missing) if r in governed]
    return Hits(np.asarray([r for r, _ in keep], dtype=np.int64),
                [f"offer left out die(s) {', '.join(m)} of the set" for _, m in keep],
                [{"missing_dice": m} for _, m in keep])


@check("offer_role", "offer.wrong_role", ("offer_roles", "offer_rounds"))
def offer_role(ctx, params) -> Hits:
    """The dice were offered by a role the rules do not name.

    Parameters: `offer_roles` (stickperson; a dealer in NZ 1996), and
    `offer_rounds` (`all`, or `after_relinquish` when the text read speaks only
    of offers after a shooter relinquishes).
    Fires on: a boxperson offering the dice where only the stickperson may.
    Quiet on: the stickperson offering.
    Points at: the `dice_offered`.
    """
    allowed = role_in(ctx, params["offer_roles"])
    roles = col(ctx, "actor_role")
    out = []
    for r, _ in _offers(ctx, params["offer_rounds"]):
        if not allowed[r]:
            out.append(r)
    return Hits(np.asarray(out, dtype=np.int64),
                [f"dice offered by {roles.iat[r]}; the rules name "
                 f"{' or '.join(params['offer_roles'])}" for r in out])
