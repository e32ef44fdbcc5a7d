"""`auditor explain CODE`: what a violation code means, the check behind it
and which shipped rulesets enforce it."""

from __future__ import annotations

import click

from auditor.codes import CODES
from auditor.rules import describe


@click.command("explain")
@click.argument("code")
def explain_command(code):
    """Explain a violation code: its meaning, the check(s) that report it
    (with an example breach under "Fires on:" and the lawful case under
    "Quiet on:") and each shipped ruleset's clause and severity for it.

    \b
    Example:
        auditor explain shooter.ineligible
        auditor explain dice.set_size
    """
    if code not in CODES:
        close = describe.close_codes(code)
        hint = f"; did you mean: {', '.join(close)}?" if close else \
            " (codes are listed in shared/spec/violations.md, e.g. shooter.ineligible)"
        raise click.BadParameter(f"unknown code {code!r}{hint}", param_hint="CODE")
    click.echo(describe.describe_code(code, describe.load_shipped()))
