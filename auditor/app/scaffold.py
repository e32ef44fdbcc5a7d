"""A starting TOML for a new ruleset: `auditor rulesets new ID --from BASE`.

The file `extends` BASE and lists every inherited rule as a commented-out
override carrying its id, check, code, clause, summary, severity and the
current value of every parameter its check reads, and every jurisdiction
parameter with its current value. An author uncomments what differs in their
jurisdiction and edits it: nothing is copied into force by default, so the
file loads and validates as written and judges exactly as BASE until edited.
"""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path
from typing import Any

from auditor.checks.parameters import PARAMETERS
from auditor.codes import CODES, SEVERITIES
from auditor.errors import RulesetError
from auditor.escape import unicode_escaped
from auditor.rules.ruleset import (
    LOG_RULE_DEFAULTS,
    RULESET_ID_RULE,
    Rule,
    Ruleset,
    is_ruleset_id,
    load_ruleset,
    resolve_path,
    shipped_dir,
)


def check_new_id(new_id: str) -> str:
    if not is_ruleset_id(new_id or ""):
        raise RulesetError(repr(new_id or ""), RULESET_ID_RULE, key="id")
    return new_id


def extends_reference(base_ref: str, out: Path | None) -> str:
    """How the new file names its parent: a shipped id stays an id; a path is
    written relative to the new file's folder (absolute when printed)."""
    path = resolve_path(base_ref)
    try:
        shipped = path.resolve().parent == shipped_dir().resolve()
    except OSError:
        shipped = False
    if shipped and path.suffix == ".toml" and not Path(base_ref).suffix:
        return path.stem
    target = path.resolve()
    if out is None:
        return target.as_posix()
    try:
        return Path(os.path.relpath(target, out.resolve().parent)).as_posix()
    except ValueError:  # another drive (Windows)
        return target.as_posix()


def scaffold(new_id: str, base_ref: str, out: Path | None = None) -> str:
    """The text of a new ruleset `new_id` extending `base_ref` (an id or a
    path). `out` is where it will be written (for a relative `extends`)."""
    check_new_id(new_id)
    base = load_ruleset(base_ref)
    parent = extends_reference(base_ref, out)
    lines = _header(new_id, base, parent)
    lines += _parameters(base)
    lines += _rules(base)
    return "\n".join(lines).rstrip("\n") + "\n"


