"""The project configuration: `auditor check`'s defaults for one project,
so a CI job or a pre-commit hook runs a bare `auditor check PATH...`.

Found upward from the current folder: in each folder, `auditor.toml` (its
top level) wins over `pyproject.toml`'s `[tool.auditor]` table; a
pyproject.toml without that table is passed over. The first folder holding
either is used; nothing is merged across folders. Keys (each optional):

    ruleset = "nz-table-games"      # id, family name or .toml file
    formats = ["parquet", "sarif"]  # as --format, FMT:- included
    fail-on = "major"               # a severity, or "none"
    out = "reports"
    waivers = "waivers.toml"
    baseline = "baseline.json"
    keep_going = true               # as --keep-going
    exclude = ["*roster*", "casino-c/old/*"]   # as --exclude, each a glob
    [columns]                       # an exporter's column names -> the spec's
    flag = "flags"

A path (out, waivers, baseline, and a ruleset naming an existing file) is
relative to the configuration file's folder. A command-line option wins
over the file.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from auditor.codes import FAIL_ON_CHOICES
from auditor.errors import ConfigError

CONFIG_FILE = "auditor.toml"
PYPROJECT = "pyproject.toml"
#: key -> what it must be
KEYS = {"ruleset": "text", "formats": "list", "fail-on": "text", "out": "path",
        "waivers": "path", "baseline": "path", "keep_going": "bool", "exclude": "globs",
        "columns": "names"}


@dataclass(frozen=True)
class ProjectConfig:
    """The configuration read, with paths resolved; `source` names the file
    (and table) it came from."""

    path: Path
    source: str
    values: dict


def find_config(start: Path | None = None) -> Path | None:
    """The configuration file nearest `start` (default: the current folder)
    going upward, or None."""
    folder = (start or Path.cwd()).resolve()
    for place in (folder, *folder.parents):
        candidate = place / CONFIG_FILE
        if candidate.is_file():
            return candidate
        pyproject = place / PYPROJECT
        if pyproject.is_file() and _has_auditor_table(pyproject):
            return pyproject
    return None


def load_config(path: Path) -> ProjectConfig:
    """Read and check a configuration file (auditor.toml, or a pyproject.toml's
    [tool.auditor])."""
    path = Path(path)
    data = _read(path)
    if path.name == PYPROJECT:
        data = data.get("tool", {}).get("auditor", {})
        source = f"{path} [tool.auditor]"
    else:
        source = str(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: must be a table of settings")
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ConfigError(f"{source}: unknown key {unknown[0]!r} (known: "
                          f"{', '.join(KEYS)})")
    values: dict = {}
    for key, value in data.items():
        kind = KEYS[key]
        if kind == "bool":
            if not isinstance(value, bool):
                raise ConfigError(f"{source}: {key} must be true or false")
        elif kind == "globs":
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{source}: {key} must be a glob or a list of them")
            value = tuple(value)
        elif kind == "names":
            if not isinstance(value, dict) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                raise ConfigError(f"{source}: {key} must be a table of column names "
                                  "(name in the file = \"name in event-log-v1\")")
        elif kind == "list":
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{source}: {key} must be a format name or a list of them")
        elif not isinstance(value, str):
            raise ConfigError(f"{source}: {key} must be a string")
        if key == "fail-on" and value not in FAIL_ON_CHOICES:
            raise ConfigError(f"{source}: fail-on must be one of {', '.join(FAIL_ON_CHOICES)}")
        if kind == "path" or key == "ruleset" and (path.parent / value).is_file():
            value = str(path.parent / value)
        values[key] = value
    return ProjectConfig(path, source, values)


def _has_auditor_table(pyproject: Path) -> bool:
    """Whether a pyproject.toml has [tool.auditor]; one that cannot be read
    is another tool's problem, passed over."""
    try:
        tool = _read(pyproject).get("tool", {})
    except ConfigError:
        return False
    return isinstance(tool, dict) and "auditor" in tool


def _read(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
