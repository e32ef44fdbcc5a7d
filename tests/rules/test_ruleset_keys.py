"""A small ruleset that took gigabytes: one dotted key of 20,000 parts (a
40 KB file) took 2.5 GB and 8-27 s before it was refused (Python's TOML parser
is quadratic in a key's parts). Keys are measured before parsing: exit 2 at
once, with the line."""

from __future__ import annotations

import time

import pytest
from builder import lawful_table, run_cli
from real_process import run_real

from auditor.errors import RulesetError
from auditor.rules.ruleset import MAX_KEY_CHARS, MAX_KEY_PARTS, load_ruleset

HEAD = '[ruleset]\nid = "deep-keys"\ntitle = "Deep keys"\nstatus = "provisional"\n' \
       'extends = "nz-1996"\n'


def _refusal(path, line: int, parts: int, chars: int) -> str:
    return (f"error: {path}: line {line}: a dotted key of {parts:,} parts and {chars:,} "
            f"characters; a key may have at most {MAX_KEY_PARTS} parts and {MAX_KEY_CHARS} "
            "characters")


@pytest.mark.parametrize("form", ["{key} = 1", "[{key}]", "x = {{ {key} = 1 }}",
                                  "[[{key}]]"])
def test_a_key_of_twenty_thousand_parts_is_refused_at_once(tmp_path, form):
    key = ".".join(["a"] * 20_000)
    path = tmp_path / "deep.toml"
    path.write_text(HEAD + "# a comment.with.dots\n" + form.format(key=key) + "\n")
    started = time.perf_counter()
    with pytest.raises(RulesetError):
        load_ruleset(str(path))
    assert time.perf_counter() - started < 1.0
    res = run_cli("rulesets", "check", path)
    assert res.exit_code == 2
    assert res.output.strip() == _refusal(path, 7, 20_000, len(key))


def test_the_refusal_in_a_real_process_under_a_memory_cap(tmp_path):
    key = ".".join(["a"] * 20_000)
    path = tmp_path / "deep.toml"
    path.write_text(HEAD + key + " = 1\n")
    proc = run_real("rulesets", "check", path, memory_mib=1024, timeout=60)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.strip() == _refusal(path, 6, 20_000, len(key))


def test_check_refuses_it_before_reading_any_log(tmp_path):
    log = lawful_table().write_csv(tmp_path / "lawful.csv")
    path = tmp_path / "deep.toml"
    path.write_text(HEAD + '"q".' * 30 + "b = 1\n")
    res = run_cli("check", log, "--ruleset", path, "--out", tmp_path / "out")
    assert res.exit_code == 2
    assert res.output.strip() == _refusal(path, 6, 31, 30 * 4 + 1)
    assert not (tmp_path / "out").exists()


def test_a_long_dotted_key_is_refused_and_dots_in_strings_are_not_keys(tmp_path):
    path = tmp_path / "long.toml"
    path.write_text(HEAD + "a." + "b" * MAX_KEY_CHARS + " = 1\n")
    res = run_cli("rulesets", "check", path)
    assert res.exit_code == 2
    assert res.output.strip() == _refusal(path, 6, 2, MAX_KEY_CHARS + 2)
    # The same dots in strings and comments, and a key of the most parts allowed:
    # the ruleset is checked as any other (here refused for its unknown keys only).
    dots = ".".join(["a"] * 40)
    path.write_text(HEAD + f'notes = "{dots}"\n' + f"# {dots}\n" + f'x = """\n{dots} = 1\n"""\n'
                    + ".".join(["k"] * MAX_KEY_PARTS) + " = 1\n")
    res = run_cli("rulesets", "check", path)
    assert res.exit_code == 2
    assert "dotted key" not in res.output and "unknown key" in res.output, res.output