def validate_text(text: str) -> Ruleset:
    """Load a scaffold from a temporary file, as `auditor rulesets check`
    would (its `extends` is a shipped id or an absolute path)."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "new.toml"
        path.write_text(text, encoding="utf-8")
        return load_ruleset(str(path))


# --- sections --------------------------------------------------------------------------------

def _header(new_id: str, base: Ruleset, parent: str) -> list[str]:
    src = base.source
    return [
        f"# {_plain(new_id)}: a ruleset extending {_plain(base.id)}",
        *_comment(f"({base.title}).", "# "),
        (f"# Written by `auditor rulesets new {_plain(new_id)} --from {_plain(parent)}`. "
         "As written it judges"),
        f"# exactly as {_plain(base.id)}: everything below the [ruleset] table is commented out.",
        "# Uncomment and edit what differs in your jurisdiction: a parameter, a rule's",
        "# clause, summary, severity or params. `enabled = false` removes an inherited",
        "# rule and a lower severity loosens it: both are reported in every audit.",
        "# Validate with `auditor rulesets check FILE`; test with `auditor rulesets test`.",
        "",
        "[ruleset]",
        f"id = {_toml(new_id)}",
        f"title = {_toml(f'{new_id} (extends {base.id})')}",
        f"extends = {_toml(parent)}",
        'status = "provisional"               # "verified" only once every clause was read',
        f"notes = {_toml(NOTES.format(base=base.id))}",
        f"# jurisdiction = {_toml(base.jurisdiction)}",
        f"# authority = {_toml(base.authority)}",
        "# effective_from = 2026-01-01          # ISO dates, both inclusive: when this",
        "# effective_to = 2030-12-31            # version is in force (docs/rulesets.md)",
        "",
        "# [ruleset.source]",
        *[f"# {k} = {_toml(src.get(k, ''))}" for k in ("document", "edition", "published")],
        "",
    ]


def _parameters(base: Ruleset) -> list[str]:
    lines = [f"# Jurisdiction parameters, with the values inherited from {_plain(base.id)}",
             "# (docs/parameters.md). Uncomment the table and what you change.",
             "# [ruleset.parameters]"]
    for name, value in base.parameters.items():
        doc = PARAMETERS[name].doc if name in PARAMETERS else ""
        lines += _comment(doc, "#   ")
        lines.append(f"# {name} = {_toml(value)}")
    return lines + [""]


def _rules(base: Ruleset) -> list[str]:
    rules = [r for r in base.rules if not _is_default_log_rule(r)]
    lines = [(f"# The {len(rules)} rules inherited from {_plain(base.id)}. To change one, "
             "uncomment its"),
             "# block (keep the id) and edit it. `check` and `code` must stay a pair the",
             "# check registry knows (`auditor explain CODE`); the `log.*` rules always run.",
             f"# Severities: {', '.join(SEVERITIES)}."]
    for rule in rules:
        lines += ["", *_rule_block(rule)]
    lines += ["",
              "# A rule of your own: a new id, any registered check and its code.",
              "# [[rule]]",
              '# id = "X-1.1-my-rule"',
              '# check = "stick_used"',
              '# code = "dice.stick_not_used"',
              '# clause = "1.1"',
              '# summary = "In our own words."',
              '# severity = "major"']
    return lines


def _rule_block(rule: Rule) -> list[str]:
    lines = [
        f"# --- {_plain(rule.id)}: {_plain(rule.code)}",
        *_comment(CODES.get(rule.code, ""), "#     "),
        "# [[rule]]",
        f"# id = {_toml(rule.id)}",
        f"# check = {_toml(rule.check)}",
        f"# code = {_toml(rule.code)}",
        f"# clause = {_toml(rule.clause)}",
    ]
    if rule.summary:
        lines.append(f"# summary = {_toml(rule.summary)}")
    lines += [f"# severity = {_toml(rule.severity)}",
              "# enabled = true          # false removes this rule (reported as disabled)"]
    if rule.params:
        lines.append("# [rule.params]")
        lines += [f"# {name} = {_toml(value)}" for name, value in rule.params.items()]
    return lines


def _is_default_log_rule(rule: Rule) -> bool:
    """A `log.*` rule the loader added itself (not one a ruleset restated)."""
    default = LOG_RULE_DEFAULTS.get(rule.id)
    return default is not None and rule.code == rule.id and rule.clause == "event-log-v1" \
        and rule.check == default[0]


def _comment(text: str, prefix: str, width: int = 88) -> list[str]:
    """Prose as wrapped comment lines."""
    return textwrap.wrap(_plain(" ".join(text.split())), width, initial_indent=prefix,
                         subsequent_indent=prefix)


def _plain(text: str) -> str:
    """Text written into a comment: every character that could end the
    comment or act (a line break, a control or format character) as a
    visible `\\uXXXX`, so nothing after it can become live TOML. (Ids are
    checked at load; a path or a title is not.)"""
    return unicode_escaped(str(text))


# --- TOML values -----------------------------------------------------------------------------

NOTES = "Started from {base}; clauses not yet checked against our own text."
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _toml(value: Any) -> str:
    """A parameter or field value as TOML: strings, integers, booleans, lists
    and tables of them (role maps) as inline tables."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):  # (TOML takes JSON's escapes, but not a raw DEL)
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        items = [f"{k if _BARE_KEY.match(k) else _toml(k)} = {_toml(v)}" for k, v in value.items()]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")
