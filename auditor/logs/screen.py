"""Which files of an input cannot be read as logs at all, every one of them:
what `--keep-going` leaves out (and reports as not audited), and what the
error of a run without it lists. Read only when a run has already met an
unreadable file, so a batch that reads cleanly pays nothing for it."""

from __future__ import annotations

from pathlib import Path

from auditor.errors import LogFileError, shown_path
from auditor.logs.discover import discover
from auditor.logs.load import load_file
from auditor.logs.raw import DEFAULT_READ, ReadOptions, sha256_of


def reason_of(exc: LogFileError) -> str:
    """The reason a file cannot be read, with its line where one is known."""
    return f"line {exc.line}: {exc.problem}" if exc.line else exc.problem


def unreadable_logs(paths: list[str | Path], read: ReadOptions = DEFAULT_READ
                    ) -> dict[str, str]:
    """Every file under `paths` (as discovered, left-out files apart) that
    cannot be read as a log: file -> reason, in discovery order."""
    out: dict[str, str] = {}
    for path in discover(paths):
        try:
            load_file(path, options=read)
        except LogFileError as exc:
            out[str(path)] = reason_of(exc)
    return out


def file_sha256(path: str | Path) -> str | None:
    """The SHA-256 of a file's bytes as they lie on disk (a not-audited file:
    what `auditor verify` compares), or None when it cannot be opened."""
    try:
        return sha256_of(Path(path))
    except OSError:
        return None


def still_unreadable(path: Path, read: ReadOptions = DEFAULT_READ) -> str | None:
    """Why `path` cannot be read as a log now, or None when it can."""
    try:
        load_file(path, options=read)
    except LogFileError as exc:
        return reason_of(exc)
    return None


def not_audited_meta(meta: dict, unreadable: dict[str, str], excluded: dict[str, str],
                     shas: dict[str, str | None] | None = None) -> None:
    """Record in `meta` (the provenance) the files not audited (unreadable:
    file -> reason, with their bytes' SHA-256) and those excluded on purpose
    (file -> glob), only when there are any, so a complete audit's provenance
    is as it was. A file not audited makes the audit incomplete: the
    verdict's exit code is 2 whatever --fail-on says."""
    if unreadable:
        shas = shas or {}
        meta["not_audited"] = [
            {"file": shown_path(path), "reason": why,
             "sha256": shas[path] if path in shas else file_sha256(path)}
            for path, why in unreadable.items()]
        meta["verdict"] = {**meta["verdict"], "exit_code": 2, "incomplete": True,
                           "not_audited": len(unreadable)}
    if excluded:
        meta["excluded"] = [{"file": shown_path(path), "glob": glob}
                            for path, glob in sorted(excluded.items())]
