"""Load, merge and validate rulesets: one TOML file per jurisdiction.

A ruleset is data, never code: it names registered checks and sets their
parameters. `extends` merges like yamllint presets: a child rule with the same
`id` overrides fields and params, `enabled = false` removes it, new ids are
added, and parameters merge key by key. Everything is validated before any
log is read; every error names the file, the rule id and the key.

An overlay never loosens silently: a rule it disables is listed in
`Ruleset.disabled`, a rule whose severity it lowers in `Ruleset.loosened`,
and every audit reports both. `effective_from` / `effective_to` (ISO dates,
both inclusive) say when a version of a ruleset is in force; each file states
its own (they are not inherited through `extends`), and they matter only when
a family of versions is audited (`auditor.rules.versions`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from auditor.checks import CHECKS
from auditor.checks.parameters import PARAMETERS, ParameterError, validate_value
from auditor.checks.registry import STAFF_ROLES
from auditor.codes import CODES, LOG_CODES, SEVERITIES, SEVERITY_RANK
from auditor.errors import RulesetError
from auditor.guarded import MAX_KEY_CHARS, MAX_KEY_PARTS, load_toml  # noqa: F401 (re-exported)

MAX_EXTENDS_DEPTH = 16
MAX_RULESET_BYTES = 1 << 20

RULESET_KEYS = {
    "id", "title", "jurisdiction", "authority", "source", "status", "notes", "extends",
    "parameters", "effective_from", "effective_to",
}
#: [ruleset] keys a file states for itself: never inherited through `extends`.
OWN_KEYS = ("effective_from", "effective_to")
SOURCE_KEYS = {"document", "edition", "published", "url", "notes"}
RULE_KEYS = {"id", "check", "code", "clause", "summary", "severity", "enabled", "params",
             "responsible_role"}
STATUSES = ("verified", "provisional")
#: What a ruleset id is made of: it names a file (`<id>.toml`) and may carry
#: a version after `@` (`nz@2010`, see `auditor.rules.versions`).
RULESET_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(@[A-Za-z0-9._-]+)?")
#: What a rule id is made of (`R5.7-stick`, `AU3.4-3.5-die-off-table`,
#: `log.sequence_gap`): an identifier, never text that could act where it
#: is written (a line break in a comment, a path).
RULE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
MAX_ID_CHARS = 128
RULESET_ID_RULE = ("a ruleset id is letters, digits, '.', '_' and '-', starting with a letter "
                   f"or digit, at most {MAX_ID_CHARS} characters (optionally a version after "
                   "'@', as in nz@2010)")
RULE_ID_RULE = ("a rule id is letters, digits, '.', '_' and '-', starting with a letter or "
                f"digit, at most {MAX_ID_CHARS} characters")


def is_ruleset_id(text: str) -> bool:
    return len(text) <= MAX_ID_CHARS and RULESET_ID.fullmatch(text) is not None


def is_rule_id(text: str) -> bool:
    return len(text) <= MAX_ID_CHARS and RULE_ID.fullmatch(text) is not None


@dataclass(frozen=True)
class Rule:
    id: str
    check: str
    code: str
    clause: str
    summary: str
    severity: str
    params: dict[str, Any]
    #: The staff role the rule makes answerable for a breach when it names
    #: one (`responsible_role`); else the check's default (`responsible`).
    responsible_role: str | None = None

    @property
    def responsible(self) -> str | None:
        """The staff role answerable for a breach: the rule's, else its
        check's default (`auditor.checks.registry.RESPONSIBLE_ROLES`)."""
        if self.responsible_role is not None:
            return self.responsible_role
        check = CHECKS.get(self.check)
        return check.responsible_role if check is not None else None

    @property
    def stated(self) -> dict:
        """The rule as data for the content hash: `responsible_role` only
        when the rule names one (every other ruleset hashes as before)."""
        data = dict(self.__dict__)
        if data.get("responsible_role") is None:
            data.pop("responsible_role", None)
        return data


