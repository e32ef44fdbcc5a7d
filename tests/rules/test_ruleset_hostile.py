"""Hostile rulesets: cycles and deep chains of `extends`, unknown keys, wrong
types, a huge file, a missing parent, files that are not files, and TOML that
tries to be code. Each stops `auditor rulesets check` and `auditor check`
with exit 2 and one line naming the file (and the rule and key where there
is one), before any log is read; nothing in a ruleset is ever evaluated."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from builder import lawful_table
from builder import run_cli as run

from auditor.rules.ruleset import MAX_EXTENDS_DEPTH, MAX_RULESET_BYTES

HEAD = """[ruleset]
id = "{id}"
title = "Hostile {id}"
status = "provisional"
notes = "test"
"""
PARENT = 'extends = "nz-1996"\n'
RULE = """
[[rule]]
id = "R5.7"
check = "stick_used"
code = "dice.stick_not_used"
clause = "5.7"
severity = "minor"
"""
#: What a file would run if anything in it were evaluated.
CODE = "__import__('os').system('touch {marker}')"


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def child(body: str = "", id: str = "hostile", parent: str = PARENT) -> str:
    return HEAD.format(id=id) + parent + body


@pytest.fixture
def log(tmp_path):
    b = lawful_table()
    b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    return b.write_csv(tmp_path / "lawful.csv")


def assert_refused(tmp_path, log, ruleset, *located: str) -> str:
    """Both commands exit 2 with one located line; `check` writes nothing."""
    out = tmp_path / "out"
    for args in (("rulesets", "check", ruleset),
                 ("check", log, "--ruleset", ruleset, "--out", out)):
        res = run(*args)
        assert res.exit_code == 2, (args, res.output)
        assert "Traceback" not in res.output and "internal error" not in res.output, res.output
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), res.output
        for part in located:
            assert part in lines[0], (part, lines[0])
    assert not out.exists() or not any(out.iterdir())
    return lines[0]


# --- extends ---------------------------------------------------------------------------

def test_extends_cycle_of_two(tmp_path, log):
    write(tmp_path, "a.toml", child(id="a", parent='extends = "b.toml"\n'))
    write(tmp_path, "b.toml", child(id="b", parent='extends = "a.toml"\n'))
    line = assert_refused(tmp_path, log, tmp_path / "a.toml", "extends cycle", "key 'extends'")
    assert "a.toml -> " in line and "b.toml" in line


def test_extends_itself(tmp_path, log):
    path = write(tmp_path, "self.toml", child(parent='extends = "self.toml"\n'))
    assert_refused(tmp_path, log, path, "self.toml", "extends cycle", "key 'extends'")


def _chain(folder: Path, files: int) -> Path:
    """files c1 .. cN, each extending the next; the last extends a shipped id."""
    for i in range(1, files + 1):
        parent = f'extends = "c{i + 1}.toml"\n' if i < files else PARENT
        write(folder, f"c{i}.toml", child(id=f"c{i}", parent=parent))
    return folder / "c1.toml"


def test_extends_chain_of_17_files_is_too_deep(tmp_path, log):
    # 16 files of the chain and the shipped ruleset at its end: 17 files
    top = _chain(tmp_path, MAX_EXTENDS_DEPTH)
    assert_refused(tmp_path, log, top, f"deeper than {MAX_EXTENDS_DEPTH}", "key 'extends'")


def test_extends_chain_of_16_files_is_accepted(tmp_path, log):
    top = _chain(tmp_path, MAX_EXTENDS_DEPTH - 1)
    res = run("rulesets", "check", top)
    assert res.exit_code == 0, res.output
    res = run("check", log, "--ruleset", top, "--out", tmp_path / "out")
    assert res.exit_code == 0, res.output


def test_extends_path_that_does_not_exist(tmp_path, log):
    path = write(tmp_path, "orphan.toml", child(parent='extends = "gone/parent.toml"\n'))
    assert_refused(tmp_path, log, path, "orphan.toml", "key 'extends'", "gone/parent.toml",
                   "no such file")


def test_extends_unknown_id(tmp_path, log):
    path = write(tmp_path, "orphan.toml", child(parent='extends = "no-such-jurisdiction"\n'))
    assert_refused(tmp_path, log, path, "orphan.toml", "key 'extends'", "no such ruleset")


# --- keys and types ------------------------------------------------------------------------

@pytest.mark.parametrize("body,located", [
    ("[colour]\nx = 1\n", ("key 'colour'", "unknown top-level key")),
    ('colour = "red"\n', ("key 'colour'", "unknown key in [ruleset]")),
    ('[ruleset.source]\ncolour = "red"\n', ("key 'colour'",)),
    ("[ruleset.parameters]\ncolour = 1\n", ("key 'parameters.colour'", "unknown parameter")),
    (RULE + 'colour = "red"\n', ("rule 'R5.7'", "key 'colour'", "unknown key")),
    (RULE + "[rule.params]\ncolour = 1\n", ("rule 'R5.7'", "key 'params.colour'")),
    ("[ruleset.parameters]\n__class__ = 1\n", ("key 'parameters.__class__'",)),
    (RULE + "__init__ = 1\n", ("rule 'R5.7'", "key '__init__'")),
])
def test_unknown_keys(tmp_path, log, body, located):
    text = child(body) if not body.startswith("[colour]") else body + child()
    path = write(tmp_path, "keys.toml", text)
    assert_refused(tmp_path, log, path, "keys.toml", *located)


@pytest.mark.parametrize("text,located", [
    (child().replace('id = "hostile"', "id = 5"), ("key 'id'", "should be a string")),
    (child().replace('status = "provisional"', "status = true"), ("key 'status'",)),
    (child(parent="extends = 3\n"), ("key 'extends'", "should be a string")),
    (child().replace("[ruleset]\n", '[ruleset]\nparameters = "x"\n'),
     ("key 'parameters'", "should be a table")),
    ('rule = "x"\n' + child(), ("key 'rule'", "array of tables")),
    (child(RULE.replace('severity = "minor"', "severity = 1")), ("rule 'R5.7'", "key 'severity'")),
    (child(RULE + 'enabled = "yes"\n'), ("rule 'R5.7'", "key 'enabled'", "true or false")),
    (child(RULE + "params = 5\n"), ("rule 'R5.7'", "key 'params'", "should be a table")),
    (child(RULE.replace('severity = "minor"', 'severity = "catastrophic"')),
     ("rule 'R5.7'", "key 'severity'")),
    (child('[ruleset.parameters]\ndice_set_size = "5"\n'), ("parameters.dice_set_size",)),
    (child("[ruleset.parameters]\ndice_set_size = 5.5\n"), ("parameters.dice_set_size",)),
    (child("[ruleset.parameters]\ndice_set_size = nan\n"), ("parameters.dice_set_size",)),
    (child("[ruleset.parameters]\nbar_number = [12]\n"), ("parameters.bar_number",)),
    (child("[ruleset.parameters]\ndice_set_size = 1979-05-27T07:32:00Z\n"),
     ("parameters.dice_set_size",)),
    ("[[ruleset]]\nid = 'x'\n", ("key 'ruleset'",)),
])
def test_wrong_types(tmp_path, log, text, located):
    path = write(tmp_path, "types.toml", text)
    assert_refused(tmp_path, log, path, "types.toml", *located)


# --- size, encoding, nesting, files that are not files -----------------------------------------

def test_huge_file(tmp_path, log):
    text = child() + "# " + "x" * MAX_RULESET_BYTES + "\n"
    path = write(tmp_path, "huge.toml", text)
    assert_refused(tmp_path, log, path, "huge.toml", f"at most {MAX_RULESET_BYTES}")


def test_huge_parent(tmp_path, log):
    write(tmp_path, "huge.toml", child(id="huge") + "# " + "x" * MAX_RULESET_BYTES + "\n")
    path = write(tmp_path, "small.toml", child(parent='extends = "huge.toml"\n'))
    assert_refused(tmp_path, log, path, "huge.toml", f"at most {MAX_RULESET_BYTES}")


def test_deeply_nested_values(tmp_path, log):
    for name, value in (("arrays", "[" * 5000 + "]" * 5000), ("tables", "{a=" * 3000 + "1"
                                                                     + "}" * 3000)):
        path = write(tmp_path, f"{name}.toml", child(f"[ruleset.parameters]\nx = {value}\n"))
        assert_refused(tmp_path, log, path, f"{name}.toml", "nested too deeply")


def test_not_utf8_and_not_toml(tmp_path, log):
    path = tmp_path / "bytes.toml"
    path.write_bytes(b"\xff\xfe\x00garbage\x80")
    assert_refused(tmp_path, log, path, "bytes.toml", "cannot be read")
    path = write(tmp_path, "broken.toml", child() + "[[rule]\nid = \n")
    assert_refused(tmp_path, log, path, "broken.toml", "not valid TOML")


def test_a_folder_or_a_device_is_not_a_ruleset(tmp_path, log):
    (tmp_path / "folder.toml").mkdir()
    assert_refused(tmp_path, log, tmp_path / "folder.toml", "folder.toml", "not a regular file")
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    assert_refused(tmp_path, log, tmp_path / "zero.toml", "zero.toml", "not a regular file")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_a_named_pipe_does_not_hang(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    proc = subprocess.run([sys.executable, "-m", "auditor", "rulesets", "check", str(fifo)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "not a regular file" in proc.stderr, proc.stderr


# --- TOML that tries to be code -----------------------------------------------------------------

def test_code_in_a_check_name_is_an_unknown_check(tmp_path, log):
    marker = tmp_path / "PWNED"
    rule = RULE.replace('check = "stick_used"', f'check = "{CODE.format(marker=marker)}"')
    path = write(tmp_path, "code.toml", child(rule))
    assert_refused(tmp_path, log, path, "code.toml", "rule 'R5.7'", "key 'check'",
                   "unknown check")
    assert not marker.exists()


@pytest.mark.parametrize("param", ["dice_set_size", "bar_number", "offer_roles",
                                   "first_offer_anchor"])
def test_code_as_a_parameter_value_is_refused(tmp_path, log, param):
    marker = tmp_path / "PWNED"
    body = f'[ruleset.parameters]\n{param} = "{CODE.format(marker=marker)}"\n'
    path = write(tmp_path, "code.toml", child(body))
    assert_refused(tmp_path, log, path, "code.toml", f"parameters.{param}")
    assert not marker.exists()


def test_code_in_text_fields_stays_text(tmp_path, log):
    """Clause, summary, title and notes are free text: kept verbatim, shown,
    never run."""
    marker = tmp_path / "PWNED"
    code = CODE.format(marker=marker)
    rule = RULE.replace('clause = "5.7"', f'clause = "{code}"') + f'summary = "{code}"\n'
    text = child(rule).replace('notes = "test"', f'notes = "{code}"')
    path = write(tmp_path, "text.toml", text.replace('title = "Hostile hostile"',
                                                     'title = "{{ 7*7 }} ${jndi:ldap://x}"'))
    res = run("rulesets", "check", path)
    assert res.exit_code == 0, res.output
    res = run("rulesets", "show", path)
    assert res.exit_code == 0 and code in res.output and "{{ 7*7 }}" in res.output
    res = run("check", log, "--ruleset", path, "--out", tmp_path / "out")
    assert res.exit_code == 0, res.output
    assert not marker.exists()


# --- ids are identifiers -------------------------------------------------------------------

#: A parent whose rule id holds a line break: written raw into a scaffold's
#: comment, the rest of the id became live TOML disabling a critical rule.
INJECTED_ID = '"NZ5.2-far-end\\n[[rule]]\\nid = \\"NZ5.4-one-hand\\"\\nenabled = false\\n#"'


@pytest.mark.parametrize("rule_id, shown", [
    (INJECTED_ID, "'NZ5.2-far-end\\n[[rule]]"),
    ('"R 5.7"', "'R 5.7'"),
    ('"../R5.7"', "'../R5.7'"),
    ('"-R5.7"', "'-R5.7'"),
    ('"R5.7\\u202e"', "'R5.7\\u202e'"),
    ('"' + "R" * 129 + '"', "(129 characters)"),
])
def test_a_rule_id_that_is_not_an_identifier_is_refused_where_it_is(tmp_path, log, rule_id,
                                                                    shown):
    body = RULE.replace('id = "R5.7"', f"id = {rule_id}")
    path = write(tmp_path, "parent.toml", child(body))
    line = assert_refused(tmp_path, log, path, "parent.toml", "rule #1", "key 'id'", shown,
                          "a rule id is letters, digits, '.', '_' and '-'")
    assert "\n" not in line
    res = run("rulesets", "new", "child", "--from", path, "--out", tmp_path / "child.toml")
    assert res.exit_code == 2 and "a rule id is letters" in res.output
    assert not (tmp_path / "child.toml").exists()


@pytest.mark.parametrize("ruleset_id", ["nz 1996", "nz/1996", "../nz", "nz@", "nz@20@26",
                                        "nz\\n1996", ".nz"])
def test_a_ruleset_id_that_is_not_an_identifier_is_refused(tmp_path, log, ruleset_id):
    path = write(tmp_path, "bad.toml", child(RULE).replace('id = "hostile"',
                                                           f'id = "{ruleset_id}"'))
    assert_refused(tmp_path, log, path, "bad.toml", "key 'id'", "a ruleset id is letters")


def test_the_ids_rulesets_use_are_identifiers(tmp_path, log):
    """Dotted rule ids, versions after '@', ids that start with a digit."""
    body = RULE.replace('id = "R5.7"', 'id = "5.7_stick-used.v2"')
    path = write(tmp_path, "ok.toml", child(body, id="nz_local-2.0@2026"))
    res = run("rulesets", "check", path)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("ref", ["../../x", "../pkg/rulesets/../../x", "nz-1996/../../../x"])
def test_a_shipped_ruleset_id_cannot_reach_outside_the_shipped_folder(tmp_path, log,
                                                                      monkeypatch, ref):
    """A ruleset id names a file in the shipped folder, and only there."""
    from auditor.rules import ruleset

    shipped = tmp_path / "pkg" / "rulesets"
    shipped.mkdir(parents=True)
    (shipped / "nz-1996.toml").write_bytes(ruleset.resolve_path("nz-1996").read_bytes())
    monkeypatch.setattr(ruleset, "shipped_dir", lambda: shipped)
    write(tmp_path, "x.toml", child(RULE, id="x"))  # what `../../x` reached
    res = run("check", log, "--ruleset", ref, "--out", tmp_path / "out")
    assert res.exit_code == 2, res.output
    # (a reference with a folder in it is a path, never an id: issue 28)
    assert f"error: {ref}: no such file" in res.output
    path = write(tmp_path / "pkg", "child.toml", child(id="c", parent=f'extends = "{ref}"\n'))
    res = run("rulesets", "check", path)
    assert res.exit_code == 2 and "key 'extends'" in res.output, res.output
    assert "no such file" in res.output


def test_a_scaffold_never_writes_raw_text_into_a_comment(tmp_path):
    """A parent found through a path holding a line break and a title with
    control characters: every comment stays one line, and the child loads
    and judges as its parent (nothing of the path or title is live)."""
    folder = tmp_path / "odd\n[[rule]]\nid = \"x\""
    folder.mkdir()
    parent = write(folder, "parent.toml", child(RULE).replace(
        'title = "Hostile hostile"', 'title = "T\\r\\u0085\\u2028[[rule]]\\u0000 x"'))
    out = tmp_path / "child.toml"
    res = run("rulesets", "new", "child", "--from", parent, "--out", out)
    assert res.exit_code == 0, res.output
    text = out.read_text(encoding="utf-8")
    assert "\r" not in text and "\x00" not in text and "\u2028" not in text
    assert sum(line.startswith("[[rule]]") for line in text.splitlines()) == 0
    res = run("rulesets", "check", out)
    assert res.exit_code == 0, res.output
