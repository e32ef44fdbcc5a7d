"""`auditor generate`: write a lawful generated log, optionally with planted
violations. A thin wrapper over `auditor.generate`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from auditor.atomic import atomic_open
from auditor.generate import (
    DEFAULT_LEAN,
    INJECTABLE,
    OFFER_ROLES,
    SIGNALS,
    check_codes,
    generate,
    log_format,
    write_log,
)


def _parse_inject(ctx, param, values: tuple[str, ...]) -> list[str]:
    """--inject may be repeated and each value comma-separated."""
    codes = [c for value in values for c in value.split(",") if c.strip()]
    try:
        return check_codes(codes)
    except ValueError:
        allowed = (*INJECTABLE, *SIGNALS)
        bad = next(c.strip() for c in codes if c.strip() not in allowed)
        raise click.BadParameter(
            f"unknown code {bad!r}; allowed: {', '.join(allowed)}", ctx, param) from None


def _check_out(ctx, param, value: str) -> str:
    try:
        log_format(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None
    return value


#: The most events one `generate` writes: a log is built in memory before it
#: is written (about 200 bytes an event), and a larger one is written as
#: several files, each its own --first-table and --seed, as a real month is.
MAX_EVENTS = 100_000_000
#: Events a valid roll brings, about (wagers, offers, calls, settlements),
#: and a session's own (its opening, staff, dice, closing): the estimate
#: held to MAX_EVENTS before anything is generated.
EVENTS_A_ROLL, EVENTS_A_SESSION = 12, 40


def _within_reach(tables: int, rolls: int, days: int) -> None:
    """UsageError for a log of about more than MAX_EVENTS events (10**20
    tables ran until memory was gone; 10**20 rolls was a SystemError)."""
    about = tables * days * (rolls * EVENTS_A_ROLL + EVENTS_A_SESSION)
    if about > MAX_EVENTS:
        raise click.UsageError(
            f"--tables {tables} x --days {days} x --rolls {rolls} is about {about:,} events; "
            f"one log holds at most {MAX_EVENTS:,} (write several files, each with its own "
            f"--first-table and --seed)")


@click.command("generate")
@click.option("--tables", type=click.IntRange(min=1), default=1, show_default=True,
              help="Number of tables (T01, T02, ...).")
@click.option("--rolls", type=click.IntRange(min=0), default=200, show_default=True,
              help="Valid rolls per table.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Random seed: the same seed writes the same bytes.")
@click.option("--out", "out", required=True, callback=_check_out,
              type=click.Path(dir_okay=False, writable=True),
              help="Output file: .csv, .jsonl, .ndjson or .parquet, optionally + .gz.")
@click.option("--inject", "inject", multiple=True, callback=_parse_inject,
              metavar="CODE[,CODE...]",
              help="Plant each violation code once per table (repeatable).")
@click.option("--offer-role", type=click.Choice(OFFER_ROLES), default="stickperson",
              show_default=True,
              help="Who offers the dice after a shooter relinquishes (dealer: NZ 1996 5.9).")
@click.option("--first-table", type=click.IntRange(min=1), default=1, show_default=True,
              help="Number of the first table (T01 for 1): keeps logs audited together apart.")
@click.option("--days", type=click.IntRange(min=1), default=1, show_default=True,
              help="Sessions per table, one a day (each opened and closed; --rolls and "
                   "--inject per session): a table kept open for days.")
@click.option("--die-lean", type=click.FloatRange(0, 1), default=DEFAULT_LEAN,
              show_default=True,
              help="With --inject dice.face_bias: the chance that die A1 shows the higher "
                   "of two fair draws (0 is fair; 0.6: a 5 or 6 in 47%% of its rolls).")
def generate_command(tables: int, rolls: int, seed: int, out: str, inject: list[str],
                     offer_role: str, first_table: int, days: int, die_lean: float) -> None:
    """Generate a realistic, lawful craps event log (event-log v1), with
    optional planted violations.

    A log of more than about 100 million events is refused (write several
    files, each with its own --first-table and --seed).

    When anything is planted (or --inject is given), OUT.planted.json lists
    each planted finding as {code, table_id, seq, note}, sorted by table and
    seq: the event the auditor's finding must point at.

    \b
    Example:
        auditor generate --tables 4 --rolls 1000 --seed 7 --out logs/week.csv.gz
        auditor generate --rolls 300 --out t.parquet \\
            --inject call.wrong_total,dice.stick_not_used
        auditor generate --tables 2 --rolls 100 --days 7 --out week.parquet
    """
    _within_reach(tables, rolls, days)
    log = generate(tables, rolls, seed, inject, offer_role=offer_role, first_table=first_table,
                   days=days, die_lean=die_lean)
    write_log(log.table, out)
    click.echo(f"wrote {log.table.num_rows} events of {tables} table(s) to {out}")
    if log.planted or inject:
        planted_path = Path(str(out) + ".planted.json")
        text = json.dumps(log.planted, indent=2, sort_keys=True) + "\n"
        with atomic_open(planted_path) as planted_file:
            planted_file.write(text.encode())
        click.echo(f"planted {len(log.planted)} violation(s), listed in {planted_path}")