@dataclass
class Ruleset:
    id: str
    title: str
    jurisdiction: str
    authority: str
    status: str
    notes: str
    source: dict[str, str]
    parameters: dict[str, Any]
    rules: list[Rule]
    files: list[str] = field(default_factory=list)
    disabled: list[str] = field(default_factory=list)
    #: Rules an overlay made less severe: {"rule", "from", "to", "by"} (`by`:
    #: the id of the file that lowered it).
    loosened: list[dict] = field(default_factory=list)
    effective_from: date | None = None
    effective_to: date | None = None
    #: Set when the file declares the id of a shipped ruleset but is not it
    #: (`_compare_with_shipped`): {"id", "file", "shipped_hash", "rules",
    #: "dropped", "changed"}; such a ruleset is never shown as the shipped one.
    not_shipped: dict | None = None

    @property
    def shown(self) -> str:
        """The ruleset as a report names it: its id, and for a file that
        declares a shipped ruleset's id without being it, whose file it is."""
        if self.not_shipped is None:
            return self.id
        return f"{self.id} from {self.not_shipped['file']}, not the shipped {self.id}"

    @property
    def content(self) -> dict:
        """The merged ruleset as plain data: what the hash covers (the dates
        of a version only when it gives them, so other hashes never change)."""
        data = {
            "id": self.id, "title": self.title, "jurisdiction": self.jurisdiction,
            "authority": self.authority, "status": self.status, "notes": self.notes,
            "source": self.source, "parameters": self.parameters,
            "rules": [r.stated for r in self.rules],
        }
        for k in OWN_KEYS:
            if getattr(self, k) is not None:
                data[k] = getattr(self, k).isoformat()
        return data

    @property
    def content_hash(self) -> str:
        text = json.dumps(self.content, sort_keys=True, ensure_ascii=False,
                          separators=(",", ":"))
        return "sha256:" + hashlib.sha256(text.encode()).hexdigest()

    def rule(self, rule_id: str) -> Rule:
        for r in self.rules:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)


def shipped_dir() -> Path:
    """Where the shipped rulesets live: `rulesets/` of a source checkout, or
    the copy installed inside the package."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here.parent / "rulesets", here / "_shipped_rulesets"):
        if candidate.is_dir():
            return candidate
    return here.parent / "rulesets"


def shipped_ids() -> list[str]:
    return sorted(p.stem for p in shipped_dir().glob("*.toml"))


def looks_like_path(ref: str) -> bool:
    """Whether a ruleset reference names a file: it holds a folder separator
    or ends in `.toml`. Anything else is an id, and an id names only a
    shipped ruleset or family, never a file that happens to lie in the
    current folder (`./nz-table-games` must be written so)."""
    seps = {"/", os.sep, os.altsep} - {None}
    return any(sep in ref for sep in seps) or ref.lower().endswith(".toml")


def resolve_path(ref: str, relative_to: Path | None = None) -> Path:
    """The one resolver of a ruleset reference: a path (`looks_like_path`;
    relative to the referring file when there is one) or the id of a
    shipped ruleset. RulesetError for an id no shipped ruleset has."""
    if looks_like_path(ref):
        candidate = Path(ref).expanduser()
        if relative_to is not None and not candidate.is_absolute():
            return relative_to.parent / candidate
        return candidate
    # Only an id names a shipped ruleset: `../../x` must not reach outside.
    shipped = shipped_dir() / f"{ref}.toml"
    if is_ruleset_id(ref) and shipped.is_file():
        return shipped
    known = ", ".join(shipped_ids()) or "none"
    stray = (f"; the file {_shown(ref)} here is not read for an id: name it as a path, "
             f"./{ref}" if Path(ref).is_file() and not relative_to else "")
    raise RulesetError(ref, f"no such ruleset: no shipped ruleset of that id (shipped ids: "
                            f"{known}; or give a path: a .toml file, or one with a folder)"
                            f"{stray}")


def load_ruleset(ref: str) -> Ruleset:
    """Load a ruleset by id or path, resolving `extends`, and validate it."""
    path = resolve_path(ref)
    merged, files, disabled = _load_merged(path, chain=[])
    rs = _build(merged, files, disabled)
    _compare_with_shipped(rs, path)
    return rs


def _compare_with_shipped(rs: Ruleset, path: Path) -> None:
    """A ruleset whose id is a shipped ruleset's but whose file is not that
    ruleset's (a copy with rules cut, an overlay keeping its parent's id) is
    never presented as the shipped one: `rs.not_shipped` says whose file it
    is and which of the shipped rules it drops or changes, and the rules it
    makes looser join `rs.loosened` (by: the file). A file whose merged
    content is the shipped ruleset's exactly is that ruleset."""
    shipped_path = shipped_dir() / f"{rs.id}.toml"
    if not shipped_path.is_file() or _same_file(path, shipped_path):
        return
    shipped = load_ruleset(str(shipped_path.resolve()))
    if shipped.content_hash == rs.content_hash:
        return
    mine = {r.id: r for r in rs.rules}
    rs.not_shipped = {
        "id": rs.id, "file": str(path), "shipped_hash": shipped.content_hash,
        "rules": len(shipped.rules),
        "dropped": [r.id for r in shipped.rules if r.id not in mine],
        "changed": [r.id for r in shipped.rules if r.id in mine and mine[r.id] != r],
    }
    listed = {(x["rule"], x.get("what")) for x in rs.loosened}
    for r in shipped.rules:
        if r.id in mine:
            rs.loosened += [x for x in rule_loosening(r, mine[r.id], str(path))
                            if (x["rule"], x.get("what")) not in listed]
    rs.loosened.sort(key=lambda x: (x["rule"], "what" in x))


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or a.samefile(b)
    except OSError:
        return False


