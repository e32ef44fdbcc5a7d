import logging
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

#: Examples per property in tests/test_fuzz.py unless --fuzz-examples says more.
DEFAULT_FUZZ_EXAMPLES = 25


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-examples", type=int, default=DEFAULT_FUZZ_EXAMPLES, metavar="N",
        help="hypothesis examples per fuzz property (tests/test_fuzz.py); the nightly "
             "run uses 2000",
    )


@pytest.fixture(scope="session")
def fuzz_examples(request) -> int:
    """How many examples each fuzz property draws (--fuzz-examples)."""
    return max(1, request.config.getoption("--fuzz-examples"))


@pytest.fixture(scope="session")
def cluster():
    """A dask.distributed LocalCluster of two workers (threads), shared by
    the engine and progress tests; skipped without dask installed."""
    distributed = pytest.importorskip(
        "distributed", reason="dask.distributed is not installed (pip install '.[dask]')")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=None, silence_logs=logging.ERROR) as c:
        yield c


#: The slowest tests (real processes, big or many logs, a browser, every
#: example, a pre-commit environment), marked `slow`: `pytest -m "not slow"`
#: is the fast subset for the edit loop (docs/contributing.md). By node id
#: prefix (a file, or a test with all its parameters); measured with
#: `pytest --durations=50`. Every prefix names a test file
#: (tests/test_slow_marker.py checks).
SLOW = (
    "test_fuzz.py",
    "test_examples.py",
    "test_installed.py",
    "cli/test_pre_commit.py",
    "cli/test_limits.py",
    "cli/test_faults.py::test_interrupting_a_real_run",
    "cli/test_hostile_paths.py",
    "cli/test_integrity.py::test_a_killed_run_leaves_the_earlier_report_and_the_next_run_cleans_up",
    "cli/test_ci_outputs.py::test_sarif_of_92000_findings_stays_within_githubs_limits",
    "cli/test_ci_outputs.py::test_junit_of_100000_tables_is_small",
    "cli/test_lazy_commands.py",
    "cli/test_program_environment.py",
    "cli/test_imperfect_logs.py::test_batches_read_with_the_options_too",
    "report/test_html_report.py",
    "report/test_report_speed_equivalence.py",
    "game/test_replay_compiled.py",
    "game/test_replay_wagers.py::test_wagers_behave_like_a_dict_per_seat",
    "logs/test_load_text_paths.py::test_trimmed_only_when_trimming_changes_nothing",
    "logs/test_hostile_",
    "run/test_streaming.py",
    "run/test_dask_days.py",
    "generate/test_generate.py::test_generated_log_is_lawful",
    "rules/test_ruleset_keys.py::test_the_refusal_in_a_real_process_under_a_memory_cap",
    "rules/test_ruleset_hostile.py::test_a_named_pipe_does_not_hang",
    "run/test_progress.py",
    "run/test_engines.py::test_dask",
    "run/test_engines.py::test_check_on_a_dask_cluster",
    "logs/test_load_csv_speed.py",
    "cli/test_ci_outputs.py::test_a_closed_pipe_ends_quietly_with_the_verdict",
    "checks/test_log.py::test_a_gap_of_a_trillion_in_a_three_line_file_under_a_memory_cap",
)


def pytest_collection_modifyitems(config, items):
    tests = Path(__file__).parent
    for item in items:
        node = Path(item.nodeid.split("::")[0])
        try:
            name = (Path(config.rootpath) / node).resolve().relative_to(tests).as_posix()
        except ValueError:
            continue
        name += item.nodeid[len(item.nodeid.split("::")[0]):]
        if name.startswith(SLOW) and "slow" not in item.keywords:
            item.add_marker(pytest.mark.slow)
