"""No roll, dispute and overrule checks: voiding a roll, deciding a face, and
who may overrule whom."""

from __future__ import annotations

import numpy as np

from auditor.checks.common import by_other_roles, col, event_is, has_flag, latest
from auditor.checks.registry import Hits, check
from auditor.logs.schema import NO_ROLL_CONDITIONS


@check("mandatory_no_roll", "noroll.missing", ("mandatory_no_roll_conditions",))
def mandatory_no_roll(ctx, params) -> Hits:
    """A roll with a mandatory no-roll condition was not voided and wagers
    were settled on it.

    Parameter: `mandatory_no_roll_conditions` (die off the table, one die on
    the other, on the bank's chips, in the bowl or on a rail, more than one
    face on an object, fraudulent or unapproved die, uncallable, thrown by
    someone other than the shooter).
    Fires on: a roll flagged `die_on_die`, no `no_roll`, then a `wager_settled`
    of any wager (line bet or not) before the next roll.
    Quiet on: the same roll followed by a `no_roll`; a roll that only touched
    chips other than the bank (`chips_contact`).
    Points at: the roll.
    """
    conditions = params["mandatory_no_roll_conditions"]
    is_roll = event_is(ctx, "roll")
    flagged = np.zeros(len(is_roll), dtype=bool)
    which: dict[int, list[str]] = {}
    for c in conditions:
        m = is_roll & has_flag(ctx, c)
        for r in np.flatnonzero(m):
            which.setdefault(r, []).append(c)
        flagged |= m
    voided = ctx.state.mask("roll_voided")
    rows = np.flatnonzero(flagged & ~voided & _rolls_with_settlements(ctx))
    return Hits(rows,
                [f"roll with {', '.join(which[r])} was not called a no roll and wagers were "
                 f"settled on it" for r in rows], [{"conditions": which[r]} for r in rows])


def _rolls_with_settlements(ctx) -> np.ndarray:
    """Rolls followed, before the next roll of their table (and its next
    `table_open`), by a settlement of any wager (a field or place bet paid on
    the roll is as much a settlement on it as a line bet): a row mask."""
    is_settle = event_is(ctx, "wager_settled")
    last = latest(ctx, event_is(ctx, "roll"), resets=event_is(ctx, "table_open"))
    out = np.zeros(len(is_settle), dtype=bool)
    on = last[is_settle]
    out[on[on >= 0]] = True
    return out


#: Roll flags that are grounds for a no roll (R 6.4 mandatory, 6.5 discretionary).
NO_ROLL_GROUNDS = (*NO_ROLL_CONDITIONS, "two_hands", "not_simultaneous", "short")


@check("no_roll_chips_contact", "noroll.improper")
def no_roll_chips_contact(ctx, params) -> Hits:
    """A no roll was declared only because the dice touched chips other than
    the bank's.

    Fires on: `no_roll` with reason `chips_contact` of a roll with no other
    ground for a no roll.
    Quiet on: a roll flagged `chips_contact` that stands and is called; a
    `chips_contact` no roll of a roll that also had a ground for one (e.g.
    `die_on_die`, `short`): that roll was void or voidable anyway.
    Points at: the `no_roll`.
    """
    is_roll = event_is(ctx, "roll")
    is_chips = event_is(ctx, "no_roll") & (col(ctx, "reason") == "chips_contact").to_numpy()
    grounded = np.zeros(len(is_roll), dtype=bool)
    for flag in NO_ROLL_GROUNDS:
        grounded |= has_flag(ctx, flag)
    rows = np.flatnonzero(is_chips)
    last = latest(ctx, is_roll)[rows]  # the roll each no roll is about
    out = rows[(last < 0) | ~grounded[np.maximum(last, 0)]]
    return Hits(out,
                "no roll declared because the dice touched chips other than the bank")


@check("no_roll_timing", "noroll.late")
def no_roll_timing(ctx, params) -> Hits:
    """A no roll was called after the dice came to rest.

    Fires on: `no_roll` with flag `after_rest`.
    Quiet on: flag `before_rest` (or not recorded).
    Points at: the `no_roll`.
    """
    mask = event_is(ctx, "no_roll") & has_flag(ctx, "after_rest")
    return Hits(np.flatnonzero(mask), "no roll called after the dice came to rest")


@check("no_roll_role", "noroll.wrong_role", ("no_roll_roles",))
def no_roll_role(ctx, params) -> Hits:
    """A no roll was declared by someone other than the roles empowered.

    Parameter: `no_roll_roles` (`["stickperson", "game_supervisor"]`).
    Fires on: `no_roll` by a dealer.
    Quiet on: `no_roll` by the stickperson or the game supervisor.
    Points at: the `no_roll`.
    """
    return by_other_roles(ctx, "no_roll", params["no_roll_roles"], "no roll declared")


@check("dispute_ruling_role", "dispute.wrong_role", ("dispute_roles",))
def dispute_ruling_role(ctx, params) -> Hits:
    """A face dispute was decided by someone other than the empowered roles.

    Parameter: `dispute_roles` (`["game_supervisor"]`).
    Fires on: a `ruling` by the stickperson.
    Quiet on: a `ruling` by the game supervisor.
    Points at: the `ruling`.
    """
    return by_other_roles(ctx, "ruling", params["dispute_roles"], "dispute decided")


@check("overrule_authority", "overrule.authority", ("overrule_authority",))
def overrule_authority(ctx, params) -> Hits:
    """An overrule by a role without authority over the role overruled.

    Parameter: `overrule_authority`, a table of role = [roles it may
    overrule], e.g. `game_supervisor = ["stickperson"]`.
    Fires on: a dealer overruling the stickperson; a game supervisor
    overruling a pit manager.
    Quiet on: the game supervisor overruling the stickperson.
    Points at: the `overrule`.
    """
    authority = params["overrule_authority"]
    rows = np.flatnonzero(event_is(ctx, "overrule"))
    roles, reasons = col(ctx, "actor_role"), col(ctx, "reason")
    out = [r for r in rows if reasons.iat[r] not in authority.get(roles.iat[r], [])]
    return Hits(np.asarray(out, dtype=np.int64),
                [f"{roles.iat[r]} has no authority to overrule {reasons.iat[r]}" for r in out])
