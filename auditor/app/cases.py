"""Rule test cases as data: `auditor rulesets test PATH`.

A case folder holds small cases, each a log and the findings expected of it,
written by hand:

    rulesets/cases/nz-1996/
        NZ5.7-stick.fires.csv        a log (.csv, .jsonl, .ndjson or .parquet, optionally .gz)
        NZ5.7-stick.fires.expect     what the audit must find in it
        NZ5.7-stick.lawful.csv       the lawful twin ...
        NZ5.7-stick.lawful.expect    ... whose expect file is empty: no finding at all

An expect file has one finding per line, `code seq` or `code table seq`
(`code seq` when the log holds one table); `-` stands for a seq (or table)
the finding has none of; `#` starts a comment; blank lines are ignored. The
audit's findings (every rule of the ruleset, `log.*` included) must be
exactly those lines: a finding not listed is *unexpected*, a line not found
is *missing*.

The ruleset of a folder is named by the folder: a folder `<id>` is judged by
`<id>.toml` two levels up (`rulesets/cases/<id>/` -> `rulesets/<id>.toml`),
else by the shipped ruleset `<id>`. `--ruleset ID|FILE` overrides it.

Everything here is a library function; the command only prints.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from auditor.codes import CODES
from auditor.errors import LogFileError, RulesetError
from auditor.logs.discover import format_from_name
from auditor.rules.ruleset import Ruleset, load_ruleset

EXPECT_SUFFIX = ".expect"
NO_VALUE = "-"

#: A finding as a case compares it: (code, table or None, seq or None).
Key = tuple[str, str | None, int | None]


@dataclass(frozen=True)
class Problem:
    """A broken case folder: where (file and, if known, line) and what."""

    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Expected:
    code: str
    table: str | None  # None in the `code seq` form: the log's one table
    seq: int | None
    line: int
    two_part: bool


@dataclass(frozen=True)
class Case:
    folder: Path
    name: str
    log: Path
    expect: Path

    @property
    def label(self) -> str:
        return f"{self.folder.name}/{self.name}"


@dataclass
class CaseResult:
    case: Case
    ruleset_id: str
    missing: list[Key] = field(default_factory=list)
    unexpected: list[tuple[Key, str]] = field(default_factory=list)  # (key, rule id)

    @property
    def passed(self) -> bool:
        return not self.missing and not self.unexpected


@dataclass
class CaseRun:
    results: list[CaseResult] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def failed(self) -> list[CaseResult]:
        return [r for r in self.results if not r.passed]

    @property
    def exit_code(self) -> int:
        return 2 if self.problems else (1 if self.failed else 0)


# --- finding the cases -----------------------------------------------------------------------

def case_name(path: Path) -> str | None:
    """`NAME` of `NAME.csv`, `NAME.csv.gz`, `NAME.expect`…; None for other files."""
    name = path.name
    if name.endswith(EXPECT_SUFFIX):
        return name[: -len(EXPECT_SUFFIX)]
    fmt = format_from_name(path)
    if fmt is None:
        return None
    base = name[:-3] if name.lower().endswith(".gz") else name
    return base.rsplit(".", 1)[0]


def _is_case_file(path: Path) -> bool:
    return path.is_file() and case_name(path) is not None


def case_folders(path: Path) -> list[Path]:
    """PATH itself when it holds case files, else its sub-folders that do."""
    if not path.is_dir():
        return []
    if any(_is_case_file(p) for p in path.iterdir()):
        return [path]
    return sorted(d for d in path.iterdir()
                  if d.is_dir() and any(_is_case_file(p) for p in d.iterdir()))


def collect_cases(folder: Path) -> tuple[list[Case], list[Problem]]:
    """Pair each log with its expect file; every file left alone is a problem."""
    logs: dict[str, list[Path]] = {}
    expects: dict[str, Path] = {}
    for p in sorted(folder.iterdir()):
        name = case_name(p) if p.is_file() else None
        if name is None:
            continue
        if p.name.endswith(EXPECT_SUFFIX):
            expects[name] = p
        else:
            logs.setdefault(name, []).append(p)
    cases, problems = [], []
    for name in sorted(set(logs) | set(expects)):
        found = logs.get(name, [])
        if name not in expects:
            problems.append(Problem(str(found[0]), f"no {name}{EXPECT_SUFFIX} beside this log "
                                    "(an empty expect file is the lawful case)"))
        elif not found:
            problems.append(Problem(str(expects[name]), f"no log beside this expect file "
                                    f"({name}.csv, .jsonl, .ndjson or .parquet)"))
        elif len(found) > 1:
            problems.append(Problem(str(found[1]), f"case {name!r} has more than one log: "
                                    + ", ".join(p.name for p in found)))
        else:
            cases.append(Case(folder, name, found[0], expects[name]))
    return cases, problems


def folder_ruleset(folder: Path, override: str | None = None) -> str:
    """The ruleset reference a case folder is judged by (see module doc)."""
    if override:
        return override
    beside = folder.parent.parent / f"{folder.name}.toml"
    return str(beside) if beside.is_file() else folder.name


# --- expect files ----------------------------------------------------------------------------

def parse_expect(path: Path) -> tuple[list[Expected], list[Problem]]:
    """The expected findings of one expect file, and each unreadable line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(str(path), f"cannot be read: {exc}")]
    out, problems = [], []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) not in (2, 3):
            problems.append(Problem(str(path), f"expected `code seq` or `code table seq`, "
                                    f"got {line!r}", n))
            continue
        code, seq_text = parts[0], parts[-1]
        if code not in CODES:
            problems.append(Problem(str(path), f"unknown code {code!r} (see `auditor explain`)",
                                    n))
            continue
        if seq_text == NO_VALUE:
            seq = None
        elif seq_text.isdigit():
            seq = int(seq_text)
        else:
            problems.append(Problem(str(path), f"seq should be a whole number or '-', "
                                    f"got {seq_text!r}", n))
            continue
        table = None if len(parts) == 2 or parts[1] == NO_VALUE else parts[1]
        out.append(Expected(code, table, seq, n, len(parts) == 2))
    return out, problems


