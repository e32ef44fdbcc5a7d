"""Indented JSON text, byte for byte what `json.dumps(value, indent=N,
separators=(",", ": "))` writes (ensure_ascii), but several times faster;
and compact JSON text (`compact_json`) by an encoder built once.

With `indent`, CPython's json drops its C encoder for a pure-Python one
whose chained generators dominate writing a large report (SARIF). This
writes the same text by one recursive pass appending to a list, with json's
own C string escaper and its int and float spellings. It handles only the
exact built-in types (dict, list, tuple, str, int, float, bool, None); for
anything else (subclasses, other types, cycles, too-deep nesting) the whole
value is left to json.dumps, so its text or its error is json's own.

Many documents of one shape (a SARIF result a finding, a record a line)
are written faster still as a `Template`, its holes filled a column at a
time with texts each made once per distinct value (`compact_texts`).
"""

from __future__ import annotations

import json
import math
import re

from auditor.compat import json_string_quoter
from auditor.errors import ControlSignal

_quote = json_string_quoter(ensure_ascii=True)
_INF = float("inf")
#: `json.dumps(value, ensure_ascii=True, separators=(",", ":"))`, its encoder
#: built once: json.dumps builds one on every call given separators (a
#: third of the time of a finding's line).
compact_json = json.JSONEncoder(ensure_ascii=True, separators=(",", ":")).encode
quote_json = _quote


class _NotPlain(ControlSignal):
    """A value this writer leaves to json.dumps."""


def _float(x: float) -> str:
    """json's spelling of a float (allow_nan: NaN and the infinities too)."""
    if math.isnan(x):
        return "NaN"
    if x == _INF:
        return "Infinity"
    if x == -_INF:
        return "-Infinity"
    return float.__repr__(x)


def _key(k) -> str:
    """A dict key as json.dumps quotes it (non-str keys as json converts them)."""
    t = type(k)
    if t is str:
        return _quote(k)
    if t is float:
        return _quote(_float(k))
    if k is True:
        return '"true"'
    if k is False:
        return '"false"'
    if k is None:
        return '"null"'
    if t is int:
        return _quote(int.__repr__(k))
    raise _NotPlain


#: the text of a scalar, by its exact type (json's spellings)
_SCALARS = {
    str: _quote,
    int: int.__repr__,
    float: _float,
    bool: lambda b: "true" if b else "false",
    type(None): lambda _: "null",
}


def _write(x, out: list, nl: str, step: str, scalar=_SCALARS.get) -> None:
    """Append the text of container `x`, whose opening bracket sits on the
    line indented by `nl` ("\\n" plus the indent of its level)."""
    t = type(x)
    if t is dict:
        if not x:
            out.append("{}")
            return
        inner = nl + step
        sep = "{" + inner
        for k, v in x.items():
            out.append(sep)
            out.append(_quote(k) if type(k) is str else _key(k))
            text = scalar(type(v))
            if text is None:
                out.append(": ")
                _write(v, out, inner, step)
            else:
                out.append(": " + text(v))
            sep = "," + inner
        out.append(nl + "}")
    elif t is list or t is tuple:
        if not x:
            out.append("[]")
            return
        inner = nl + step
        sep = "[" + inner
        for v in x:
            text = scalar(type(v))
            if text is None:
                out.append(sep)
                _write(v, out, inner, step)
            else:
                out.append(sep + text(v))
            sep = "," + inner
        out.append(nl + "]")
    else:
        raise _NotPlain


def dumps_indented(value, indent: int) -> str:
    """`json.dumps(value, ensure_ascii=True, indent=indent, separators=(",", ": "))`."""
    return nested_indented(value, indent, "\n")


def nested_indented(value, indent: int, nl: str) -> str:
    """The text of `value` as it stands nested in an indented document, on
    the line indented by `nl` ("\\n" plus that line's indent): its own
    text with `nl` for each line break (JSON text holds no line break
    inside a string), which is how a template fills in a nested value."""
    out: list[str] = []
    try:
        text = _SCALARS.get(type(value))
        if text is not None:
            return text(value)
        _write(value, out, nl, " " * indent)
    except (_NotPlain, RecursionError, ValueError):
        # json.dumps gives the text, or raises its own error (TypeError for
        # an unknown type, ValueError for a cycle or an int too long).
        return json.dumps(value, ensure_ascii=True, indent=indent,
                          separators=(",", ": ")).replace("\n", nl)
    return "".join(out)


def compact_texts(values: list) -> list[str]:
    """`compact_json` of each of `values`, as it also stands nested in a
    compact or an indented document when it is not a container. A column
    of text (or of whole numbers) and None encodes each distinct value
    once, the look-ups done by dict and map; any other column each
    distinct object once (an evidence object shared by many findings)."""
    kinds = set(map(type, values))
    if kinds <= TEXT_KINDS or kinds <= INT_KINDS:  # (no 1 and True in one dict)
        known = dict.fromkeys(values)
        for value in known:
            known[value] = _SCALARS[type(value)](value)
        return list(map(known.__getitem__, values))
    ids = list(map(id, values))  # (`values` holds each object meanwhile)
    by_id = dict(zip(ids, values))
    for key, value in by_id.items():
        text = _SCALARS.get(type(value))
        by_id[key] = text(value) if text is not None else compact_json(value)
    return list(map(by_id.__getitem__, ids))


#: A column of these kinds alone is text (or whole numbers) and missing cells.
TEXT_KINDS = frozenset((str, type(None)))
INT_KINDS = frozenset((int, type(None)))


class Template:
    """A JSON document's text with holes: `skeleton`, written by
    `nested_indented` at `nl` (or compactly, `indent` None), holds each
    hole as a `hole(name)` string; `fill` then writes the texts of many
    documents of that shape at once, from a column of ready texts per hole
    (in `names`' order). A hole's text goes in as given, so it must be
    what the writer would have written there: a scalar's text anywhere, a
    container's as `nested_indented` writes it at `nl_of[name]` (so a
    container's hole is named once; a scalar's may stand in several places)."""

    _HOLE = re.compile(r'"\\u0000([A-Za-z0-9_]+)\\u0000"')

    def __init__(self, skeleton, indent: int | None, nl: str = "\n"):
        text = compact_json(skeleton) if indent is None else \
            nested_indented(skeleton, indent, nl)
        parts: list[str] = []
        self.names: list[str] = []
        self.nl_of: dict[str, str] = {}
        at = 0
        for found in self._HOLE.finditer(text):
            parts.append(text[at:found.start()])
            self.names.append(found.group(1))
            line = text[text.rfind("\n", 0, found.start()) + 1:found.start()]
            self.nl_of[found.group(1)] = "\n" + " " * (len(line) - len(line.lstrip(" ")))
            at = found.end()
        parts.append(text[at:])
        self._format = "{}".join(p.replace("{", "{{").replace("}", "}}") for p in parts).format

    def fill(self, columns: list[list[str]], count: int) -> list[str]:
        """The texts of `count` documents, the k-th hole of the i-th being
        `columns[k][i]`."""
        if not self.names:
            return [self._format()] * count
        return list(map(self._format, *columns))


def hole(name: str) -> str:
    """The string a `Template`'s skeleton holds where hole `name` is."""
    return f"\x00{name}\x00"
