"""Shooter checks: who may throw the dice, and when they must give them up."""

from __future__ import annotations

import numpy as np

from auditor.checks.common import col, event_is, role_in, written
from auditor.checks.registry import Hits, check


def _player_rolls(ctx, name: str) -> tuple[np.ndarray, list]:
    return written(ctx, name)


def _marker_off_exception_holds(ctx, r: int) -> bool:
    """SD 20:18:33:08(2): the previous shooter may throw without a line bet
    only with the marker off on the don't pass line, come or don't come
    wagers left to decide, and no other player willing to shoot."""
    st = ctx.state
    return bool(st.at("roll_marker_off", r)) and (st.at("roll_come_wagers", r) or 0) > 0 \
        and not st.at("roll_other_line_bettors", r) and bool(st.at("roll_by_shooter", r))


@check("line_bet_at_roll", "shooter.ineligible", ("eligibility", "no_shooter_fallback"))
def line_bet_at_roll(ctx, params) -> Hits:
    """A player rolled without an active Pass or Don't Pass wager.

    Parameters: `eligibility` (`every_roll`, or `come_out` for only come-out
    rolls); `no_shooter_fallback` (with `previous_shooter_marker_off`, a throw
    inside the SD (2) exception is lawful).
    Fires on: a roll by the shooter at seat 3 after their pass bet was taken
    down with `wager_removed`.
    Quiet on: a roll by a shooter holding a pass or don't pass bet; the
    stickperson's throws (not a player); a marker-off throw inside SD (2).
    Points at: the roll.
    """
    rows, has_bet = written(ctx, "roll_line_bet")
    point = ctx.state["point"]
    out, messages = [], []
    for r, ok in zip(rows, has_bet):
        if ok:
            continue
        if params["eligibility"] == "come_out" and point[r] != 0:
            continue
        if params["no_shooter_fallback"] == "previous_shooter_marker_off" and \
                _marker_off_exception_holds(ctx, r):
            continue
        out.append(r)
        messages.append(f"seat {ctx.events['seat'].iat[r]} rolled without an active Pass or "
                        f"Don't Pass wager")
    return Hits(np.asarray(out, dtype=np.int64), messages,
                [{"point_before": int(point[r])} for r in out])


@check("shooter_accepted_dice", "shooter.not_accepted")
def shooter_accepted_dice(ctx, params) -> Hits:
    """Someone rolled who had not accepted the dice when offered, or a second
    player rolled while a shooter held the dice.

    Fires on: seat 5 rolls while seat 2 is the shooter; a player rolls after
    relinquishing without being offered and accepting the dice again.
    Quiet on: rolls by the player whose `dice_accepted` made them shooter.
    Points at: the roll.
    """
    rows, by_shooter = written(ctx, "roll_by_shooter")
    shooter = ctx.state["shooter"]
    seats = ctx.events["seat"]
    out = [r for r, ok in zip(rows, by_shooter) if not ok]
    messages = [f"seat {seats.iat[r]} rolled but the shooter was "
                + (f"seat {shooter[r]}" if shooter[r] else "nobody (no one had accepted the dice)")
                for r in out]
    return Hits(np.asarray(out, dtype=np.int64), messages,
                [{"shooter_seat": int(shooter[r])} for r in out])


@check("pass_after_seven_out", "shooter.kept_after_seven_out")
def pass_after_seven_out(ctx, params) -> Hits:
    """The shooter rolled again after a 7 Out instead of passing the dice.

    Fires on: a valid 7 with a point on, then another roll by the same shooter
    with no `shooter_relinquish` and no new acceptance in between.
    Quiet on: a 7 Out followed by `shooter_relinquish` and a new offer.
    Points at: the second roll.
    """
    rows, _ = written(ctx, "roll_after_seven_out")
    return Hits(rows, "the shooter rolled again after a 7 Out without passing the dice")


@check("order_to_pass_authority", "shooter.order_to_pass_unauthorised", ("order_to_pass_roles",))
def order_to_pass_authority(ctx, params) -> Hits:
    """A shooter was ordered to pass the dice by a role the ruleset does not
    empower.

    Parameter: `order_to_pass_roles` (e.g. `["game_supervisor"]`, or
    `["boxperson"]` in South Dakota).
    Fires on: `shooter_relinquish` with reason `ordered` and actor_role dealer.
    Quiet on: an order by an empowered role; voluntary and seven-out passes.
    Points at: the `shooter_relinquish`.
    """
    mask = event_is(ctx, "shooter_relinquish") & (col(ctx, "reason") == "ordered").to_numpy() \
        & ~role_in(ctx, params["order_to_pass_roles"])
    rows = np.flatnonzero(mask)
    roles = col(ctx, "actor_role")
    return Hits(rows, [f"shooter ordered to pass by {roles.iat[r] or 'an unrecorded role'}; "
                       f"only {', '.join(params['order_to_pass_roles'])} may" for r in rows])


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
    roles = col(ctx, "actor_role")
    out, messages = [], []
    for r, wagers in zip(rows, any_wager):
        if roles.iat[r] != "stickperson":
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


@check("marker_off_throw_allowed", "shooter.marker_off_throw")
def marker_off_throw_allowed(ctx, params) -> Hits:
    """A previous shooter threw without a line bet outside the SD (2)
    conditions.

    Only a shooter who has made the come-out point is a "previous shooter"
    of (2); any other roll without a line bet is only `shooter.ineligible`.
    Fires on: the shooter rolls with no pass/don't pass bet while another
    player holds a line bet, or no come/don't come wager remains, or the on/off
    marker is not off on the don't pass line.
    Quiet on: marker off on the don't pass line, come wagers left, nobody else
    with a line bet; and every roll by a shooter who holds a line bet.
    Points at: the roll.
    """
    rows, has_bet = written(ctx, "roll_line_bet")
    st = ctx.state
    out, messages = [], []
    for r, ok in zip(rows, has_bet):
        if ok or not st.at("roll_after_point_made", r):
            continue  # SD (2) speaks of a shooter who has made the come-out point
        why = []
        if not st.at("roll_marker_off", r):
            why.append("the on/off marker was not off on the don't pass line")
        if not st.at("roll_come_wagers", r):
            why.append("no come or don't come wager remained")
        if st.at("roll_other_line_bettors", r):
            why.append("another player held a line bet and could shoot")
        if why:
            out.append(r)
            messages.append("shooter threw without a line bet: " + "; ".join(why))
    return Hits(np.asarray(out, dtype=np.int64), messages)
