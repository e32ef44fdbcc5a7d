"""`Shared.of`: the checks and the reports' collectors share one set of
look-ups per replay state, and keeping it on the state makes no reference
cycle (a state freed only by a collection of the whole heap costs a
quarter of a second at 10M events)."""

from __future__ import annotations

import gc
import weakref

from builder import lawful_table

from auditor.audit.core import replay_state, run_checks
from auditor.checks.common import Shared
from auditor.checks.context import CheckContext
from auditor.logs.load import load_logs
from auditor.report.dice_tally import tally
from auditor.rules.ruleset import load_ruleset


def _loaded(tmp_path):
    b = lawful_table()
    b.roll(2, 3, 4)
    b.roll(2, 2, 2)
    return load_logs([b.write_csv(tmp_path / "night.csv")])


def test_one_shared_per_state_and_events(tmp_path):
    logs, other = _loaded(tmp_path), _loaded(tmp_path)
    ruleset = load_ruleset("nz-table-games")
    state = replay_state(logs.events, ruleset)
    ctx = CheckContext(logs.events, state, logs.quarantine)
    run_checks(ctx, ruleset)
    assert Shared.of(logs.events, state) is ctx.shared
    assert Shared.of(logs.events, state).state is state
    assert Shared.of(other.events, state) is not ctx.shared  # other events: its own
    assert Shared.of(logs.events, None) is not Shared.of(logs.events, None)


def test_a_state_is_freed_as_soon_as_it_is_dropped(tmp_path):
    logs = _loaded(tmp_path)
    ruleset = load_ruleset("nz-table-games")
    gc.disable()
    try:
        state = replay_state(logs.events, ruleset)
        ctx = CheckContext(logs.events, state, logs.quarantine)
        run_checks(ctx, ruleset)
        tally(logs.events, state)
        gone = weakref.ref(state)
        del state, ctx
        assert gone() is None  # freed by its count of references, no collection needed
    finally:
        gc.enable()
