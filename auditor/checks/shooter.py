"""Shooter checks: who may throw the dice, and when they must give them up."""

from __future__ import annotations

import numpy as np

from auditor.checks.common import expand, written
from auditor.checks.parameters import position_roles
from auditor.checks.registry import Hits, Needs, check


def _marker_off_exception_holds(ctx, rows: np.ndarray) -> np.ndarray:
    """SD 20:18:33:08(2): the previous shooter may throw without a line bet
    only with the marker off on the don't pass line, come or don't come
    wagers left to decide, and no other player willing to shoot. For each
    of the roll `rows`."""
    sh = ctx.shared
    return _truthy(sh.sparse_at("roll_marker_off", rows, None)) \
        & (_number(sh.sparse_at("roll_come_wagers", rows, None)) > 0) \
        & ~_truthy(sh.sparse_at("roll_other_line_bettors", rows, None)) \
        & _truthy(sh.sparse_at("roll_by_shooter", rows, None))


def _truthy(values: np.ndarray) -> np.ndarray:
    return np.fromiter((bool(v) for v in values), dtype=bool, count=len(values))


def _number(values: np.ndarray) -> np.ndarray:
    """`value or 0` of each value."""
    return np.fromiter((v or 0 for v in values), dtype=np.float64, count=len(values))


@check("line_bet_at_roll", "shooter.ineligible", ("eligibility", "no_shooter_fallback"))
def line_bet_at_roll(ctx, params) -> Hits:
    """A player rolled without an active Pass or Don't Pass wager.

    Parameters: `eligibility` (`every_roll`, or `come_out` for only come-out
    rolls); `no_shooter_fallback` (with `previous_shooter_marker_off`, a throw
    inside the SD (2) exception is lawful, and a previous shooter's throw
    outside it is ineligible with or without a point on: once the remaining
    come wagers are decided the game proceeds by the chapter, whatever the
    deciding roll did to the point).
    Fires on: a roll by the shooter at seat 3 after their pass bet was taken
    down with `wager_removed`.
    Quiet on: a roll by a shooter holding a pass or don't pass bet; the
    stickperson's throws (not a player); a marker-off throw inside SD (2).
    Points at: the roll.
    """
    sh = ctx.shared
    rows, has_bet = sh.sparse("roll_line_bet")
    rows = rows[~_truthy(has_bet)] if has_bet.dtype == object else rows[~has_bet.astype(bool)]
    point = ctx.state["point"][rows]
    keep = np.ones(len(rows), dtype=bool)
    marker_off = params["no_shooter_fallback"] == "previous_shooter_marker_off"
    if params["eligibility"] == "come_out":
        keep &= point == 0
        if marker_off:  # SD (2) governs the previous shooter's throws, point or not
            keep |= _truthy(sh.sparse_at("roll_after_point_made", rows, None))
    if marker_off:
        keep[keep] = ~_marker_off_exception_holds(ctx, rows[keep])
    out = rows[keep]
    return Hits(out, [f"seat {seat} rolled without an active Pass or Don't Pass wager"
                      for seat in sh.ints_at("seat", out)],
                [{"point_before": p} for p in point[keep].tolist()])


@check("shooter_accepted_dice", "shooter.not_accepted")
def shooter_accepted_dice(ctx, params) -> Hits:
    """Someone rolled who had not accepted the dice when offered, or a second
    player rolled while a shooter held the dice.

    Fires on: seat 5 rolls while seat 2 is the shooter; a player rolls after
    relinquishing without being offered and accepting the dice again.
    Quiet on: rolls by the player whose `dice_accepted` made them shooter.
    Points at: the roll.
    """
    sh = ctx.shared
    rows, by_shooter = sh.sparse("roll_by_shooter")
    out = rows[~_truthy(by_shooter)] if by_shooter.dtype == object \
        else rows[~by_shooter.astype(bool)]
    shooter = ctx.state["shooter"][out].tolist()
    messages = [f"seat {seat} rolled but the shooter was "
                + (f"seat {s}" if s else "nobody (no one had accepted the dice)")
                for seat, s in zip(sh.ints_at("seat", out), shooter)]
    return Hits(out, messages, [{"shooter_seat": int(s)} for s in shooter])


@check("pass_after_seven_out", "shooter.kept_after_seven_out")
def pass_after_seven_out(ctx, params) -> Hits:
    """The shooter rolled again after a 7 Out instead of passing the dice.

    Fires on: a valid 7 with a point on, then another roll by the same shooter
    with no `shooter_relinquish` and no new acceptance in between.
    Quiet on: a 7 Out followed by `shooter_relinquish` and a new offer.
    Points at: the second roll.
    """
    rows, by_shooter = ctx.shared.sparse("roll_by_shooter")
    # The players' rolls while a seat stands sevened out (a few stretches
    # between a 7 Out and the next acceptance or relinquishment), then those
    # by that seat as the shooter.
    seven_out = ctx.state["seven_out_seat"]
    held = np.flatnonzero(seven_out.values != 0)
    ends = np.append(seven_out.starts[1:], len(seven_out))[held]
    lo = np.searchsorted(rows, seven_out.starts[held])
    which, at = expand(lo, np.searchsorted(rows, ends) - lo)
    rows, seat = rows[at], seven_out.values[held][which]
    rows = rows[by_shooter[at].astype(bool) & (seat == ctx.shared.int_at("seat", rows))]
    return Hits(rows, "the shooter rolled again after a 7 Out without passing the dice")