def _read_toml(path: Path) -> dict:
    """A ruleset file under the one guarded reader (`auditor.guarded`)."""
    return load_toml(path, MAX_RULESET_BYTES, "a ruleset",
                     lambda problem: RulesetError(str(path), problem))


def _load_merged(path: Path, chain: list[str]) -> tuple[dict, list[str], list[str]]:
    key = str(path.resolve())
    if key in chain:
        cycle = " -> ".join([*chain, key])
        raise RulesetError(str(path), f"extends cycle: {cycle}", key="extends")
    if len(chain) >= MAX_EXTENDS_DEPTH:
        raise RulesetError(str(path), f"extends chain deeper than {MAX_EXTENDS_DEPTH}",
                           key="extends")
    data = _read_toml(path)
    _validate_shape(data, str(path))
    head = data["ruleset"]
    for k in ("id", "title", "status"):
        # Every file names itself: a child never passes as its parent.
        if not str(head.get(k, "")).strip():
            raise RulesetError(str(path), "required in [ruleset]", key=k)
    parent_ref = head.get("extends")
    if parent_ref is None:
        rules = {r["id"]: {**r, "_file": str(path)} for r in data.get("rule", [])}
        disabled = [rid for rid, r in rules.items() if r.get("enabled") is False]
        for rid in disabled:
            del rules[rid]
        head = dict(head)
        head["_rules"] = rules
        head["_loosened"] = {}
        return head, [str(path)], disabled
    try:
        parent_path = resolve_path(parent_ref, relative_to=path)
    except RulesetError as exc:
        raise RulesetError(str(path), str(exc), key="extends") from None
    if not parent_path.exists():
        raise RulesetError(str(path), f"{parent_ref}: no such file (looked for {parent_path})",
                           key="extends")
    parent, files, disabled = _load_merged(parent_path, [*chain, key])
    merged = copy.deepcopy(parent)
    for k in OWN_KEYS:
        merged.pop(k, None)
    for k, v in head.items():
        if k == "parameters":
            merged["parameters"] = {**parent.get("parameters", {}), **v}
        elif k == "source":
            merged["source"] = {**parent.get("source", {}), **v}
        elif k != "extends":
            merged[k] = v
    rules = merged["_rules"]
    loosened = merged["_loosened"]
    for rule in data.get("rule", []):
        rid = rule["id"]
        if rule.get("enabled") is False:
            if rules.pop(rid, None) is None:
                raise RulesetError(str(path), "disables a rule that no ruleset it extends "
                                   "has (a misspelt id would silently disable nothing)",
                                   rule=rid, key="enabled")
            disabled.append(rid)
            loosened.pop(rid, None)  # listed as disabled instead
            loosened.pop(rid + CHECK_KEY, None)
            continue
        if rid in disabled:
            disabled.remove(rid)
        before = _inherited_severity(rules, rule)
        before_check = rules[rid].get("check") if rid in rules else None
        if rid in rules:
            base = rules[rid]
            params = {**base.get("params", {}), **rule.get("params", {})}
            rules[rid] = {**base, **rule, "params": params, "_file": str(path)}
        else:
            rules[rid] = {**rule, "_file": str(path)}
        _note_loosening(loosened, rid, before, rules[rid].get("severity"), head["id"])
        _note_check_swap(loosened, rid, before_check, rules[rid].get("check"), head["id"])
    return merged, [*files, str(path)], disabled


