"""No roll checks (`noroll.*`): when a roll must be, may be and was voided, and by whom."""

from __future__ import annotations

import numpy as np

from auditor.checks.common import by_other_roles, next_after
from auditor.checks.parameters import position_roles
from auditor.checks.registry import Hits, Needs, check
from auditor.logs.schema import NO_ROLL_CONDITIONS


@check("mandatory_no_roll", "noroll.missing", ("mandatory_no_roll_conditions",),
       Needs(columns=("flags",)))
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
    sh = ctx.shared
    rolls = sh.event_rows("roll")
    flagged = np.zeros(len(rolls), dtype=bool)
    for c in conditions:
        flagged |= sh.flag(c, rolls)
    rows = rolls[flagged]
    rows = rows[~sh.written_at("roll_voided", rows) & _rolls_with_settlements(ctx, rows)]
    which = [[c for c, on in zip(conditions, flags) if on] for flags in
             zip(*(sh.flag(c, rows).tolist() for c in conditions))] if len(rows) else []
    return Hits(rows,
                [f"roll with {', '.join(w)} was not called a no roll and wagers were "
                 f"settled on it" for w in which], [{"conditions": w} for w in which])


def _rolls_with_settlements(ctx, rows: np.ndarray) -> np.ndarray:
    """Which of the roll `rows` are followed, before the next roll of their
    table (and its next `table_open`), by a settlement of any wager (a field
    or place bet paid on the roll is as much a settlement on it as a line
    bet)."""
    sh = ctx.shared
    limit = np.minimum(next_after(sh.event_rows("roll"), rows, sh.n), sh.session_end(rows))
    return next_after(sh.event_rows("wager_settled"), rows, sh.n) < limit


#: Roll flags that are grounds for a no roll (R 6.4 mandatory, 6.5 discretionary).
NO_ROLL_GROUNDS = (*NO_ROLL_CONDITIONS, "two_hands", "not_simultaneous", "short")


@check("no_roll_chips_contact", "noroll.improper", needs=Needs(columns=("flags",)))
def no_roll_chips_contact(ctx, params) -> Hits:
    """A no roll was declared only because the dice touched chips other than
    the bank's.

    Fires on: `no_roll` with reason `chips_contact` of a roll with no other
    ground for a no roll.
    Quiet on: a roll flagged `chips_contact` that stands and is called; a
    `chips_contact` no roll of a roll that also had a ground for one (e.g.
    `die_on_die`, `short`): that roll was void or voidable anyway. A no roll
    before any roll of its session (after a `table_open`) is about no roll:
    it fires, whatever the last roll of an earlier session was.
    Points at: the `no_roll`.
    """
    sh = ctx.shared
    rows = sh.event_rows("no_roll")
    rows = rows[sh.is_in("reason", ("chips_contact",), rows)]
    # The roll each no roll is about: the last of its session (the replay
    # starts a table afresh at each table_open; a no roll before any roll
    # of its session is about none).
    last = sh.latest(sh.event_rows("roll"), rows, resets=sh.event_rows("table_open"))
    grounded = np.zeros(len(rows), dtype=bool)
    for flag in NO_ROLL_GROUNDS:
        grounded |= sh.flag(flag, np.maximum(last, 0))
    out = rows[(last < 0) | ~grounded]
    return Hits(out,
                "no roll declared because the dice touched chips other than the bank")


@check("no_roll_timing", "noroll.late", needs=Needs(columns=("flags",)))
def no_roll_timing(ctx, params) -> Hits:
    """A no roll was called after the dice came to rest.

    Fires on: `no_roll` with flag `after_rest`.
    Quiet on: flag `before_rest` (or not recorded).
    Points at: the `no_roll`.
    """
    rows = ctx.shared.event_rows("no_roll")
    return Hits(rows[ctx.shared.flag("after_rest", rows)],
                "no roll called after the dice came to rest")


@check("no_roll_role", "noroll.wrong_role", ("no_roll_roles", "boxperson_is_game_supervisor"))
def no_roll_role(ctx, params) -> Hits:
    """A no roll was declared by someone other than the roles empowered.

    Parameters: `no_roll_roles` (`["stickperson", "game_supervisor"]`);
    `boxperson_is_game_supervisor` (either name of that position accepts both).
    Fires on: `no_roll` by a dealer.
    Quiet on: `no_roll` by the stickperson or the game supervisor.
    Points at: the `no_roll`.
    """
    roles = position_roles(params["no_roll_roles"], params["boxperson_is_game_supervisor"])
    return by_other_roles(ctx, "no_roll", roles, "no roll declared")
