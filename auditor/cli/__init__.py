"""The `auditor` command. Commands are thin wrappers over library functions;
expected failures become one clear line and exit code 2, never a traceback
(unless `--debug`).

Exit codes: 0 no findings at or above the fail threshold; 1 findings at or
above it (or, for `validate`, any format problem); 2 the audit could not run
(bad arguments, unreadable file, invalid ruleset, unwritable output).
"""

from __future__ import annotations

import sys

import click

from auditor import __version__
from auditor.logs.reader import LogFileError
from auditor.report.atomic import OutputError
from auditor.rules.ruleset import RulesetError

EXPECTED_ERRORS = (LogFileError, RulesetError, OutputError)


class AuditorGroup(click.Group):
    """Turns expected failures into one line and exit 2."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except EXPECTED_ERRORS as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Exception as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"internal error: {type(exc).__name__}: {exc} "
                       f"(run with --debug for the traceback)", err=True)
            ctx.exit(2)


@click.group(cls=AuditorGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Exit codes: 0 no findings at or above --fail-on; 1 findings at or above "
                    "it (validate: any format problem); 2 the audit could not run.")
@click.version_option(__version__, "--version", prog_name="auditor")
@click.option("--debug", is_flag=True, help="Show Python tracebacks on errors.")
@click.pass_context
def main(ctx, debug):
    """Audit recorded craps table event logs against a jurisdiction's rules.

    \b
    Example:
        auditor check sample_logs/ --ruleset nz-table-games
        auditor validate sample_logs/broken_rows.csv
        auditor rulesets list
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def _register() -> None:
    from auditor.cli.check_cmd import check_command, validate_command
    from auditor.cli.explain_cmd import explain_command
    from auditor.cli.rulesets_cmd import rulesets_group

    main.add_command(check_command)
    main.add_command(validate_command)
    main.add_command(rulesets_group)
    main.add_command(explain_command)
    try:
        from auditor.cli.generate_cmd import generate_command
    except ImportError:  # pragma: no cover - the generator is part of the package
        return
    main.add_command(generate_command)


_register()

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