@check("order_to_pass_authority", "shooter.order_to_pass_unauthorised",
       ("order_to_pass_roles", "boxperson_is_game_supervisor"))
def order_to_pass_authority(ctx, params) -> Hits:
    """A shooter was ordered to pass the dice by a role the ruleset does not
    empower.

    Parameters: `order_to_pass_roles` (e.g. `["game_supervisor"]`, or
    `["boxperson"]` in South Dakota); `boxperson_is_game_supervisor` (either
    name of that position accepts both).
    Fires on: `shooter_relinquish` with reason `ordered` and actor_role dealer.
    Quiet on: an order by an empowered role; voluntary and seven-out passes.
    Points at: the `shooter_relinquish`.
    """
    sh = ctx.shared
    rows = sh.event_rows("shooter_relinquish")
    rows = rows[sh.is_in("reason", ("ordered",), rows)
                & ~sh.is_in("actor_role", position_roles(
                    params["order_to_pass_roles"], params["boxperson_is_game_supervisor"]), rows)]
    return Hits(rows, [f"shooter ordered to pass by {role or 'an unrecorded role'}; "
                       f"only {', '.join(params['order_to_pass_roles'])} may"
                       for role in sh.values_at("actor_role", rows)])


@check("stickperson_throw_allowed", "shooter.stickperson_throw")
def stickperson_throw_allowed(ctx, params) -> Hits:
    """The stickperson threw although a willing eligible player was available,
    or no undetermined wager remained, or kept throwing after a decision.

    Fires on: a stickperson roll while a player with a pass bet has not
    declined the dice; a stickperson roll with no line or come wager on the
    layout; a second stickperson roll after the first decided the line.
    Quiet on: every line-bettor declined, wagers remain, no decision yet.
    Points at: the stickperson's roll.
    """
    rows, any_wager = written(ctx, "stick_any_wager")
    willing = ctx.state.lookup("stick_willing")
    after = ctx.state.lookup("stick_after_decision")
    roles = ctx.shared.values_at("actor_role", np.asarray(rows, dtype=np.int64))
    out, messages = [], []
    for r, wagers, role in zip(rows, any_wager, roles):
        if role != "stickperson":
            continue
        why = []
        if willing.get(r):
            why.append("a player with a line bet had not declined the dice")
        if not wagers:
            why.append("no undetermined wager remained")
        if after.get(r):
            why.append("a decision had already been reached")
        if why:
            out.append(r)
            messages.append("stickperson threw although " + "; ".join(why))
    return Hits(np.asarray(out, dtype=np.int64), messages)


@check("marker_off_throw_allowed", "shooter.marker_off_throw", needs=Needs(columns=("flags",)))
def marker_off_throw_allowed(ctx, params) -> Hits:
    """A previous shooter threw without a line bet outside the SD (2)
    conditions.

    Only a shooter who has made the come-out point is a "previous shooter"
    of (2), also when the dice come back to them through the offer round
    nobody else accepted; any other roll without a line bet is only
    `shooter.ineligible`.
    Fires on: the shooter rolls with no pass/don't pass bet while another
    player holds a line bet (and did not decline the dice in the round that
    gave them back), or no come/don't come wager remains (once the last of
    those left when the point was made is decided, none does), or the on/off
    marker is not off on the don't pass line.
    Quiet on: marker off on the don't pass line, come wagers left, nobody else
    with a line bet; and every roll by a shooter who holds a line bet.
    Points at: the roll.
    """
    sh = ctx.shared
    rows, has_bet = sh.sparse("roll_line_bet")
    rows = rows[~_truthy(has_bet)] if has_bet.dtype == object else rows[~has_bet.astype(bool)]
    # SD (2) speaks of a shooter who has made the come-out point.
    rows = rows[_truthy(sh.sparse_at("roll_after_point_made", rows, None))]
    marker_off = _truthy(sh.sparse_at("roll_marker_off", rows, None))
    come = _truthy(sh.sparse_at("roll_come_wagers", rows, None))
    others = _truthy(sh.sparse_at("roll_other_line_bettors", rows, None))
    bad = ~marker_off | ~come | others
    out, messages = rows[bad], []
    for m, c, o in zip(marker_off[bad], come[bad], others[bad]):
        why = []
        if not m:
            why.append("the on/off marker was not off on the don't pass line")
        if not c:
            why.append("no come or don't come wager remained")
        if o:
            why.append("another player held a line bet and could shoot")
        messages.append("shooter threw without a line bet: " + "; ".join(why))
    return Hits(out, messages)
