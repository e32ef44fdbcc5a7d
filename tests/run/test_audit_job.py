"""One `AuditJob` carries a run's options from the command to the workers,
its input files discovered once: a folder is searched once per run,
whatever engine, however many jobs, a ruleset or a family of versions."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest
from builder import lawful_table
from builder import run_cli as run

from auditor.errors import LogFileError
from auditor.logs import discover
from auditor.rules.ruleset import load_ruleset
from auditor.run import AuditJob, run_audit


@pytest.fixture()
def logs_dir(tmp_path) -> Path:
    d = tmp_path / "logs"
    for k, table in enumerate(("T01", "T02", "T03")):
        b = lawful_table()
        if k == 1:
            b.roll(2, 3, 4)
            b.call(8)  # the dice showed 7: a finding
        for row in b.rows:
            row["table_id"] = table
        (d / table).mkdir(parents=True)
        b.write_csv(d / table / f"{table}.csv")
    return d


def _folder_searches(monkeypatch) -> list:
    searched: list = []
    real = discover.discover

    def counting(paths):
        searched.extend(str(p) for p in paths if Path(p).is_dir())
        return real(paths)

    monkeypatch.setattr(discover, "discover", counting)
    return searched


def test_a_job_holds_its_files_discovered_and_travels_whole(logs_dir):
    job = AuditJob.of([logs_dir], load_ruleset("nz-table-games"), jobs=2,
                      site_from_path=True)
    assert [f.name for f in job.files] == ["T01.csv", "T02.csv", "T03.csv"]
    assert job.sites == {str(f): f.parent.name for f in job.files}
    assert pickle.loads(pickle.dumps(job)).files == job.files  # to spawned workers
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.jobs = 3


def test_a_job_of_nothing_is_refused_before_any_engine(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(LogFileError, match="no log files found"):
        AuditJob.of([tmp_path / "empty"], load_ruleset("nz-table-games"))


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_engines_search_the_folder_once(logs_dir, monkeypatch, jobs):
    searched = _folder_searches(monkeypatch)
    result = run_audit(AuditJob.of([logs_dir], load_ruleset("nz-table-games"), jobs=jobs))
    assert searched == [str(logs_dir)]
    assert "call.wrong_total" in set(result.findings["code"])
    assert set(result.findings["table_id"]) == {"T02"}


@pytest.mark.parametrize("args", [(), ("--site-from-path",), ("--jobs", "2")])
def test_check_searches_the_folder_once(logs_dir, tmp_path, monkeypatch, args):
    searched = _folder_searches(monkeypatch)
    res = run("check", logs_dir, "-r", "nz-table-games", "--no-config", "--out",
              tmp_path / "out", *args)
    assert res.exit_code == 1, res.output
    assert searched == [str(logs_dir)]
