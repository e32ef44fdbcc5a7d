"""A gzip bomb: a 1 MB `.csv.gz` inflating to 1 GiB was inflated whole (a
2.2 GB peak; 25 MB of it exceeded the machine). It is now inflated a block at
a time and refused at a stated limit, exit 2 naming the file."""

from __future__ import annotations

import gzip
import zlib

from builder import report_provenance, run_cli
from real_process import run_real

from auditor.logs.raw import INFLATE_ALWAYS_BYTES

HEADER = b"table_id,seq,ts,event,actor_role\n"
ROWS = (b"T1,1,2026-03-01T20:00:00+00:00,table_open,game_supervisor\n"
        b"T1,2,2026-03-01T20:00:05+00:00,table_close,game_supervisor\n")


def _member(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def gzip_bomb(mib: int) -> bytes:
    """A log header, then `mib` MiB of NUL bytes in about a thousandth of
    that: one member repeated (a file of several gzip members is one stream)."""
    return _member(HEADER) + _member(b"\0" * (1 << 20)) * mib


def test_a_gzip_bomb_is_refused_under_a_memory_cap(tmp_path):
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(gzip_bomb(1024))
    size = path.stat().st_size
    assert size < 1_100_000
    proc = run_real("check", path, "-r", "nz-1996", "--out", tmp_path / "out",
                    memory_mib=1024, timeout=120)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stderr.strip() == (
        f"error: {path}: inflates to more than 100 times its {size:,} bytes (a decompression "
        "bomb?); --max-inflate-ratio raises the limit")
    assert not (tmp_path / "out").exists()


def test_the_size_limit_applies_whatever_the_ratio(tmp_path):
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(gzip_bomb(48))
    res = run_cli("validate", path, "--max-inflate-ratio", "100000",
                  "--max-inflated-bytes", "32M")
    assert res.exit_code == 2, res.output
    assert res.output.strip() == (f"error: {path}: inflates to more than {32 << 20:,} bytes; "
                                  "--max-inflated-bytes raises the limit")
    res = run_cli("validate", path)  # 48 MiB from 48 KB: over 100 times
    assert res.exit_code == 2 and "--max-inflate-ratio raises the limit" in res.output


def test_a_small_file_inflates_freely_and_the_limits_reach_every_command(tmp_path):
    """Under 16 MiB inflated, no ratio applies (a short log of repeated rows
    compresses far); a limit set lower refuses it, in check, validate and
    verify alike."""
    path = tmp_path / "night.csv.gz"
    data = HEADER + ROWS + b"\n" * (1 << 20)  # blank lines
    assert len(data) < INFLATE_ALWAYS_BYTES
    path.write_bytes(gzip.compress(data, mtime=0))
    assert len(data) / path.stat().st_size > 500
    out = tmp_path / "out"
    res = run_cli("check", path, "-r", "nz-1996", "--out", out)
    assert res.exit_code == 0, res.output
    assert report_provenance(out)["rows"] == {"read": 2, "replayed": 2, "quarantined": 0}
    assert run_cli("validate", path).exit_code == 0
    assert run_cli("verify", out).exit_code == 0
    low = ["--max-inflated-bytes", "1K"]
    refused = f"error: {path}: inflates to more than 1,024 bytes; --max-inflated-bytes raises"
    res = run_cli("check", path, "-r", "nz-1996", "--out", tmp_path / "o2", *low)
    assert res.exit_code == 2 and res.output.startswith(refused), res.output
    res = run_cli("validate", path, *low)
    assert res.exit_code == 2 and res.output.startswith(refused), res.output
    res = run_cli("verify", out, *low)
    assert res.exit_code == 1 and "can no longer be read" in res.output, res.output


def test_a_size_option_that_is_no_size_is_refused(tmp_path):
    res = run_cli("validate", tmp_path, "--max-inflated-bytes", "lots")
    assert res.exit_code == 2
    assert "'lots' is not a size (e.g. 4G, 512M, 1000000)" in res.output
