"""Call checks (`call.*`): the stickperson calls the total of every roll."""

from __future__ import annotations

import numpy as np

from auditor.checks.common import by_other_roles
from auditor.checks.parameters import position_roles
from auditor.checks.registry import Hits, Needs, check


@check("total_called", "call.missing")
def total_called(ctx, params) -> Hits:
    """No total was called after a valid roll.

    Fires on: a roll that stood with no `total_called` before the next roll.
    Quiet on: a `total_called` after it; a roll voided by a no roll.
    Points at: the roll.
    """
    sh = ctx.shared
    rows = sh.sparse_rows("roll_total")
    out = rows[~sh.written_at("call_row", rows) & ~sh.written_at("roll_voided", rows)]
    return Hits(out, "no total was called after the roll")


@check("called_total_correct", "call.wrong_total", needs=Needs(events=("roll", "total_called")))
def called_total_correct(ctx, params) -> Hits:
    """The called total is not the sum of the uppermost faces (a cocked die
    counts the face opposite the one resting on the object; a dispute ruling
    fixes a face).

    Fires on: a roll of 3 and 4 called `total = 8`; a cocked die resting on 2
    (counts 5) beside a 3, called 5.
    Quiet on: the correct sum; a cocked die read by its opposite face.
    Points at: the `total_called`. An `overrule` that corrects the call is
    recorded in the evidence; the finding stays.
    """
    sh = ctx.shared
    rows, roll_rows = sh.sparse("call_roll")
    want = sh.sparse_at("roll_counted_total", roll_rows, np.nan).astype(float)
    called = sh.events["total"].array[rows].to_numpy(dtype=float, na_value=np.nan) \
        if len(rows) else np.empty(0)
    wrong = ~np.isnan(want) & ~np.isnan(called) & (want != called)
    overrules = _overrules_after(ctx, rows[wrong]) if wrong.any() else {}
    seq = sh.seq
    out, messages, evidence = [], [], []
    for r, rr, got, right in zip(rows[wrong].tolist(), np.asarray(roll_rows)[wrong].tolist(),
                                 called[wrong], want[wrong]):
        out.append(r)
        messages.append(f"called {int(got)}; the dice showed {int(right)}")
        ev = {"called": int(got), "counted": int(right), "roll_seq": int(seq[rr])}
        if r in overrules:
            ev["overruled_by"] = overrules[r]
        evidence.append(ev)
    return Hits(np.asarray(out, dtype=np.int64), messages, evidence)


def _overrules_after(ctx, calls: np.ndarray) -> dict[int, dict]:
    """Which of the `calls` are followed (before the next roll, call or
    `table_open`, at the same table) by an overrule: the last such overrule,
    who made it."""
    sh = ctx.shared
    overs = sh.event_rows("overrule")
    if not len(overs) or not len(calls):
        return {}
    calls = np.asarray(calls, dtype=np.int64)
    limit = np.minimum(sh.next_event(calls, "roll", "table_open", "total_called"),
                       sh.table_end(calls))
    at = np.searchsorted(overs, limit, side="left") - 1
    last = np.where(at >= 0, overs[np.maximum(at, 0)], -1)
    hit = last > calls
    roles = sh.values_at("actor_role", last[hit])
    return {c: {"seq": int(sh.seq[o]), "role": role}
            for c, o, role in zip(calls[hit].tolist(), last[hit].tolist(), roles)}


@check("caller_role", "call.wrong_role", ("caller_roles", "boxperson_is_game_supervisor"),
       Needs(events=("roll", "total_called")))
def caller_role(ctx, params) -> Hits:
    """The total was called by someone other than the stickperson.

    Parameters: `caller_roles` (`["stickperson"]`); `boxperson_is_game_supervisor`
    (either name of that position accepts both).
    Fires on: `total_called` by a dealer.
    Quiet on: `total_called` by the stickperson.
    Points at: the `total_called`.
    """
    roles = position_roles(params["caller_roles"], params["boxperson_is_game_supervisor"])
    return by_other_roles(ctx, "total_called", roles, "total called")
