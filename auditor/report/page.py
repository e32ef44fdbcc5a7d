"""The HTML report's jinja2 template: the one environment it is compiled in,
and that compilation shipped with the package.

Compiling the template costs about 80 ms, in every process that writes a
page: more than the audit of a small log. So `setup.py` compiles it when the
package is built (`write_compiled`) and writes jinja's bytecode beside it;
`environment()` reads that file instead of compiling. Jinja rejects the file
itself when its template has changed since (a checksum of the source) or when
the Python or jinja bytecode version differs; the file's name also carries
the jinja2 release and the Python it was made by, and any other is ignored.
Nothing is written at run time (an installed package may be read-only): with
no file, as in a checkout or an editable install, the template is compiled
as before, with the same result byte for byte.

Imports only jinja2 and the auditor's escaper, so the build can run it
without the auditor's other dependencies."""

from __future__ import annotations

import sys
from pathlib import Path

import jinja2
from jinja2 import BytecodeCache, Environment, FileSystemLoader, StrictUndefined
from jinja2.bccache import Bucket
from markupsafe import Markup

from auditor.escape import terminal_safe

TEMPLATES = Path(__file__).resolve().parent / "templates"
PAGE = "report.html"
#: the template of a listed finding's details (imported by the page; also
#: rendered on its own where the findings' tables are audited)
FINDING = "finding.html"
#: every template, each compiled when the package is built
TEMPLATE_NAMES = (PAGE, FINDING)


def visible(value):
    """Every value the page prints (jinja's `finalize`, so none is missed):
    control, invisible and bidirectional characters from a log shown as
    visible escapes (`T\\u202e20`, never `T02`), line breaks kept for the
    multi-line blocks; the page's own markup (style, script) as it is."""
    if isinstance(value, str) and not isinstance(value, Markup) and not value.isprintable():
        return terminal_safe(value)
    return value


def environment(folder: Path = TEMPLATES) -> Environment:
    """The environment the page's templates in `folder` are compiled in, at
    build time and at run time alike (the bytecode holds its settings)."""
    env = Environment(loader=FileSystemLoader(str(folder)), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                      keep_trailing_newline=True, finalize=visible,
                      bytecode_cache=ShippedBytecode(folder))
    env.filters["visible"] = visible
    return env


class ShippedBytecode(BytecodeCache):
    """Jinja's bytecode of a template, read from the file the build wrote
    beside it (`compiled_path`); never written here."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return name  # (the file is found by the template's name, wherever installed)

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            data = compiled_path(self.folder, bucket.key).read_bytes()
        except OSError:  # not built with the package: jinja compiles it
            return
        try:
            bucket.bytecode_from_string(data)
        except Exception:  # noqa: BLE001 - damaged past the header jinja checks: compile it
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        pass


def compiled_path(folder: Path, name: str = PAGE) -> Path:
    """Where the bytecode of template `name` is kept: named by the Python
    and the jinja2 release that made it, the only ones that read it."""
    return Path(folder) / f"{name}.{sys.implementation.cache_tag}.jinja2-{jinja2.__version__}.bc"


def write_compiled(folder: Path, name: str = PAGE) -> Path:
    """Compile template `name` of `folder` and write its bytecode beside it
    (`setup.py`, into the package being built)."""
    env = environment(folder)
    source, filename, _ = env.loader.get_source(env, name)
    bucket = Bucket(env, name, env.bytecode_cache.get_source_checksum(source))
    bucket.code = env.compile(source, name, filename)
    target = compiled_path(folder, name)
    target.write_bytes(bucket.bytecode_to_string())
    return target


def write_all_compiled(folder: Path) -> list[Path]:
    """`write_compiled` for every template of the page (`TEMPLATE_NAMES`)."""
    return [write_compiled(folder, name) for name in TEMPLATE_NAMES]
