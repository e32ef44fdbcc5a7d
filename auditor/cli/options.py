"""Options several commands share."""

from __future__ import annotations

import functools
import re

import click

from auditor.logs.raw import DEFAULT_INFLATE_LIMITS, InflateLimits

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


class ByteSize(click.ParamType):
    """A size in bytes: `4294967296`, `512M`, `4G` (binary units)."""

    name = "SIZE"

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        match = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(?:i?B)?\s*", str(value), re.IGNORECASE)
        if not match or int(match[1]) == 0:
            self.fail(f"{value!r} is not a size (e.g. 4G, 512M, 1000000)", param, ctx)
        return int(match[1]) * _UNITS[match[2].upper()]


def inflate_options(command):
    """`--max-inflated-bytes`, `--max-inflate-ratio` and `--max-columns`,
    handed to the command as one `inflate` (InflateLimits)."""
    @click.option("--max-inflated-bytes", "max_inflated_bytes", type=ByteSize(),
                  default=f"{DEFAULT_INFLATE_LIMITS.max_bytes >> 30}G", show_default=True,
                  help="Refuse (exit 2) a .gz log that inflates to more than this.")
    @click.option("--max-inflate-ratio", type=click.IntRange(min=1),
                  default=DEFAULT_INFLATE_LIMITS.max_ratio, show_default=True,
                  help="Refuse (exit 2) a .gz log that inflates to more than this many "
                       "times its size (past 16 MiB): a decompression bomb.")
    @click.option("--max-columns", type=click.IntRange(min=1),
                  default=DEFAULT_INFLATE_LIMITS.max_columns, show_default=True,
                  help="Refuse (exit 2) a log file of more columns than this (each costs "
                       "memory per row, whatever its cells hold).")
    @functools.wraps(command)
    def wrapper(*args, max_inflated_bytes, max_inflate_ratio, max_columns, **kwargs):
        return command(*args, inflate=InflateLimits(max_inflated_bytes, max_inflate_ratio,
                                                    max_columns), **kwargs)

    return wrapper
