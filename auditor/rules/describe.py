"""Rulesets and codes as text a regulator reads: what `auditor rulesets` and
`auditor explain` print, and what a docs generator can reuse.

Everything here is a pure function of loaded rulesets and the registries
(text or rows of text), except `load_shipped`, which reads the shipped files.
"""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

from auditor.checks import CHECKS
from auditor.checks.parameters import PARAMETERS
from auditor.codes import CODES
from auditor.errors import RulesetError
from auditor.escape import one_line
from auditor.rules import ruleset as ruleset_mod
from auditor.rules.ruleset import SOURCE_KEYS, Rule, Ruleset

ABSENT = "-"
WIDTH = 88


# --- small formatting helpers ---------------------------------------------------------------

def format_value(value: Any) -> str:
    """A parameter value as short, unambiguous text: `5`, `true`, `exact`,
    `[dealer, game_supervisor]`, `[[dealer], [game_supervisor]]`,
    `{game_supervisor: [stickperson]}`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def format_table(rows: list[tuple[str, ...]], headers: tuple[str, ...] | None = None,
                 indent: str = "", sep: str = "  ") -> list[str]:
    """Rows as lines with aligned columns (the last column is not padded).
    Each cell is one line (`one_line`): a ruleset's text or a file name can
    never start a line of its own."""
    table = [tuple(one_line(str(c)) for c in r)
             for r in ([headers] if headers else []) + list(rows)]
    if not table:
        return []
    ncols = max(len(r) for r in table)
    widths = [max((len(r[i]) for r in table if i < len(r)), default=0) for i in range(ncols)]
    lines = []
    for r in table:
        cells = [c.ljust(widths[i]) for i, c in enumerate(r[:-1])] + [r[-1]]
        lines.append((indent + sep.join(cells)).rstrip())
    return lines


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent) or []


def regulatory_rules(rs: Ruleset) -> list[Rule]:
    """The rules the ruleset chose: all but the always-run `log.*` ones."""
    return [r for r in rs.rules if not r.code.startswith("log.")]


def log_rules(rs: Ruleset) -> list[Rule]:
    return [r for r in rs.rules if r.code.startswith("log.")]


def _code_order(code: str) -> tuple[int, str]:
    order = list(CODES)
    return (order.index(code) if code in order else len(order), code)


# --- loading the shipped rulesets -----------------------------------------------------------

def load_shipped() -> list[tuple[str, Ruleset | RulesetError]]:
    """Every shipped ruleset by file id, loaded, or the error that stopped it.

    Looks the folder up through `auditor.rules.ruleset` at call time, so tests
    (and a docs build) can point `ruleset.shipped_dir` elsewhere."""
    out: list[tuple[str, Ruleset | RulesetError]] = []
    for rid in ruleset_mod.shipped_ids():
        path = ruleset_mod.shipped_dir() / f"{rid}.toml"
        try:
            out.append((rid, ruleset_mod.load_ruleset(str(path))))
        except RulesetError as exc:
            out.append((rid, exc))
    return out


# --- rulesets list --------------------------------------------------------------------------

def list_rows(loaded: list[tuple[str, Ruleset | RulesetError]]) -> list[tuple[str, ...]]:
    """One row per ruleset: id, title, status, regulatory rule count; or id and
    `INVALID: <message>`. A file whose declared id differs from its name says so."""
    rows: list[tuple[str, ...]] = []
    for rid, rs in loaded:
        if isinstance(rs, RulesetError):
            rows.append((rid, f"INVALID: {rs}"))
            continue
        title = rs.title if rs.id == rid else f"{rs.title} (declares id {rs.id!r})"
        rows.append((rid, title, rs.status, str(len(regulatory_rules(rs)))))
    return rows


def format_list(loaded: list[tuple[str, Ruleset | RulesetError]]) -> str:
    if not loaded:
        return f"no shipped rulesets in {ruleset_mod.shipped_dir()}"
    good = [r for r in list_rows(loaded) if len(r) == 4]
    bad = [r for r in list_rows(loaded) if len(r) != 4]
    lines = format_table(good, ("ID", "TITLE", "STATUS", "RULES"))
    lines += format_table(bad)
    return "\n".join(lines)


# --- rulesets show --------------------------------------------------------------------------

def in_force(rs: Ruleset) -> str:
    """When the ruleset is in force (`effective_from` / `effective_to`)."""
    start, end = rs.effective_from, rs.effective_to
    if start and end:
        return f"{start.isoformat()} to {end.isoformat()} (both days included)"
    if start:
        return f"from {start.isoformat()} (included) until replaced"
    if end:
        return f"until {end.isoformat()} (included)"
    return "always (no effective dates)"


def describe_ruleset(rs: Ruleset) -> str:
    """Header, jurisdiction parameters, then every rule with the parameters its
    check reads."""
    source = "; ".join(f"{k}: {rs.source[k]}" for k in sorted(SOURCE_KEYS, key=_source_order)
                       if rs.source.get(k))
    files = [rs.files[0]] + [f"{f}  (extends the one above)" for f in rs.files[1:]]
    head = [
        ("id:", rs.id), ("title:", rs.title), ("jurisdiction:", rs.jurisdiction or ABSENT),
        ("authority:", rs.authority or ABSENT), ("status:", rs.status),
        *_wrapped_row("notes:", rs.notes or ABSENT), *_wrapped_row("source:", source or ABSENT),
        ("in force:", in_force(rs)),
        ("content hash:", rs.content_hash),
        ("files:", files[0]), *[("", f) for f in files[1:]],
        ("disabled rules:", ", ".join(rs.disabled) or "none"),
    ]
    lines = format_table(head)

    lines += ["", ("Parameters (ruleset: differs from the default; a rule may override those "
                   "its check reads)")]
    prow = []
    for name, value in rs.parameters.items():
        default = name in PARAMETERS and value == PARAMETERS[name].default
        prow.append((name, "default" if default else "ruleset", format_value(value)))
    lines += format_table(prow, indent="  ")

    regulatory = regulatory_rules(rs)
    lines += ["", f"Rules ({len(regulatory)})"]
    lines += _rule_block(rs, regulatory) if regulatory else ["  none"]
    lines += ["", "Log rules (always run; evidence quality, not regulatory)"]
    lines += _rule_block(rs, log_rules(rs))
    return "\n".join(lines)


def _source_order(key: str) -> int:
    order = ("document", "edition", "published", "url", "notes")
    return order.index(key) if key in order else len(order)


def _wrapped_row(label: str, text: str) -> list[tuple[str, str]]:
    """A long header value as a labelled row and unlabelled continuation rows."""
    wrapped = textwrap.wrap(text, WIDTH - 17) or [""]
    return [(label, wrapped[0])] + [("", w) for w in wrapped[1:]]


def _rule_block(rs: Ruleset, rules: list[Rule]) -> list[str]:
    heads = format_table([(r.id, r.code, r.severity, f"clause {r.clause}") for r in rules],
                         indent="  ")
    lines = []
    for head, rule in zip(heads, rules):
        lines.append(head)
        if rule.summary:
            lines += _wrap(rule.summary, "      ")
        lines += _wrap(f"check {rule.check}: {format_rule_params(rs, rule)}", "      ")
    return lines


def format_rule_params(rs: Ruleset, rule: Rule) -> str:
    """`name = value` for each parameter the rule's check reads; a value that
    differs from the ruleset's own is marked `(set on rule)`."""
    if not rule.params:
        return "no parameters"
    parts = []
    for name, value in rule.params.items():
        mark = " (set on rule)" if rs.parameters.get(name, value) != value else ""
        parts.append(f"{name} = {format_value(value)}{mark}")
    return ", ".join(parts)


