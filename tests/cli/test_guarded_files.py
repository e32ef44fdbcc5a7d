"""One guarded reader for every TOML and JSON file the auditor reads beside
the logs (issue 28): the configuration, a waiver file, a baseline and a
ruleset are each a regular file of bounded size, nesting and dotted keys;
a refusal is one line naming the file, exit 2, never a traceback or an
exhausted memory. Each beside its lawful twin. Run as a subprocess under a
1 GiB address-space cap (`resource.setrlimit`): a parser given 20,000
dotted key parts would need gigabytes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NIGHT = ROOT / "sample_logs" / "nz-1996" / "night-planted.jsonl"
CAP = 1 << 30
DOTTED = "a." * 19_999 + "a = 1\n"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="caps memory with RLIMIT_AS")


def capped(*args, cwd: Path) -> subprocess.CompletedProcess:
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, "
            f"({CAP}, {CAP})); from auditor.__main__ import run; sys.argv = ['auditor'] + "
            f"{[str(a) for a in args]!r}; run()")
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=False)


def refused(res: subprocess.CompletedProcess, *parts: str) -> None:
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])


def check(tmp_path: Path, *args) -> subprocess.CompletedProcess:
    return capped("check", NIGHT, "--out", tmp_path / "out", "--format", "parquet", *args,
                  cwd=tmp_path)


def test_a_configuration_with_a_20000_part_dotted_key_is_refused(tmp_path):
    (tmp_path / "auditor.toml").write_text('ruleset = "nz-1996"\n' + DOTTED)
    refused(check(tmp_path), f"{tmp_path / 'auditor.toml'}: line 2: a dotted key of 20,000 "
                             "parts")


def test_a_configuration_that_is_a_device_is_refused(tmp_path):
    refused(check(tmp_path, "--config", "/dev/zero", "--ruleset", "nz-1996"),
            "/dev/zero: not a regular file")


def test_a_configuration_too_large_is_refused(tmp_path):
    (tmp_path / "big.toml").write_text('ruleset = "nz-1996"\n' + "#" * (2 << 20) + "\n")
    refused(check(tmp_path, "--config", tmp_path / "big.toml"),
            "big.toml: file is", "a configuration file may be at most 1048576")


def test_a_configuration_naming_an_unknown_format_names_the_file_and_key(tmp_path):
    (tmp_path / "auditor.toml").write_text('ruleset = "nz-1996"\nformats = ["sarf"]\n')
    refused(check(tmp_path), f"{tmp_path / 'auditor.toml'}: formats: 'sarf' is not a format")


def test_a_plain_configuration_is_used(tmp_path):
    (tmp_path / "auditor.toml").write_text('ruleset = "nz-1996"\nformats = ["parquet", '
                                           '"text:-"]\n')
    res = capped("check", NIGHT, "--out", tmp_path / "out", cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert (tmp_path / "out" / "findings.parquet").is_file()


def test_a_waiver_file_with_a_20000_part_dotted_key_is_refused(tmp_path):
    waivers = tmp_path / "waivers.toml"
    waivers.write_text('[[waiver]]\nrule = "x"\nreason = "r"\n' + DOTTED)
    refused(check(tmp_path, "--ruleset", "nz-1996", "--waivers", waivers),
            f"{waivers}: line 4: a dotted key of 20,000 parts")


def test_a_baseline_nested_past_the_parser_is_refused(tmp_path):
    baseline = tmp_path / "baseline.json"
    baseline.write_text("[" * 200_000 + "]" * 200_000)
    refused(check(tmp_path, "--ruleset", "nz-1996", "--baseline", baseline),
            f"{baseline}: not valid JSON: nested too deeply")


def test_a_plain_waiver_file_and_baseline_are_used(tmp_path):
    waivers = tmp_path / "waivers.toml"
    waivers.write_text('[[waiver]]\nrule = "R5.7-stick"\nreason = "r"\n')
    first = check(tmp_path, "--ruleset", "nz-1996")
    assert first.returncode == 1, first.stderr
    baseline = tmp_path / "baseline.json"
    made = capped("baseline", "create", "--from", tmp_path / "out" / "findings.parquet",
                  "--out", baseline, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    res = capped("check", NIGHT, "--out", tmp_path / "o2", "--format", "parquet",
                 "--ruleset", "nz-1996", "--waivers", waivers, "--baseline", baseline,
                 cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_ruleset_with_a_20000_part_dotted_key_is_refused(tmp_path):
    ruleset = tmp_path / "r.toml"
    ruleset.write_text('[ruleset]\nid = "r"\ntitle = "t"\nstatus = "verified"\n' + DOTTED)
    refused(check(tmp_path, "--ruleset", ruleset), f"{ruleset}: line 5: a dotted key")
