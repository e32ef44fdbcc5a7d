"""Find the log files under the paths given: a file by the format its name
announces, a folder searched recursively, in a stable order."""

from __future__ import annotations

from pathlib import Path

from auditor.errors import LogFileError

LOG_SUFFIXES = (".csv", ".jsonl", ".ndjson", ".parquet")


def format_from_name(path: Path) -> str | None:
    """The format a file name announces (`csv`, `jsonl`, `parquet`), or None:
    a test of names, unlike `auditor.generate.log_format` (which raises)."""
    name = path.name.lower()
    name = name.removesuffix(".gz")
    for suffix in LOG_SUFFIXES:
        if name.endswith(suffix):
            return "jsonl" if suffix == ".ndjson" else suffix[1:]
    return None


def discover(paths: list[str | Path]) -> list[Path]:
    """Every log file named or found (recursively) under the given paths, in a
    stable order so two runs read the same files in the same order."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(
                p for p in sorted(path.rglob("*")) if p.is_file() and format_from_name(p)
            )
        elif path.is_file():
            if not format_from_name(path):
                raise LogFileError(
                    path, "not a log file name (expected .csv, .jsonl, .ndjson or "
                    ".parquet, optionally .gz)"
                )
            found.append(path)
        else:
            raise LogFileError(path, "no such file or folder")
    unique: dict[str, Path] = {}
    for p in found:
        unique.setdefault(str(p.resolve()), p)
    return list(unique.values())


def discover_logs(paths: list[str | Path]) -> list[Path]:
    """`discover`, and a LogFileError when nothing under `paths` is a log: an
    audit of nothing must not pass as an audit that found nothing."""
    files = discover(paths)
    if not files:
        raise LogFileError(", ".join(map(str, paths)), "no log files found "
                           "(.csv, .jsonl, .ndjson, .parquet, optionally .gz)")
    return files
