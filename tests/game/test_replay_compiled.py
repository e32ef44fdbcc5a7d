"""The compiled replay (Cython, built from `auditor/game/replay.py` and the
modules it is cut into, `COMPILED_MODULES`, each with the types of its
`.pxd`) derives exactly the state the Python sources do.

The sources are loaded as separate modules (every compiled module, and
those that import one, from its `.py`) and both replay the same logs:
generated nights with every plantable violation, both offer roles, under
both bar numbers (12 and 2), and the sample logs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import auditor.game.replay as replay_module
from auditor.generate import INJECTABLE, generate
from auditor.generate.write import write_log
from auditor.logs.load import load_logs

GAME = Path(replay_module.__file__).parent
ROOT = Path(__file__).resolve().parents[2]
#: Loaded from source, in this order: the compiled modules, and the plain
#: ones that import a compiled one (`inputs`, `output`), the replay last.
SOURCE_MODULES = (*replay_module.COMPILED_MODULES[:-1], "auditor.game.inputs",
                  "auditor.game.output", "auditor.game.replay")

pytestmark = pytest.mark.skipif(not replay_module.COMPILED,
                                reason="the replay is not compiled here (no C compiler at install)")


def _source_module():
    """The replay as its sources run: each of `SOURCE_MODULES` executed
    afresh from its `.py` under its own name (so that the others import it,
    not the compiled one), then the compiled modules put back."""
    saved = {name: sys.modules.get(name) for name in SOURCE_MODULES}
    try:
        for name in SOURCE_MODULES:
            path = GAME / (name.rsplit(".", 1)[1] + ".py")
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
    finally:
        source = sys.modules["auditor.game.replay"]
        for name, module in saved.items():
            sys.modules[name] = module
    assert not source.COMPILED and source.Inputs.__module__ == "auditor.game.inputs"
    return source


def test_every_module_of_the_replay_is_compiled():
    """`COMPILED` holds only when every module the replay is cut into is a
    C extension (built together, setup.py): a module left as Python would
    run the audit far slower, unnoticed."""
    for name in replay_module.COMPILED_MODULES:
        assert not importlib.import_module(name).__file__.endswith(".py"), name


def test_compiled_module_is_built_from_the_current_source():
    """A compiled module older than its .py or .pxd is stale: it runs other
    rules than the source says."""
    if GAME.resolve() != (ROOT / "auditor" / "game").resolve():
        # (also a package installed into a venv inside the checkout, `.venv/`,
        # as the README's set-up command makes: its files are copied after
        # the build, so their times say nothing of staleness)
        pytest.skip("an installed package: tests/test_installed.py compares its sources "
                    "with the checkout's, byte for byte")
    for name in replay_module.COMPILED_MODULES:
        built = Path(importlib.import_module(name).__file__).stat().st_mtime
        source = GAME / (name.rsplit(".", 1)[1] + ".py")
        for path in (source, source.with_suffix(".pxd")):
            assert path.stat().st_mtime <= built, \
                f"{path.name} changed after it was compiled: rebuild with " \
                "`pip install '.[test]'` (or `python setup.py build_ext --inplace`)"


def _assert_same_state(a, b):
    assert a.n == b.n
    assert set(a.dense) == set(b.dense) and set(a.sparse) == set(b.sparse)
    for name in a.dense:
        assert a.dense[name].dtype == b.dense[name].dtype, name
        np.testing.assert_array_equal(a.dense[name], b.dense[name], err_msg=name)
    for name in a.sparse:
        rows_a, values_a = a.written(name)
        rows_b, values_b = b.written(name)
        np.testing.assert_array_equal(rows_a, rows_b, err_msg=name)
        assert values_a == values_b, name
    for name in ("rows", "die", "where", "set_id"):
        np.testing.assert_array_equal(getattr(a.dice_moves, name), getattr(b.dice_moves, name),
                                      err_msg=name)
    assert a.dice_moves.serials == b.dice_moves.serials


@pytest.mark.parametrize("seed, offer_role", [(3, "stickperson"), (4, "dealer")])
def test_same_state_as_the_source_on_planted_nights(tmp_path, seed, offer_role):
    log = tmp_path / "night.parquet"
    write_log(generate(tables=2, rolls=150, seed=seed, inject=sorted(INJECTABLE),
                       offer_role=offer_role).table, log)
    events = load_logs([log]).events
    source = _source_module()
    for bar in (12, 2):
        _assert_same_state(source.replay(events, bar=bar), replay_module.replay(events, bar=bar))


def test_same_state_as_the_source_on_the_sample_logs():
    events = load_logs([ROOT / "sample_logs"]).events
    source = _source_module()
    _assert_same_state(source.replay(events), replay_module.replay(events))


def test_the_source_runs_without_cython_installed(monkeypatch):
    """Uncompiled and without Cython, the source's Cython directives are the
    stand-ins of `auditor.game.cython_shim`, and the state is the same."""
    monkeypatch.setitem(sys.modules, "cython", None)  # (import cython: ImportError)
    source = _source_module()
    assert source.cython.__name__ == "auditor.game.cython_shim"
    assert sys.modules["auditor.game.replay"] is replay_module  # (the compiled one, put back)
    events = load_logs([ROOT / "sample_logs" / "nz-table-games"]).events
    _assert_same_state(source.replay(events), replay_module.replay(events))


def test_replaying_again_and_again_holds_no_more_memory(tmp_path):
    """A reference the compiled code forgets to release would pile up once
    per table audited: across the batches of a year of logs that is memory
    without bound. Replays under tracemalloc must come back to where they
    started. Only what this test's own calls allocated is counted (threads
    of other tests, such as a dask cluster's, allocate meanwhile)."""
    import gc
    import tracemalloc

    log = tmp_path / "night.parquet"
    write_log(generate(tables=2, rolls=300, seed=5, inject=sorted(INJECTABLE)).table, log)
    events = load_logs([log]).events
    replay_module.replay(events)  # first use: caches and lazily built tables
    gc.collect()
    ours = [tracemalloc.Filter(True, __file__, all_frames=True)]
    tracemalloc.start(64)
    try:
        before = tracemalloc.take_snapshot().filter_traces(ours)
        for _ in range(3):
            replay_module.replay(events)
        gc.collect()
        after = tracemalloc.take_snapshot().filter_traces(ours)
    finally:
        tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert grown < 64 * 1024, f"{grown} bytes still held after three replays"


