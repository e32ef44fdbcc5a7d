"""The `auditor` command. Commands are thin wrappers over library functions;
an expected failure (any `auditor.errors.AuditorError`) becomes one clear
line and its exit code (2), never a traceback (unless `--debug`).

Exit codes: 0 no findings at or above the fail threshold; 1 findings at or
above it (or, for `validate`, any format problem); 2 the audit could not run
(bad arguments, unreadable file, invalid ruleset, unwritable output).
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
import warnings

import click

from auditor import __version__
from auditor.atomic import PENDING_INTERRUPTIONS, commit_together
from auditor.audit.core import UncompiledReplayWarning
from auditor.errors import AuditorError
from auditor.escape import one_line


class Terminated(BaseException):
    """SIGTERM, raised wherever the program stands so that every atomic
    write on the way out removes its temporary file (exit 143)."""


_HANDLER_PID: list[int] = []

_INTERRUPTIONS = {signal.SIGINT: KeyboardInterrupt}
if hasattr(signal, "SIGTERM"):
    _INTERRUPTIONS[signal.SIGTERM] = Terminated


def _raise_interruption(signum, frame):
    """Record the interruption, then raise it where the program stands. The
    record is what counts: a library may catch what is raised in its own
    code and turn it into another error (pyarrow, importing its time zones
    when SIGINT arrived, raised ArrowInvalid), and the run must still end
    as interrupted, not as an internal error."""
    if _HANDLER_PID and os.getpid() != _HANDLER_PID[-1]:
        # a forked worker inherited the handler: it ends as the signal ends it
        if signum == signal.SIGINT:
            signal.default_int_handler(signum, frame)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
        return
    interruption = _INTERRUPTIONS[signum]()
    PENDING_INTERRUPTIONS.append(interruption)
    raise interruption


def _install_signal_handlers():
    """SIGINT and SIGTERM are recorded and raised (KeyboardInterrupt,
    Terminated); an interruption Python could not raise where it arrived
    is recorded, not printed. Every recorded one is raised again as the
    command ends, whatever became of it on the way. Returns what restores
    the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    _HANDLER_PID.append(os.getpid())
    previous = {signum: signal.signal(signum, _raise_interruption) for signum in _INTERRUPTIONS}
    previous_hook = sys.unraisablehook

    def unraisable(args):
        if isinstance(args.exc_value, (Terminated, KeyboardInterrupt)):
            if args.exc_value not in PENDING_INTERRUPTIONS:
                PENDING_INTERRUPTIONS.append(args.exc_value)  # raised again, nothing kept
        else:
            previous_hook(args)
    sys.unraisablehook = unraisable

    def restore():
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = previous_hook
        _HANDLER_PID.pop()
        PENDING_INTERRUPTIONS.clear()
    return restore


def _raise_swallowed() -> None:
    if PENDING_INTERRUPTIONS:
        raise PENDING_INTERRUPTIONS[0]


class AuditorGroup(click.Group):
    """The one place a failure becomes an exit code: an `AuditorError` is
    one line and its `exit_code`, any other exception one line and 2, an
    interruption (SIGINT, SIGTERM) 130 or 143; every file a command writes
    appears only when the command ends well (`commit_together`)."""

    def list_commands(self, ctx):
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx, name):
        """A command by name, its module imported the first time it is asked for."""
        if name not in self.commands and name in COMMANDS:
            module, attr = COMMANDS[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attr), name)
        return self.commands.get(name)

    def invoke(self, ctx):
        restore = _install_signal_handlers()
        try:
            with commit_together():
                try:
                    return super().invoke(ctx)
                finally:
                    _raise_swallowed()  # an interruption lost on the way: nothing is kept
        except AuditorError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(one_line(f"error: {exc}"), err=True)
            ctx.exit(exc.exit_code)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            ctx.exit(130)
        except Terminated:
            click.echo("terminated", err=True)
            ctx.exit(143)
        except Exception as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            failed = _system_refused(exc)
            click.echo(one_line(f"error: {failed}" if failed else
                                f"internal error: {type(exc).__name__}: {exc} "
                                f"(run with --debug for the traceback)"), err=True)
            ctx.exit(2)
        finally:
            restore()


def _system_refused(exc: Exception) -> str | None:
    """What the system refused of a path the user gave, where the command
    did not say it itself (a name holding a NUL byte, or too long for the
    file system; found by a sweep of every command's arguments): an end
    the user can mend (exit 2), not an internal error. None for anything
    else."""
    if isinstance(exc, ValueError) and "embedded null" in str(exc):
        return "a path given holds a NUL byte (\\x00), which no file name can"
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return None


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
        auditor check sample_logs/nz-table-games --ruleset nz-table-games   # exits 1
        auditor validate sample_logs/format/broken-rows.csv                # exits 1
        auditor rulesets list
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug
    ctx.call_on_close(_warnings_as_lines())


def _warnings_as_lines():
    """The auditor's own warnings (e.g. an uncompiled replay) as one
    `warning: ...` line on standard error; returns what restores Python's."""
    previous = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if not issubclass(category, UncompiledReplayWarning):
            return previous(message, category, filename, lineno, file, line)
        click.echo(one_line(f"warning: {message}"), err=True)

    warnings.showwarning = show

    def restore():
        warnings.showwarning = previous
    return restore


#: Each command and where it is defined, imported only when the command is
#: run or listed: `auditor check` does not compile and import the generator,
#: verify or the ruleset tools (measured: 5% of the instructions of auditing a
#: 2,000-event log, every report written).
COMMANDS = {
    "baseline": "auditor.cli.baseline_cmd:baseline_group",
    "check": "auditor.cli.check_cmd:check_command",
    "explain": "auditor.cli.explain_cmd:explain_command",
    "generate": "auditor.cli.generate_cmd:generate_command",
    "rulesets": "auditor.cli.rulesets_cmd:rulesets_group",
    "trend": "auditor.cli.trend_cmd:trend_command",
    "validate": "auditor.cli.check_cmd:validate_command",
    "verify": "auditor.cli.verify_cmd:verify_command",
}


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