def _inherited_severity(rules: dict, rule: dict) -> str | None:
    """The severity a child's rule replaces: the parent's rule of that id, or,
    for a `log.*` rule restated for the first time, the default every audit
    would otherwise run it at."""
    if rule["id"] in rules:
        return rules[rule["id"]].get("severity")
    code = _stated_code(rule)
    if code in LOG_RULE_DEFAULTS and not any(_stated_code(r) == code
                                             for r in rules.values()):
        return LOG_RULE_DEFAULTS[code][1]
    return None


def _stated_code(rule: dict) -> str | None:
    """A rule's code: as it states it, or else its check's (each check
    reports one code, so `code` may be left out)."""
    if rule.get("code"):
        return rule["code"]
    chk = CHECKS.get(rule.get("check"))
    return chk.code if chk is not None else None


def _note_loosening(loosened: dict, rid: str, before: str | None, after: str | None,
                    by: str) -> None:
    """Record a severity an overlay lowered; forget it when a later overlay
    restores it. `from` stays the severity before the first lowering."""
    if before not in SEVERITY_RANK or after not in SEVERITY_RANK:
        return
    origin = loosened[rid]["from"] if rid in loosened else before
    if SEVERITY_RANK[after] > SEVERITY_RANK[origin]:
        loosened[rid] = {"rule": rid, "from": origin, "to": after, "by": by}
    else:
        loosened.pop(rid, None)


#: The key under which a rule's swapped check is recorded (beside the rule id,
#: under which a lowered severity is).
CHECK_KEY = "#check"


def _note_check_swap(loosened: dict, rid: str, before: str | None, after: str | None,
                     by: str) -> None:
    """Record a rule an overlay made check something else (same id, another
    `check`); forget it when a later overlay restores the check. Another
    check is never provably the same or stricter, so it is loosening: the
    rule's findings may all vanish while its id and severity stand."""
    if before is None or after is None:
        return
    key = rid + CHECK_KEY
    origin = loosened[key]["from"] if key in loosened else before
    if after != origin:
        loosened[key] = {"rule": rid, "what": "check", "from": origin, "to": after, "by": by}
    else:
        loosened.pop(key, None)


def rule_loosening(before: Rule, after: Rule, by: str) -> list[dict]:
    """How `after` is looser than `before` (the same rule id): a lower
    severity, another check. The one place either is decided, for an
    overlay (`_load_merged`) and for a file compared with the shipped
    ruleset whose id it declares (`_compare_with_shipped`)."""
    found: dict = {}
    _note_loosening(found, after.id, before.severity, after.severity, by)
    _note_check_swap(found, after.id, before.check, after.check, by)
    return [found[k] for k in sorted(found)]


