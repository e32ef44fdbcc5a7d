"""manifest.json: what a report folder holds, so that it can be checked.

Every file of the folder with its SHA-256 and size, the formats written and
their options (what `auditor verify` needs to render them again), the
provenance and the auditor's version. It is written last, into the folder a
run builds before that folder is swapped into place (`auditor.atomic.
report_folder`), so it always describes the files beside it. It is not a
signature: anyone who can edit the folder can edit it too; `auditor verify`
therefore also re-runs the audit and renders every format again.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from auditor import __version__
from auditor.report.formats import REPORT_FORMATS

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 1
#: Every file name a format writes, and the manifest's: what may be in a
#: report folder (a folder holding anything else is not replaced).
OWN_NAMES = frozenset({MANIFEST_NAME}
                      | {name for f in REPORT_FORMATS.values() for name in f.files})


def file_entry(name: str, data_or_path) -> dict:
    """`{"name", "sha256", "size"}` of a file (its path, or its bytes)."""
    digest = hashlib.sha256()
    size = 0
    if isinstance(data_or_path, bytes | bytearray | memoryview):
        digest.update(data_or_path)
        size = len(data_or_path)
    else:
        with open(data_or_path, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
                size += len(chunk)
    return {"name": name, "sha256": digest.hexdigest(), "size": size}


def manifest(folder: Path, meta: dict, formats, options: dict) -> dict:
    """The manifest of every file now in `folder` (the manifest itself
    excepted)."""
    names = sorted(p.name for p in Path(folder).iterdir()
                   if p.is_file() and p.name != MANIFEST_NAME)
    return {
        "manifest_version": MANIFEST_VERSION,
        "auditor_version": __version__,
        "formats": list(dict.fromkeys(formats)),
        "options": {f: options[f] for f in dict.fromkeys(formats) if options.get(f)},
        "files": [file_entry(n, Path(folder) / n) for n in names],
        "provenance": meta,
    }


def write_manifest(folder: Path, meta: dict, formats, options: dict) -> str:
    """Write `folder`/manifest.json. The folder is a run's own, not yet in
    place (nobody else can see it), so the file is written directly."""
    target = Path(folder) / MANIFEST_NAME
    # The provenance keeps its order: the formats wrote it in that order, and
    # `auditor verify` renders them again from this copy.
    text = json.dumps(manifest(folder, meta, formats, options), indent=2, ensure_ascii=False)
    target.write_text(text + "\n", encoding="utf-8")
    return str(target)
