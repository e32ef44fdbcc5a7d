"""`auditor rulesets`: list, show, diff and check rulesets. The text comes
from `auditor.rules.describe`; these commands only load and print."""

from __future__ import annotations

import click

from auditor.rules import describe
from auditor.rules import ruleset as ruleset_mod


@click.group("rulesets")
def rulesets_group():
    """List, show, compare and validate rulesets (one TOML file per jurisdiction).

    A ruleset is named by the id of a shipped ruleset (see `auditor rulesets
    list`) or by the path of a .toml file.

    \b
    Example:
        auditor rulesets list
        auditor rulesets show nz-1996
        auditor rulesets diff nz-1996 sd-20-18-33
        auditor rulesets check my-casino.toml
    """


@rulesets_group.command("list")
def list_command():
    """One line per shipped ruleset: id, title, status and number of rules.

    The count is of regulatory rules (the `log.*` rules run in every audit
    and are not counted). A shipped file that does not load is listed as
    INVALID with the reason; the others are still listed.

    \b
    Example:
        auditor rulesets list
    """
    click.echo(describe.format_list(describe.load_shipped()))


@rulesets_group.command("show")
@click.argument("ref", metavar="ID|FILE")
def show_command(ref):
    """Print a ruleset in full, after resolving `extends`.

    The header (source, content hash, the files of the extends chain, rules
    disabled along it), the jurisdiction parameters, then every rule: id,
    code, severity, clause, summary, check and the parameters the check reads.

    \b
    Example:
        auditor rulesets show nz-1996
        auditor rulesets show rulesets/my-casino.toml
    """
    click.echo(describe.describe_ruleset(ruleset_mod.load_ruleset(ref)))


@rulesets_group.command("diff")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
def diff_command(a, b):
    """Compare two rulesets side by side, as a regulator would.

    Lists parameters whose values differ, rules only one of them enforces
    (rules are matched by code, since rule ids differ between jurisdictions)
    and rules with the same code whose check, clause, severity or own
    parameters differ. Prints "identical" when nothing differs.

    \b
    Example:
        auditor rulesets diff nz-1996 sd-20-18-33
        auditor rulesets diff nz-1996 my-casino.toml
    """
    left, right = ruleset_mod.load_ruleset(a), ruleset_mod.load_ruleset(b)
    click.echo(describe.format_diff(describe.diff_rulesets(left, right)))


@rulesets_group.command("check")
@click.argument("file", metavar="FILE")
def check_command(file):
    """Validate a ruleset file: keys, checks, codes, parameters and `extends`.

    Prints `OK: <id> (<n> rules, status <status>, hash <hash>)` and exits 0,
    or prints the first problem, naming the file, the rule id and the key,
    and exits 2.

    \b
    Example:
        auditor rulesets check my-casino.toml
    """
    rs = ruleset_mod.load_ruleset(file)  # a RulesetError becomes "error: ..." and exit 2
    n = len(describe.regulatory_rules(rs))
    click.echo(f"OK: {rs.id} ({n} rules, status {rs.status}, hash {rs.content_hash})")
