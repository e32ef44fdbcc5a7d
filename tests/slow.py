"""Which tests are marked `slow` (applied in tests/conftest.py)."""

#: The slowest tests (real processes, big or many logs, a browser, every
#: example, a pre-commit environment), marked `slow`: `pytest -m "not slow"`
#: is the fast subset for the edit loop (docs/contributing.md). By node id
#: prefix (a file, or a test with all its parameters); measured with
#: `pytest --durations=50`. Every prefix names a test file
#: (tests/test_slow_marker.py checks).
SLOW = (
    "test_fuzz.py",
    "test_examples.py",
    "test_slow_marker.py::test_every_slow_test_named_is_collected_and_marked",
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
    "report/test_html_overview.py::test_the_overview_links_filter_the_findings",
    "report/test_html_overview.py::test_5000_tables_and_100000_findings_give_a_short_overview",
    "cli/test_worker_lifetime.py",
    "cli/test_mid_session.py::test_the_same_under_every_engine",
    "cli/test_pre_commit_hook.py",
    "report/test_report_speed_equivalence.py",
    "game/test_replay_compiled.py",
    "game/test_replay_wagers.py::test_wagers_behave_like_a_dict_per_seat",
    "logs/test_load_text_paths.py::test_trimmed_only_when_trimming_changes_nothing",
    "logs/test_hostile_",
    "run/test_streaming.py",
    "run/test_dask_days.py",
    "run/test_dask_cluster.py",
    "run/test_dask_local.py",
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
