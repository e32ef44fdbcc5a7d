"""The suite tests the package as installed from this checkout: imported from
where pip put it, not from the checkout's `auditor/` folder shadowing it
(the README's test command runs Python with `-P`), and installed from these
very sources, not from older ones (reinstall after an edit, or install with
`pip install -e`)."""

from __future__ import annotations

import importlib.metadata
import json
import shutil
import subprocess
import sysconfig
from pathlib import Path
from urllib.parse import unquote, urlparse

import auditor
from auditor.__main__ import run

CHECKOUT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").exists())
SOURCES = ("*.py", "*.pxd", "templates/*")


def _install() -> tuple[importlib.metadata.Distribution, dict]:
    dist = importlib.metadata.distribution("craps-auditor")
    return dist, json.loads(dist.read_text("direct_url.json") or "{}")


def _editable_from(direct: dict) -> Path | None:
    if not direct.get("dir_info", {}).get("editable"):
        return None
    return Path(unquote(urlparse(direct["url"]).path)).resolve()


def test_the_package_under_test_is_the_installed_one():
    dist, direct = _install()
    imported = Path(auditor.__file__).resolve().parent
    editable = _editable_from(direct)
    installed = editable / "auditor" if editable else Path(dist.locate_file("auditor")).resolve()
    assert imported == installed, (
        f"the tests import {imported}, but craps-auditor is installed at {installed}: "
        "run them as the README says (python -P -m pytest) after pip install '.[test]'")


def test_the_installed_package_is_built_from_this_checkout():
    """Every source file of the checkout is the installed one, byte for
    byte (an editable install is the checkout itself)."""
    dist, direct = _install()
    if _editable_from(direct) == CHECKOUT:
        return
    installed = Path(dist.locate_file("auditor")).resolve()
    stale = [str(src.relative_to(CHECKOUT))
             for pattern in SOURCES for src in sorted((CHECKOUT / "auditor").rglob(pattern))
             if "__pycache__" not in src.parts
             and _read(installed / src.relative_to(CHECKOUT / "auditor")) != src.read_bytes()]
    stale += [f"rulesets/{src.name}" for src in sorted((CHECKOUT / "rulesets").glob("*.toml"))
              if _read(installed / "_shipped_rulesets" / src.name) != src.read_bytes()]
    assert not stale, ("installed from other sources than this checkout's; reinstall "
                       f"(pip install '.[test]'): {', '.join(stale[:10])}")


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.is_file() else None


def test_the_installed_package_carries_its_page_compiled():
    """A regular install compiles the HTML report's template at build time
    (`setup.py`, `auditor.report.page`) for the Python and jinja2 it runs
    with; an editable install compiles it at run time instead."""
    from auditor.report.page import TEMPLATE_NAMES, TEMPLATES, compiled_path

    _, direct = _install()
    if _editable_from(direct) is not None:
        return
    for name in TEMPLATE_NAMES:
        assert compiled_path(TEMPLATES, name).is_file(), (
            f"{compiled_path(TEMPLATES, name).name} is missing from the installed package: "
            "reinstall (pip install '.[test]'), with jinja2 where the package is built")


def test_the_installed_command_is_the_program():
    """The `auditor` script runs `auditor.__main__:run`, as `python -m
    auditor` does (what the program sets up for itself included), and answers."""
    script = next(e for e in importlib.metadata.entry_points(group="console_scripts")
                  if e.name == "auditor" and e.dist and e.dist.name == "craps-auditor")
    assert script.load() is run
    path = shutil.which("auditor", path=sysconfig.get_path("scripts"))
    assert path, "the auditor script is not installed beside this Python"
    done = subprocess.run([path, "--version"], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, f"auditor, version {auditor.__version__}")
