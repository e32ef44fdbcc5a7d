"""Throw checks (`throw.*`): how the dice are thrown."""

from __future__ import annotations

from auditor.checks.registry import Hits, Needs, check


def _throw_fault(name: str, code: str, flag: str, message: str, doc: str):
    """Register the check `name`: a roll flagged `flag` that stood (or any,
    with `include_voided_rolls`) breaks it with `message`."""
    def throw_fault(ctx, params) -> Hits:
        sh = ctx.shared
        rows = sh.event_rows("roll")
        rows = rows[sh.flag(flag, rows)]
        if not params["include_voided_rolls"]:
            rows = rows[~sh.written_at("roll_voided", rows)]
        return Hits(rows, message)

    throw_fault.__name__ = throw_fault.__qualname__ = name
    throw_fault.__doc__ = doc
    return check(name, code, ("include_voided_rolls",), Needs(columns=("flags",)))(throw_fault)


one_hand_throw = _throw_fault("one_hand_throw", "throw.two_hands", "two_hands",
                              "the shooter used two hands", """The shooter handled or threw the dice with two hands.

    Parameter: `include_voided_rolls` (false: a roll voided by a no roll is
    taken as the table having dealt with the fault).
    Fires on: a roll flagged `two_hands` that stood.
    Quiet on: `one_hand`; a `two_hands` roll voided by a no roll.
    Points at: the roll.
    """)

simultaneous_release = _throw_fault("simultaneous_release", "throw.not_simultaneous",
                                    "not_simultaneous",
                                    "the dice did not leave the hand simultaneously", """The dice did not leave the shooter's hand simultaneously.

    Parameter: `include_voided_rolls`.
    Fires on: a roll flagged `not_simultaneous` that stood.
    Quiet on: `simultaneous`; the roll voided by a no roll.
    Points at: the roll.
    """)

far_end_throw = _throw_fault("far_end_throw", "throw.short", "short",
                             "the dice did not strike the far end", """The dice did not strike the far end of the table.

    Parameter: `include_voided_rolls`.
    Fires on: a roll flagged `short` that stood.
    Quiet on: `far_end`; the roll voided by a no roll.
    Points at: the roll.
    """)
