"""Text escapers: text from a log, a file name or a ruleset, written where a
character could act instead of show (a terminal, a GitHub workflow command,
JSON pasted into HTML, XML). In one place so that each output's rule is
stated once and they all agree on which characters act.

The HTML report is escaped by jinja2's autoescape, not here.
"""

from __future__ import annotations

import unicodedata

#: Unicode categories that act or vanish instead of showing: control, format
#: (bidirectional overrides, zero-width), line and paragraph separators,
#: surrogates.
INVISIBLE_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))


# --- terminal ------------------------------------------------------------------

def terminal_safe(text: str) -> str:
    """Text from a log, a file name or a ruleset as it may reach a terminal:
    control characters (but the line break), C1 controls and invisible or
    bidirectional format characters come out as visible escapes."""
    if text.isprintable() or text.replace("\n", "").isprintable():
        return text  # (checked in C: most text, multi-line blocks too, is printable)
    return "".join(ch if ch.isprintable() or ch == "\n" else _backslash_escape(ch)
                   for ch in text)


def one_line(value) -> str:
    """Any text from a log, a file name or a ruleset as part of ONE line of
    terminal or CI output (None as `-`): `terminal_safe`, and the line break
    too as a visible `\\n`, so no value can start a line of its own (which
    a CI runner would read as a workflow command, `::error ::...`). Every
    printer puts each such value, or each line it composes, through it."""
    text = "-" if value is None else str(value)
    if text.isprintable():
        return text
    return terminal_safe(text).replace("\n", "\\n")


def _backslash_escape(ch: str) -> str:
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # a byte of a file name that is not UTF-8, as the
        return f"\\x{code - 0xDC00:02x}"  # system hands it over (shown as `shown_path` does)
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def unicode_escaped(text: str) -> str:
    """Text quoted inside a message (a waiver's rule): every invisible
    character as a visible `\\uXXXX`, line breaks and tabs included."""
    return "".join(f"\\u{ord(ch):04x}" if unicodedata.category(ch) in INVISIBLE_CATEGORIES
                   else ch for ch in text)


# --- GitHub workflow commands --------------------------------------------------

def escape_data(value) -> str:
    """The message of a workflow command, escaped as GitHub does (`%`, CR,
    LF), and every other invisible character as `%XX` of its UTF-8 bytes,
    so a value can never start a new command or act on a log viewer."""
    text = "" if value is None else str(value)
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return "".join(_percent(ch) if unicodedata.category(ch) in INVISIBLE_CATEGORIES else ch
                   for ch in text)


def escape_property(value) -> str:
    """A workflow command's property value: as `escape_data`, and the
    separators `:` and `,` too."""
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def _percent(ch: str) -> str:
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))


# --- JSON and XML --------------------------------------------------------------

def html_safe_json(text: str) -> str:
    """JSON text with `<`, `>` and `&` as `\\u` escapes, so it stays a string
    even pasted into an HTML page (in JSON they can only occur inside
    strings, so the replacement is exact)."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def xml_text(value) -> str:
    """Text safe for an XML element or attribute (the writer escapes the
    markup characters; this writes the others that could be invalid XML or
    act on a viewer as visible `\\uXXXX` text)."""
    text = "" if value is None else str(value)
    if text.replace("\t", " ").replace("\n", " ").isprintable():
        return text  # (every unsafe character is one Python does not print)
    return "".join(f"\\u{ord(ch):04x}" if _xml_unsafe(ch) else ch for ch in text)


def _xml_unsafe(ch: str) -> bool:
    """Invisible (but tab and line feed), or one of the two non-characters
    XML 1.0 forbids."""
    if ch in "\t\n":
        return False
    return ch in "\ufffe\uffff" or unicodedata.category(ch) in INVISIBLE_CATEGORIES
