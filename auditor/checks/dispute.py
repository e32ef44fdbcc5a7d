"""Dispute checks (`dispute.*`): who may decide a disputed face."""

from __future__ import annotations

from auditor.checks.common import by_other_roles
from auditor.checks.registry import Hits, check


@check("dispute_ruling_role", "dispute.wrong_role", ("dispute_roles",))
def dispute_ruling_role(ctx, params) -> Hits:
    """A face dispute was decided by someone other than the empowered roles.

    Parameter: `dispute_roles` (`["game_supervisor"]`).
    Fires on: a `ruling` by the stickperson.
    Quiet on: a `ruling` by the game supervisor.
    Points at: the `ruling`.
    """
    return by_other_roles(ctx, "ruling", params["dispute_roles"], "dispute decided")