def _validate_shape(data: dict, path: str) -> None:
    """Keys and types of one file, before any merging."""
    unknown = set(data) - {"ruleset", "rule"}
    if unknown:
        raise RulesetError(path, "unknown top-level key", key=min(unknown))
    head = data.get("ruleset")
    if not isinstance(head, dict):
        raise RulesetError(path, "missing [ruleset] table", key="ruleset")
    for k in head:
        if k not in RULESET_KEYS:
            raise RulesetError(path, "unknown key in [ruleset]", key=k)
    for k in ("id", "title", "jurisdiction", "authority", "status", "notes", "extends"):
        if k in head and not isinstance(head[k], str):
            raise RulesetError(path, "should be a string", key=k)
    if "id" in head and head["id"].strip() and not is_ruleset_id(head["id"]):
        raise RulesetError(path, f"{_shown(head['id'])}: {RULESET_ID_RULE}", key="id")
    if "parameters" in head and not isinstance(head["parameters"], dict):
        raise RulesetError(path, "should be a table", key="parameters")
    dates = {k: _iso_date(head[k], path, k) for k in OWN_KEYS if k in head}
    if len(dates) == 2 and dates["effective_from"] > dates["effective_to"]:
        raise RulesetError(path, f"is before effective_from "
                           f"({dates['effective_from'].isoformat()})", key="effective_to")
    if "source" in head:
        if not isinstance(head["source"], dict):
            raise RulesetError(path, "should be a table", key="source")
        for k, v in head["source"].items():
            if k not in SOURCE_KEYS:
                raise RulesetError(path, "unknown key in [ruleset.source]", key=k)
            if not isinstance(v, str):
                raise RulesetError(path, "should be a string", key=f"source.{k}")
    rules = data.get("rule", [])
    if not isinstance(rules, list):
        raise RulesetError(path, "should be an array of tables ([[rule]])", key="rule")
    seen = set()
    for i, rule in enumerate(rules):
        rid = rule.get("id") if isinstance(rule, dict) else None
        if not isinstance(rid, str) or not rid.strip():
            raise RulesetError(path, f"rule #{i + 1} has no id", key="id")
        if not is_rule_id(rid):
            raise RulesetError(path, f"rule #{i + 1}: {_shown(rid)}: {RULE_ID_RULE}", key="id")
        if rid in seen:
            raise RulesetError(path, "rule id used twice in one file", rule=rid, key="id")
        seen.add(rid)
        for k, v in rule.items():
            if k not in RULE_KEYS:
                raise RulesetError(path, "unknown key", rule=rid, key=k)
            if k == "enabled" and not isinstance(v, bool):
                raise RulesetError(path, "should be true or false", rule=rid, key=k)
            if k == "params" and not isinstance(v, dict):
                raise RulesetError(path, "should be a table", rule=rid, key=k)
            if k not in ("enabled", "params") and not isinstance(v, str):
                raise RulesetError(path, "should be a string", rule=rid, key=k)


def _shown(text: str) -> str:
    """An id that is not one, as a message may quote it: escaped (repr), and
    cut when long."""
    return repr(text) if len(text) <= 80 else f"{text[:80]!r}… ({len(text)} characters)"


def _iso_date(value: Any, path: str, key: str) -> date:
    """An ISO date, `2010-07-01`: a TOML date or a string (not a date-time)."""
    if isinstance(value, date) and type(value) is date:
        return value
    if isinstance(value, str) and len(value.strip()) == 10:
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise RulesetError(path, f"should be an ISO date (YYYY-MM-DD), not {value!r}", key=key)


