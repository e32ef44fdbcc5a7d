"""Dispute checks (`dispute.*`): who may decide a disputed face."""

from __future__ import annotations

from auditor.checks.common import by_other_roles
from auditor.checks.parameters import position_roles
from auditor.checks.registry import Hits, check


@check("dispute_ruling_role", "dispute.wrong_role",
       ("dispute_roles", "boxperson_is_game_supervisor"))
def dispute_ruling_role(ctx, params) -> Hits:
    """A face dispute was decided by someone other than the empowered roles.

    Parameters: `dispute_roles` (`["game_supervisor"]`); `boxperson_is_game_supervisor`
    (either name of that position accepts both).
    Fires on: a `ruling` by the stickperson.
    Quiet on: a `ruling` by the game supervisor.
    Points at: the `ruling`.
    """
    roles = position_roles(params["dispute_roles"], params["boxperson_is_game_supervisor"])
    return by_other_roles(ctx, "ruling", roles, "dispute decided")