def test_an_uncompiled_replay_is_said_on_the_terminal(tmp_path, monkeypatch):
    """Where the replay runs as plain Python, `auditor check` says so on
    standard error (once), and the audit is the same. (The uncompiled replay
    itself runs in test_installing_without_a_compiler_or_network_works.)"""
    import warnings

    from builder import run_cli

    from auditor.audit import core

    sample = ROOT / "sample_logs" / "nz-table-games"
    compiled = run_cli("check", sample, "--ruleset", "nz-table-games", "--out", tmp_path / "a")
    assert "uncompiled" not in compiled.stderr
    monkeypatch.setattr(core, "REPLAY_COMPILED", False)  # (what an uncompiled install says)
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        plain = run_cli("check", sample, "--ruleset", "nz-table-games", "--out", tmp_path / "b")
    assert plain.exit_code == compiled.exit_code == 1
    assert plain.stderr.count("warning: the replay runs uncompiled") == 1, plain.stderr
    assert plain.stdout.replace(str(tmp_path / "b"), str(tmp_path / "a")) == compiled.stdout
    assert core.UNCOMPILED in plain.stderr


def test_installing_without_a_compiler_or_network_works(tmp_path):
    """`pip install --no-index --no-build-isolation .` with no C compiler (as
    docs/performance.md's *Installing offline* says): the install goes on without
    compiling, the replay runs as Python, and the sample night audits to the
    same findings, with the warning."""
    import os
    import shutil
    import subprocess
    import sys

    import pyarrow.parquet as pq

    # the sources as a clean clone has them (pip builds in the tree: no
    # build/ folder nor compiled module of an earlier install may come along)
    source = tmp_path / "source"
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, source / name if source.exists() else _mkdir(source) / name)
    for folder in ("auditor", "rulesets"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns(
            "__pycache__", "*.so", "*.c", "cases"))
    target = tmp_path / "site"
    env = {**os.environ, "CC": "false", "CXX": "false", "PIP_NO_INDEX": "1"}
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index",
                    "--no-build-isolation", "--no-deps", "--target", str(target), str(source)],
                   check=True, env=env, cwd=tmp_path, capture_output=True)
    assert not list((target / "auditor" / "game").glob("*.so"))
    sample = ROOT / "sample_logs" / "nz-table-games"
    run = subprocess.run([sys.executable, "-P", "-m", "auditor", "check", str(sample),
                          "--ruleset", "nz-table-games", "--out", str(tmp_path / "out")],
                         check=False, env={**os.environ, "PYTHONPATH": str(target)}, cwd=tmp_path,
                         capture_output=True, text=True)
    assert run.returncode == 1, run.stderr
    assert run.stderr.count("warning: the replay runs uncompiled") == 1, run.stderr
    from builder import run_cli
    run_cli("check", sample, "--ruleset", "nz-table-games", "--out", tmp_path / "compiled")
    plain = pq.read_table(tmp_path / "out" / "findings.parquet")
    assert plain.equals(pq.read_table(tmp_path / "compiled" / "findings.parquet"))


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path