# --- running ---------------------------------------------------------------------------------

def run_case(case: Case, ruleset: Ruleset, audit_fn=None) -> CaseResult | list[Problem]:
    """Audit one case's log and compare its findings with the expect file."""
    from auditor.logs.load import load_logs
    from auditor.run.local import audit_in_process

    expected, problems = parse_expect(case.expect)
    try:
        logs = load_logs([case.log])
    except LogFileError as exc:
        problems.append(Problem(exc.path, exc.problem, exc.line))
    if problems:
        return problems
    tables = sorted({str(t) for t in logs.events["table_id"].dropna().unique()}
                    | {str(t) for t in logs.quarantine["table_id"].dropna().unique()})
    want: Counter[Key] = Counter()
    for e in expected:
        table = e.table
        if e.two_part:
            if len(tables) != 1:
                problems.append(Problem(str(case.expect), f"the log holds tables "
                                        f"{', '.join(tables) or 'none'}: name the table "
                                        f"(`code table seq`)", e.line))
                continue
            table = tables[0]
        want[(e.code, table, e.seq)] += 1
    if problems:
        return problems
    findings = (audit_fn or audit_in_process)(logs, ruleset).findings
    got: Counter[Key] = Counter()
    rule_of: dict[Key, str] = {}
    for code, table, seq, rule_id in zip(findings["code"], findings["table_id"],
                                         findings["seq"], findings["rule_id"]):
        key = (str(code), None if table is None else str(table),
               None if seq is None or str(seq) == "<NA>" else int(seq))
        got[key] += 1
        rule_of.setdefault(key, str(rule_id))
    result = CaseResult(case, ruleset.id)
    result.missing = sorted((want - got).elements(), key=_order)
    result.unexpected = [(k, rule_of[k]) for k in sorted((got - want).elements(), key=_order)]
    return result


def run_cases(path: Path, ruleset_ref: str | None = None, audit_fn=None) -> CaseRun:
    """Run every case under PATH (a case folder, or a folder of them)."""
    run = CaseRun()
    if not path.exists():
        run.problems.append(Problem(str(path), "no such folder"))
        return run
    folders = case_folders(path)
    if not folders:
        run.problems.append(Problem(str(path), "no test cases here (a case is NAME.csv "
                                    "beside NAME.expect)"))
    for folder in folders:
        cases, problems = collect_cases(folder)
        run.problems += problems
        ref = folder_ruleset(folder, ruleset_ref)
        try:
            ruleset = load_ruleset(ref)
        except RulesetError as exc:
            run.problems.append(Problem(str(folder), f"cannot load its ruleset {ref!r}: {exc}"))
            continue
        for case in cases:
            outcome = run_case(case, ruleset, audit_fn)
            if isinstance(outcome, list):
                run.problems += outcome
            else:
                run.results.append(outcome)
    return run


def _order(key) -> tuple:
    code, table, seq = key
    return (table or "", -1 if seq is None else seq, code)


# --- text ------------------------------------------------------------------------------------

def format_key(key: Key) -> str:
    code, table, seq = key
    return f"{code} {table or NO_VALUE} {NO_VALUE if seq is None else seq}"


def format_result(result: CaseResult) -> list[str]:
    """`PASS label` or `FAIL label: …` with one indented line per difference."""
    if result.passed:
        return [f"PASS  {result.case.label}"]
    what = []
    if result.missing:
        what.append(f"{len(result.missing)} missing")
    if result.unexpected:
        what.append(f"{len(result.unexpected)} unexpected")
    lines = [f"FAIL  {result.case.label}: {', '.join(what)} (ruleset {result.ruleset_id})"]
    lines += [f"        missing:    {format_key(k)}" for k in result.missing]
    lines += [f"        unexpected: {format_key(k)}  (rule {rule})"
              for k, rule in result.unexpected]
    return lines


def format_totals(run: CaseRun) -> str:
    n = len(run.results)
    text = f"{n} case(s): {n - len(run.failed)} passed, {len(run.failed)} failed"
    if run.problems:
        text += f"; {len(run.problems)} problem(s) in the case folders"
    return text
