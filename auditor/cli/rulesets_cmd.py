"""`auditor rulesets`: list, show, diff, check, new, test and docs. The work
is done in `auditor.rules` (describe, scaffold, cases, docs); these commands
only load, call and print."""

from __future__ import annotations

import os
from pathlib import Path

import click

from auditor.atomic import atomic_path
from auditor.errors import OutputError
from auditor.escape import one_line, terminal_safe
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
        auditor rulesets new my-casino --from nz-1996 --out my-casino.toml
        auditor rulesets check my-casino.toml
        auditor rulesets test rulesets/cases
        auditor rulesets docs nz-1996 --format html --out nz-1996.html
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
    click.echo(terminal_safe(describe.format_list(describe.load_shipped())))


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
    click.echo(terminal_safe(describe.describe_ruleset(ruleset_mod.load_ruleset(ref))))


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
    click.echo(terminal_safe(describe.format_diff(describe.diff_rulesets(left, right))))


@rulesets_group.command("check")
@click.argument("file", metavar="FILE")
def check_command(file):
    """Validate a ruleset file: keys, checks, codes, parameters and `extends`.

    Prints `OK: <id> (<n> rules, status <status>, hash <hash>)` and exits 0,
    or prints the first problem, naming the file, the rule id and the key,
    and exits 2.

    \b
    Example:
        auditor rulesets check rulesets/nz-1996.toml
        auditor rulesets check my-casino.toml
    """
    rs = ruleset_mod.load_ruleset(file)  # a RulesetError becomes "error: ..." and exit 2
    n = len(describe.regulatory_rules(rs))
    click.echo(one_line(f"OK: {rs.id} ({n} rules, status {rs.status}, hash {rs.content_hash})"))


@rulesets_group.command("new")
@click.argument("new_id", metavar="ID")
@click.option("--from", "base", required=True, metavar="ID|FILE",
              help="The ruleset the new one extends (a shipped id or a .toml file).")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the file here (default: print it).")
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
def new_command(new_id, base, out, force):
    """Start a ruleset: a TOML file that extends another, every inherited
    rule and parameter listed as a commented-out override.

    As written, the file loads, validates and judges exactly as the one it
    extends. Uncomment and edit what differs in your jurisdiction (a clause,
    a severity, a parameter); `enabled = false` removes a rule. Disabling or
    lowering an inherited rule is reported in every audit that uses the file.

    \b
    Example:
        auditor rulesets new nz-2026 --from nz-1996 --out rulesets/nz-2026.toml
        auditor rulesets new my-casino --from nz-table-games > my-casino.toml
    """
    from auditor.app import scaffold

    target = Path(out) if out else None
    if target is not None and target.exists() and not force:
        raise OutputError(f"{target}: already exists (use --force to overwrite)")
    text = scaffold.scaffold(new_id, base, target)
    if target is None:
        scaffold.validate_text(text)  # as written, it must load
        click.echo(text, nl=False)
        return
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
        rs = ruleset_mod.load_ruleset(str(tmp))  # as written, it must load
        _readable(tmp)
    click.echo(one_line(f"Written: {target} ({rs.id}, extends {base}, "
                        f"{len(describe.regulatory_rules(rs))} rules inherited)"), err=True)


@rulesets_group.command("test")
@click.argument("path", metavar="PATH", type=click.Path())
@click.option("--ruleset", "-r", "ruleset_ref", default=None, metavar="ID|FILE",
              help="Judge the cases by this ruleset instead of the one the folder names.")
def test_command(path, ruleset_ref):
    """Run a folder of rule test cases: logs beside the findings expected.

    A case is NAME.csv (or .jsonl, .parquet) beside NAME.expect, whose
    lines are `code seq` or `code table seq` (`#` comments); an empty
    expect file is a lawful case that must give no finding. A folder
    `<id>` is judged by `<id>.toml` two levels up, else the shipped ruleset
    `<id>`. PATH is a case folder or a folder of case folders.

    Prints PASS or FAIL per case, with the missing and unexpected findings.
    Exit 0 when every case passes, 1 when one fails, 2 when a case folder is
    broken (a log without its expect file, an unreadable expect line: each
    named by file and line).

    \b
    Example:
        auditor rulesets test rulesets/cases
        auditor rulesets test my-cases/my-casino --ruleset my-casino.toml
    """
    from auditor.app import cases

    run = cases.run_cases(Path(path), ruleset_ref)
    for result in run.results:
        for line in cases.format_result(result):
            click.echo(one_line(line))
    for problem in run.problems:
        click.echo(one_line(f"error: {problem}"), err=True)
    click.echo(cases.format_totals(run))
    raise SystemExit(run.exit_code)


@rulesets_group.command("docs")
@click.argument("ref", metavar="ID|FILE")
@click.option("--format", "fmt", type=click.Choice(("md", "html")), default="md",
              show_default=True, help="Markdown or a self-contained HTML page.")
@click.option("--out", "out", type=click.Path(dir_okay=False), default=None,
              help="Write the reference here (default: print it).")
@click.option("--cases", "cases_dir", type=click.Path(file_okay=False), default=None,
              help="The ruleset's test-case folder, to name its cases (default: "
                   "rulesets/cases/<id> beside the shipped rulesets, if present).")
def docs_command(ref, fmt, out, cases_dir):
    """Write the reference of a ruleset, generated from its TOML and the
    check registry.

    The header (title, jurisdiction, authority, source, status, notes), the
    parameters, and per rule: id, clause, code and its meaning, what the
    check looks at, its parameters, an example breach and the lawful case
    (from the check's documentation), and the ruleset's own test cases.

    \b
    Example:
        auditor rulesets docs nz-1996 --format md --out docs/rulesets/nz-1996.md
        auditor rulesets docs my-casino.toml --format html --out my-casino.html
    """
    from auditor.app import ruleset_docs as docs

    rs = ruleset_mod.load_ruleset(ref)
    text = docs.render(rs, fmt, Path(cases_dir) if cases_dir else None)
    if out is None:
        click.echo(text, nl=False)
        return
    with atomic_path(Path(out)) as tmp:
        tmp.write_text(text, encoding="utf-8")
        _readable(tmp)
    click.echo(one_line(f"Written: {out}"), err=True)


def _readable(path: Path) -> None:
    """A file meant to be read and shared: the usual permissions (the
    atomic writer's temporary file is private)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)