def _build(merged: dict, files: list[str], disabled: list[str]) -> Ruleset:
    path = files[-1]
    for k in ("id", "title", "status"):
        if not merged.get(k, "").strip():
            raise RulesetError(path, "required in [ruleset]", key=k)
    if merged["status"] not in STATUSES:
        raise RulesetError(path, f"should be one of {', '.join(STATUSES)}", key="status")
    if merged["status"] == "provisional" and not merged.get("notes", "").strip():
        raise RulesetError(path, "a provisional ruleset needs a notes line saying why",
                           key="notes")
    parameters = {name: p.default for name, p in PARAMETERS.items() if not p.stated_only}
    for name, value in merged.get("parameters", {}).items():
        try:
            parameters[name] = validate_value(name, value)
        except ParameterError as exc:
            raise RulesetError(path, str(exc), key=f"parameters.{name}") from None
    rules: list[Rule] = []
    for rid, raw in merged["_rules"].items():
        where = raw.get("_file", path)
        for k in ("check", "clause", "severity"):
            if not str(raw.get(k, "")).strip():
                raise RulesetError(where, "required and must not be empty", rule=rid, key=k)
        if "code" in raw and not str(raw["code"]).strip():
            raise RulesetError(where, "must not be empty (or leave it out: the check's code "
                               "is used)", rule=rid, key="code")
        chk = CHECKS.get(raw["check"])
        if chk is None:
            raise RulesetError(where, f"unknown check {raw['check']!r}", rule=rid, key="check")
        # Each check reports one code: `code` may be left out (the check's),
        # and when stated it must be that one (a reader's cross-check).
        code = raw.get("code", chk.code)
        if code not in CODES:
            raise RulesetError(where, f"unknown code {code!r}", rule=rid, key="code")
        if code != chk.code:
            raise RulesetError(where, f"check {chk.name!r} reports {chk.code!r}, not "
                               f"{code!r}", rule=rid, key="code")
        if raw["severity"] not in SEVERITIES:
            raise RulesetError(where, f"should be one of {', '.join(SEVERITIES)}",
                               rule=rid, key="severity")
        params = {name: parameters[name] for name in chk.params}
        for name, value in raw.get("params", {}).items():
            if name not in chk.params:
                raise RulesetError(where, f"check {chk.name!r} takes no parameter {name!r} "
                                   f"(it takes: {', '.join(chk.params) or 'none'})",
                                   rule=rid, key=f"params.{name}")
            try:
                params[name] = validate_value(name, value)
            except ParameterError as exc:
                raise RulesetError(where, str(exc), rule=rid, key=f"params.{name}") from None
        role = raw.get("responsible_role")
        if role is not None and role not in STAFF_ROLES:
            raise RulesetError(where, f"should be one of {', '.join(STAFF_ROLES)}",
                               rule=rid, key="responsible_role")
        rules.append(Rule(rid, chk.name, code, raw["clause"].strip(),
                          raw.get("summary", "").strip(), raw["severity"], params, role))
    rules.extend(_log_rules(rules))
    return Ruleset(
        id=merged["id"], title=merged["title"], jurisdiction=merged.get("jurisdiction", ""),
        authority=merged.get("authority", ""), status=merged["status"],
        notes=merged.get("notes", ""), source=dict(merged.get("source", {})),
        parameters=parameters, rules=rules, files=files, disabled=disabled,
        loosened=[dict(v) for _, v in sorted(merged.get("_loosened", {}).items())],
        **{k: _iso_date(merged[k], path, k) for k in OWN_KEYS if k in merged},
    )


#: The evidence-quality rules every audit runs, whatever the ruleset lists.
LOG_RULE_DEFAULTS = {
    "log.sequence_gap": ("sequence_gap", "major"),
    "log.out_of_order": ("sequence_order", "major"),
    "log.malformed": ("row_malformed", "major"),
    "log.unknown_reference": ("unknown_reference", "minor"),
}


def _log_rules(rules: list[Rule]) -> list[Rule]:
    """Add the `log.*` rules a ruleset did not list itself (they are always
    reported; a ruleset may only restate them to change severity or wording)."""
    listed = {r.code for r in rules}
    extra = []
    for code in LOG_CODES:
        if code not in listed:
            check_name, severity = LOG_RULE_DEFAULTS[code]
            extra.append(Rule(code, check_name, code, "event-log-v1", CODES[code], severity, {}))
    return extra
