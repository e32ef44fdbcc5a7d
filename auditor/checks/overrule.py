"""Overrule checks (`overrule.*`): who may overrule whom."""

from __future__ import annotations

import numpy as np

from auditor.checks.parameters import position_authority
from auditor.checks.registry import Hits, check


@check("overrule_authority", "overrule.authority",
       ("overrule_authority", "boxperson_is_game_supervisor"))
def overrule_authority(ctx, params) -> Hits:
    """An overrule by a role without authority over the role overruled.

    Parameter: `overrule_authority`, a table of role = [roles it may
    overrule], e.g. `game_supervisor = ["stickperson"]`;
    `boxperson_is_game_supervisor` (either name of that position stands for both).
    Fires on: a dealer overruling the stickperson; a game supervisor
    overruling a pit manager.
    Quiet on: the game supervisor overruling the stickperson.
    Points at: the `overrule`.
    """
    authority = position_authority(params["overrule_authority"],
                                   params["boxperson_is_game_supervisor"])
    sh = ctx.shared
    rows = sh.event_rows("overrule")
    roles, reasons = sh.values_at("actor_role", rows), sh.values_at("reason", rows)
    out = [(r, role, reason) for r, role, reason in zip(rows.tolist(), roles, reasons)
           if reason not in authority.get(role, [])]
    return Hits(np.asarray([r for r, _, _ in out], dtype=np.int64),
                [f"{role} has no authority to overrule {reason}" for _, role, reason in out])
