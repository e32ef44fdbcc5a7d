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
"""

from __future__ import annotations

import json
import math

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
    out: list[str] = []
    try:
        text = _SCALARS.get(type(value))
        if text is not None:
            return text(value)
        _write(value, out, "\n", " " * indent)
    except (_NotPlain, RecursionError, ValueError):
        # json.dumps gives the text, or raises its own error (TypeError for
        # an unknown type, ValueError for a cycle or an int too long).
        return json.dumps(value, ensure_ascii=True, indent=indent, separators=(",", ": "))
    return "".join(out)
