"""The reference of a ruleset, generated from its TOML and the check registry:
`auditor rulesets docs ID --format md|html`.

Like sqlfluff's rule docs, nothing is written twice: the header and the
parameters come from the ruleset, what a rule checks and its example breach
and lawful case from its check's docstring ("Fires on:", "Quiet on:",
"Points at:"), what a code means from the violation catalogue, and the names
of the ruleset's own test cases (`rulesets/cases/<id>/`) where there are any.
The output is a pure function of those: the same inputs give the same bytes.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

import jinja2
import markupsafe

from auditor.app.cases import EXPECT_SUFFIX, case_name
from auditor.checks import CHECKS
from auditor.checks.parameters import PARAMETERS
from auditor.codes import CODES
from auditor.rules import ruleset as ruleset_mod
from auditor.rules.describe import format_value, in_force, log_rules, regulatory_rules
from auditor.rules.ruleset import Rule, Ruleset

FORMATS = ("md", "html")
LOG_RULES_NOTE = ("Evidence quality, not regulatory: every audit runs them whatever the "
                  "ruleset lists.")
#: Docstring labels, in the order the reference shows them.
SECTIONS = {"Parameters:": "parameters", "Parameter:": "parameters",
            "Fires on:": "fires", "Quiet on:": "quiet", "Points at:": "points"}


@dataclass
class RuleDoc:
    id: str
    clause: str
    code: str
    meaning: str
    severity: str
    summary: str
    check: str
    checks: str
    details: str
    params: list[tuple[str, str, str]]  # (name, value, "rule" | "ruleset")
    fires: str
    quiet: str
    points: str
    cases: list[CaseDoc] = field(default_factory=list)


@dataclass
class RulesetDoc:
    id: str
    title: str
    header: list[tuple[str, str]]
    parameters: list[tuple[str, str, str, str]]  # (name, value, default/ruleset, meaning)
    rules: list[RuleDoc]
    log_rules: list[tuple[str, str, str]]  # (code, severity, meaning)
    cases_dir: str | None


def doc_sections(doc: str) -> dict[str, str]:
    """A check docstring cut into `description` (the first paragraph),
    `details` (other prose) and its labelled sections, each on one line."""
    doc = inspect.cleandoc(doc or "")
    paragraphs = doc.split("\n\n")
    out = {"description": " ".join(paragraphs[0].split()), "details": "", "parameters": "",
           "fires": "", "quiet": "", "points": ""}
    current, details = None, []
    for line in "\n\n".join(paragraphs[1:]).splitlines():
        label = next((lab for lab in SECTIONS if line.startswith(lab)), None)
        if label:
            current = SECTIONS[label]
            out[current] = line[len(label):].strip()
        elif not line.strip():
            current = None
        elif current:
            out[current] += " " + line.strip()
        else:
            details.append(line.strip())
    out["details"] = " ".join(details)
    return out


@dataclass(frozen=True)
class CaseDoc:
    name: str
    codes: tuple[str, ...]  # the codes its expect file lists
    about: str  # its comments, less the first line (the rule it is about)


def case_docs(cases_dir: Path | None) -> dict[str, CaseDoc]:
    """{case name: CaseDoc} for the cases of a folder."""
    out: dict[str, CaseDoc] = {}
    if cases_dir is None or not cases_dir.is_dir():
        return out
    for p in sorted(cases_dir.iterdir()):
        if not (p.is_file() and p.name.endswith(EXPECT_SUFFIX)):
            continue
        lines = p.read_text(encoding="utf-8").splitlines()
        codes = tuple(x.split("#", 1)[0].split()[0] for x in lines
                      if x.split("#", 1)[0].strip())
        notes = [x.strip().lstrip("#").strip() for x in lines if x.strip().startswith("#")]
        about = " ".join(n for n in notes[1:] if n != "No finding expected.")
        out[case_name(p)] = CaseDoc(case_name(p), codes, about)
    return out


def default_cases_dir(rs: Ruleset) -> Path | None:
    """`cases/<id>/` beside the shipped rulesets (a source checkout), if any."""
    folder = ruleset_mod.shipped_dir() / "cases" / rs.id
    return folder if folder.is_dir() else None


def build(rs: Ruleset, cases_dir: Path | None = None) -> RulesetDoc:
    """The reference of `rs` as data, ready for a template."""
    cases = case_docs(cases_dir)
    source = "; ".join(f"{k}: {v}" for k, v in rs.source.items() if v)
    header = [("Jurisdiction", rs.jurisdiction), ("Authority", rs.authority),
              ("Source", source), ("Status", rs.status), ("Notes", rs.notes)]
    if rs.effective_from or rs.effective_to:
        header.append(("In force", in_force(rs)))
    header += [("Files", " extends ".join(Path(f).name for f in reversed(rs.files))),
               ("Content hash", rs.content_hash)]
    if rs.disabled:
        header.append(("Disabled rules", ", ".join(rs.disabled)))
    if rs.loosened:
        header.append(("Loosened rules", ", ".join(
            f"{x['rule']} ({x['from']} to {x['to']}, by {x['by']})" for x in rs.loosened)))
    parameters = [
        (name, format_value(value),
         "default" if name in PARAMETERS and value == PARAMETERS[name].default else "ruleset",
         PARAMETERS[name].doc if name in PARAMETERS else "")
        for name, value in rs.parameters.items()]
    rules = [_rule_doc(rs, r, cases) for r in regulatory_rules(rs)]
    logs = [(r.code, r.severity, CODES.get(r.code, "")) for r in log_rules(rs)]
    return RulesetDoc(rs.id, rs.title, [(k, v) for k, v in header if v], parameters, rules,
                      logs, _rel(cases_dir))


def _rule_doc(rs: Ruleset, rule: Rule, cases: dict[str, CaseDoc]) -> RuleDoc:
    chk = CHECKS[rule.check]
    sec = doc_sections(chk.func.__doc__ or "")
    params = [(name, format_value(value),
               "rule" if rs.parameters.get(name, value) != value else "ruleset")
              for name, value in rule.params.items()]
    # The rule's own cases (named `<rule id>.<anything>`), firing ones first.
    own = [c for n, c in cases.items() if n.startswith(rule.id + ".")]
    own.sort(key=lambda c: (rule.code not in c.codes, c.name))
    return RuleDoc(rule.id, rule.clause, rule.code, CODES.get(rule.code, ""), rule.severity,
                   rule.summary, rule.check, sec["description"], sec["details"], params,
                   sec["fires"], sec["quiet"], sec["points"], own)


def _rel(path: Path | None) -> str | None:
    """A cases folder as a stable, machine-independent text."""
    if path is None:
        return None
    parts = path.resolve().parts
    if "rulesets" in parts:
        return "/".join(parts[len(parts) - 1 - parts[::-1].index("rulesets"):])
    return path.name


# --- Markdown -------------------------------------------------------------------------------

def render_md(doc: RulesetDoc) -> str:
    out = [f"# {_md_inline(doc.id)}: {_md_inline(doc.title)}", "",
           "Generated by `auditor rulesets docs " + doc.id + " --format md` from the ruleset "
           "and the check registry; do not edit by hand.", ""]
    out += [f"- **{k}:** {_md_inline(v)}" for k, v in doc.header]
    out += ["", "## Parameters", "",
            "| parameter | value | set by | meaning |", "|---|---|---|---|"]
    out += [f"| `{n}` | `{_cell(v)}` | {s} | {_cell(m)} |" for n, v, s, m in doc.parameters]
    out += ["", f"## Rules ({len(doc.rules)})", ""]
    out += [f"- [`{r.id}`](#{_anchor(r.id)}) clause {_md_inline(r.clause)}: `{r.code}` "
            f"({r.severity})" for r in doc.rules]
    for r in doc.rules:
        out += ["", f'<a id="{_anchor(r.id)}"></a>', "", f"### {_md_inline(r.id)}", ""]
        out += [f"- **Clause:** {_md_inline(r.clause)}",
                f"- **Code:** `{r.code}`: {_md_inline(r.meaning)}",
                f"- **Severity:** {r.severity}"]
        if r.summary:
            out.append(f"- **Summary:** {_md_inline(r.summary)}")
        out.append(f"- **Check:** `{r.check}`: {_md_inline(r.checks)}")
        if r.details:
            out.append(f"  {_md_inline(r.details)}")
        if r.params:
            out.append("- **Parameters:** " + ", ".join(
                f"`{n} = {v}`" + (" (set on this rule)" if s == "rule" else "")
                for n, v, s in r.params))
        else:
            out.append("- **Parameters:** none")
        if r.fires:
            out.append(f"- **Example breach:** {_md_inline(r.fires)}")
        if r.quiet:
            out.append(f"- **Lawful case:** {_md_inline(r.quiet)}")
        if r.points:
            out.append(f"- **The finding points at:** {_md_inline(r.points)}")
        if r.cases:
            out.append(f"- **Test cases** (in `{doc.cases_dir}/`):")
            out += [f"  - `{c.name}`" + (f": {_md_inline(c.about)}" if c.about else "")
                    for c in r.cases]
    out += ["", "## Log rules (always run)", "", LOG_RULES_NOTE, "",
            "| code | severity | meaning |", "|---|---|---|"]
    out += [f"| `{c}` | {s} | {_cell(m)} |" for c, s, m in doc.log_rules]
    return "\n".join(out) + "\n"


def _anchor(text: str) -> str:
    return "rule-" + re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _cell(text: str) -> str:
    return _md_inline(text).replace("|", "\\|")


def _md_inline(text: str) -> str:
    """Text on one line; `<` and `>` escaped so nothing renders as HTML."""
    return " ".join(str(text).split()).replace("<", "&lt;").replace(">", "&gt;")


# --- HTML -----------------------------------------------------------------------------------

HTML_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{ doc.id }}: {{ doc.title }}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto;
       padding: 0 1rem; line-height: 1.45; color: #222; }
table { border-collapse: collapse; width: 100%; margin: 1rem 0; }
th, td { border: 1px solid #ccc; padding: .3rem .5rem; text-align: left;
         vertical-align: top; }
th { background: #f3f3f3; }
code { background: #f5f5f5; padding: 0 .2rem; }
section.rule { border-top: 1px solid #ddd; margin-top: 1.5rem; }
dt { font-weight: bold; } dd { margin: 0 0 .4rem 1.5rem; }
.sev-critical { color: #a00; } .sev-major { color: #c60; }
</style>
</head>
<body>
<h1>{{ doc.id }}: {{ doc.title }}</h1>
<p>Generated by <code>auditor rulesets docs {{ doc.id }} --format html</code> from the
ruleset and the check registry; do not edit by hand.</p>
<dl>
{%- for k, v in doc.header %}
<dt>{{ k }}</dt><dd>{{ v | ticks }}</dd>
{%- endfor %}
</dl>
<h2>Parameters</h2>
<table>
<tr><th>parameter</th><th>value</th><th>set by</th><th>meaning</th></tr>
{%- for n, v, s, m in doc.parameters %}
<tr><td><code>{{ n }}</code></td><td><code>{{ v }}</code></td><td>{{ s }}</td><td>{{ m | ticks }}</td></tr>
{%- endfor %}
</table>
<h2>Rules ({{ doc.rules | length }})</h2>
<ul>
{%- for r in doc.rules %}
<li><a href="#{{ anchor(r.id) }}">{{ r.id }}</a> clause {{ r.clause }}:
<code>{{ r.code }}</code> ({{ r.severity }})</li>
{%- endfor %}
</ul>
{%- for r in doc.rules %}
<section class="rule" id="{{ anchor(r.id) }}">
<h3>{{ r.id }}</h3>
<dl>
<dt>Clause</dt><dd>{{ r.clause }}</dd>
<dt>Code</dt><dd><code>{{ r.code }}</code>: {{ r.meaning | ticks }}</dd>
<dt>Severity</dt><dd class="sev-{{ r.severity }}">{{ r.severity }}</dd>
{%- if r.summary %}
<dt>Summary</dt><dd>{{ r.summary | ticks }}</dd>
{%- endif %}
<dt>Check</dt><dd><code>{{ r.check }}</code>: {{ r.checks | ticks }}
{%- if r.details %}<br>{{ r.details | ticks }}{% endif %}</dd>
<dt>Parameters</dt><dd>
{%- for n, v, s in r.params %}<code>{{ n }} = {{ v }}</code>
{%- if s == "rule" %} (set on this rule){% endif %}{% if not loop.last %}, {% endif %}
{%- else %}none{% endfor %}</dd>
{%- if r.fires %}
<dt>Example breach</dt><dd>{{ r.fires | ticks }}</dd>
{%- endif %}
{%- if r.quiet %}
<dt>Lawful case</dt><dd>{{ r.quiet | ticks }}</dd>
{%- endif %}
{%- if r.points %}
<dt>The finding points at</dt><dd>{{ r.points | ticks }}</dd>
{%- endif %}
{%- if r.cases %}
<dt>Test cases (in <code>{{ doc.cases_dir }}/</code>)</dt>
<dd><ul>
{%- for c in r.cases %}
<li><code>{{ c.name }}</code>{% if c.about %}: {{ c.about | ticks }}{% endif %}</li>
{%- endfor %}
</ul></dd>
{%- endif %}
</dl>
</section>
{%- endfor %}
<h2>Log rules (always run)</h2>
<p>Evidence quality, not regulatory: every audit runs them whatever the ruleset lists.</p>
<table>
<tr><th>code</th><th>severity</th><th>meaning</th></tr>
{%- for c, s, m in doc.log_rules %}
<tr><td><code>{{ c }}</code></td><td>{{ s }}</td><td>{{ m | ticks }}</td></tr>
{%- endfor %}
</table>
</body>
</html>
"""


def _ticks(text: str) -> markupsafe.Markup:
    """Escape prose, then show its `code spans` as <code>."""
    escaped = str(markupsafe.escape(text))
    return markupsafe.Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", escaped))


def render_html(doc: RulesetDoc) -> str:
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True)
    env.filters["ticks"] = _ticks
    return env.from_string(HTML_TEMPLATE).render(doc=doc, anchor=_anchor)


def render(rs: Ruleset, fmt: str, cases_dir: Path | None = None) -> str:
    """The reference of `rs` in `fmt` (`md` or `html`)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    doc = build(rs, cases_dir if cases_dir is not None else default_cases_dir(rs))
    return render_md(doc) if fmt == "md" else render_html(doc)
