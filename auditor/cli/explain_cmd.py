"""`auditor explain CODE`: what a violation code means, the check behind it
and which shipped rulesets enforce it; `auditor explain --list`: every code."""

from __future__ import annotations

from importlib.resources import files

import click

from auditor.codes import CODES
from auditor.escape import one_line
from auditor.rules import describe


def catalogue_path() -> str:
    """The violation catalogue as shipped in the package (a copy of
    `shared/spec/violations.md`), where this installation keeps it."""
    return str(files("auditor") / "_catalogue" / "violations.md")


@click.command("explain")
@click.argument("code", required=False)
@click.option("--list", "list_codes", is_flag=True,
              help="List every violation code with what it means, one per line.")
def explain_command(code, list_codes):
    """Explain a violation code: its meaning, the check(s) that report it
    (with an example breach under "Fires on:" and the lawful case under
    "Quiet on:") and each shipped ruleset's clause and severity for it.
    `--list` lists every code instead; the full catalogue ships with the
    package (`_catalogue/violations.md`, its path printed under the list).

    \b
    Example:
        auditor explain shooter.ineligible
        auditor explain dice.set_size
        auditor explain --list
    """
    if list_codes:
        if code is not None:
            raise click.UsageError("give a CODE or --list, not both")
        width = max(map(len, CODES))
        for name, meaning in CODES.items():
            click.echo(one_line(f"{name:<{width}}  {meaning}"))
        click.echo(f"\n{len(CODES)} codes; the catalogue: {catalogue_path()}")
        return
    if code is None:
        raise click.UsageError("give a violation CODE, or --list for every code")
    if code not in CODES:
        close = describe.close_codes(code)
        hint = f"; did you mean: {', '.join(close)}?" if close else \
            " (`auditor explain --list` lists every code, e.g. shooter.ineligible)"
        raise click.BadParameter(f"unknown code {code!r}{hint}", param_hint="CODE")
    click.echo(describe.describe_code(code, describe.load_shipped()))
    click.echo(f"\nThe violation catalogue (every code, the clauses per jurisdiction): "
               f"{catalogue_path()}")