# --- rulesets diff --------------------------------------------------------------------------

def diff_rulesets(a: Ruleset, b: Ruleset) -> dict[str, Any]:
    """What differs between two rulesets, as rows of text.

    - `parameters`: (name, value in a, value in b) for each differing parameter;
    - `only`: (code, rule in a, rule in b) for codes only one ruleset enforces
      (rules are matched by code, since ids differ between jurisdictions; a
      side without the rule holds `-`);
    - `changed`: (code, field, a, b) for rules with the same code whose check,
      clause, severity or a parameter differs. A parameter difference already
      shown under `parameters` (both rules take the ruleset's value) is not
      repeated; one set on the rule itself is.
    """
    params = [(name, format_value(a.parameters.get(name, ABSENT)),
               format_value(b.parameters.get(name, ABSENT)))
              for name in _union(a.parameters, b.parameters)
              if a.parameters.get(name, ABSENT) != b.parameters.get(name, ABSENT)]
    by_a, by_b = _by_code(a.rules), _by_code(b.rules)
    only, changed = [], []
    for code in sorted(set(by_a) | set(by_b), key=_code_order):
        ra, rb = by_a.get(code, []), by_b.get(code, [])
        for x, y in zip(ra, rb):
            changed += _rule_changes(a, b, x, y)
        for x in ra[len(rb):]:
            only.append((code, _rule_brief(x), ABSENT))
        for y in rb[len(ra):]:
            only.append((code, ABSENT, _rule_brief(y)))
    return {"a": a.id, "b": b.id, "parameters": params, "only": only, "changed": changed}


