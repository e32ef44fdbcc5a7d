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
from auditor.report.formats import parse_format

CONFIG_FILE = "auditor.toml"
PYPROJECT = "pyproject.toml"
#: key -> (what it must be, the `auditor check` option it sets): the one
#: map between the file and the command line
KEYS = {"ruleset": ("text", "ruleset_ref"), "formats": ("list", "formats"),
        "fail-on": ("text", "fail_on"), "out": ("path", "out"),
        "waivers": ("path", "waivers"), "baseline": ("path", "baseline")}


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
        kind = KEYS[key][0]
        if kind == "list":
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{source}: {key} must be a format name or a list of them")
            for spec in value:
                try:
                    parse_format(spec)
                except ValueError as exc:
                    raise ConfigError(f"{source}: {key}: {exc}") from None
        elif not isinstance(value, str):
            raise ConfigError(f"{source}: {key} must be a string")
        if key == "fail-on" and value not in FAIL_ON_CHOICES:
            raise ConfigError(f"{source}: fail-on must be one of {', '.join(FAIL_ON_CHOICES)}")
        if kind == "path" or key == "ruleset" and (path.parent / value).is_file():
            value = str(path.parent / value)
        values[key] = value
    return ProjectConfig(path, source, values)


def merged(options: dict, config: ProjectConfig | None, on_command_line) -> dict:
    """`auditor check`'s options with the configuration's settings in
    (the one place they are merged): a setting the file holds replaces the
    option's default, never an option given on the command line
    (`on_command_line(option)`). The formats become a tuple."""
    options = dict(options)
    if config is not None:
        for key, (_, option) in KEYS.items():
            if key in config.values and not on_command_line(option):
                value = config.values[key]
                options[option] = tuple(value) if option == "formats" else value
    return options


def project_config(config_file: str | Path | None, no_config: bool) -> ProjectConfig | None:
    """The configuration a run uses: none with `--no-config`, the file
    `--config` names, else the one found upward from here (or none)."""
    if no_config:
        return None
    if config_file:
        return load_config(Path(config_file))
    path = find_config()
    return load_config(path) if path else None


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