def is_identical(diff: dict[str, Any]) -> bool:
    return not (diff["parameters"] or diff["only"] or diff["changed"])


def format_diff(diff: dict[str, Any]) -> str:
    a, b = diff["a"], diff["b"]
    if is_identical(diff):
        return f"{a} and {b}: identical (no parameter or rule differs)"
    lines = [f"{a} vs {b}"]
    sections = (
        ("Parameters that differ", diff["parameters"], ("PARAMETER", a, b)),
        ("Rules only in one", diff["only"], ("CODE", a, b)),
        ("Rules that differ", diff["changed"], ("CODE", "FIELD", a, b)),
    )
    for title, rows, headers in sections:
        lines += ["", f"{title}:"]
        lines += format_table(rows, headers, indent="  ", sep="  |  ") if rows else ["  none"]
    return "\n".join(lines)


def _union(x: dict, y: dict) -> list[str]:
    return list(x) + [k for k in y if k not in x]


def _by_code(rules: list[Rule]) -> dict[str, list[Rule]]:
    out: dict[str, list[Rule]] = {}
    for r in rules:
        out.setdefault(r.code, []).append(r)
    return out


def _rule_brief(rule: Rule) -> str:
    return f"{rule.id}: clause {rule.clause}, {rule.severity}"


def _rule_changes(a: Ruleset, b: Ruleset, x: Rule, y: Rule) -> list[tuple[str, ...]]:
    code = x.code
    rows = [(code, f, getattr(x, f), getattr(y, f))
            for f in ("check", "clause", "severity") if getattr(x, f) != getattr(y, f)]
    for name in _union(x.params, y.params):
        vx, vy = x.params.get(name, ABSENT), y.params.get(name, ABSENT)
        if vx == vy:
            continue
        inherited = vx == a.parameters.get(name) and vy == b.parameters.get(name)
        if not inherited:
            rows.append((code, f"params.{name}", format_value(vx), format_value(vy)))
    return rows


# --- explain --------------------------------------------------------------------------------

def describe_code(code: str, loaded: list[tuple[str, Ruleset | RulesetError]]) -> str:
    """What a code means, the checks that report it (their full documentation)
    and which of the `loaded` rulesets enforce it, under which clause."""
    lines = [code, *_wrap(CODES[code], "  ")]
    checks = [c for c in CHECKS.values() if c.code == code]
    for chk in checks:
        params = ", ".join(chk.params) or "none"
        lines += ["", f"Check {chk.name} (family {chk.family}; parameters: {params})"]
        doc = inspect.cleandoc(chk.func.__doc__ or "")
        lines += [("  " + line).rstrip() for line in doc.splitlines()]
    if not checks:
        lines += ["", "No check reports this code yet."]
    lines += ["", "Enforced by the shipped rulesets:"]
    rows, absent, skipped = [], [], []
    for rid, rs in loaded:
        if isinstance(rs, RulesetError):
            skipped.append(f"  skipped {rid}: it does not load ({rs})")
            continue
        rules = [r for r in rs.rules if r.code == code]
        if not rules:
            absent.append(rid)
        for r in rules:
            rows.append((rid, f"rule {r.id}", f"clause {r.clause}", r.severity))
    lines += format_table(rows, indent="  ") if rows else ["  none"]
    if absent:
        lines += _wrap("Not enforced by: " + ", ".join(absent), "  ")
    lines += skipped
    return "\n".join(lines)


def close_codes(text: str, n: int = 5) -> list[str]:
    """Codes that look like `text`: containing it, or close by difflib."""
    import difflib

    low = text.lower()
    contains = [c for c in CODES if low and low in c]
    close = difflib.get_close_matches(low, list(CODES), n=n, cutoff=0.5)
    tails = difflib.get_close_matches(low, [c.split(".", 1)[-1] for c in CODES], n=n,
                                      cutoff=0.6)
    by_tail = [c for t in tails for c in CODES if c.split(".", 1)[-1] == t]
    out: list[str] = []
    for c in contains + close + by_tail:
        if c not in out:
            out.append(c)
    return out[:n]
