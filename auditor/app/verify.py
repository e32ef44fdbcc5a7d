"""Does a report still stand? `auditor verify DIR`, in four parts:

1. the folder: every file its manifest.json lists, with that size and
   SHA-256, and no other file; the provenance in the manifest and in each
   Parquet file the same;
2. the audit: every input (its SHA-256 and row counts) and the ruleset (by
   its content hash) re-read, the audit re-run, the findings and the
   quarantine compared row for row;
3. the provenance: its verdict, counts and statuses those the re-run audit
   and the triage give;
4. the files: every format the manifest names rendered again, byte for byte.

Any difference is a problem (the report does not stand); a folder holding no
report at all is a ReportError. Input paths are those recorded (relative ones
taken from the current folder) or, with `inputs_root`, found under it by
their place below the inputs' common folder. A shipped ruleset is found by
its id wherever the auditor is installed now, and judged by its content hash.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import pyarrow as pa

from auditor import __version__
from auditor.atomic import commit_together
from auditor.audit.responsible import regulated
from auditor.codes import FAIL_ON_CHOICES
from auditor.errors import AuditorError, LogFileError, ReportError, RulesetError, unshown_path
from auditor.findings import read_stored, read_stored_schema, stored_schema
from auditor.logs.discover import discover_logs
from auditor.logs.load import load_logs
from auditor.logs.raw import (
    DEFAULT_INFLATE_LIMITS,
    InflateLimits,
    ReadOptions,
    inflate_limits,
    sha256_of,
)
from auditor.logs.screen import not_audited_meta, still_unreadable
from auditor.report.formats import REPORT_FORMATS, collector_for, write_and_render
from auditor.report.manifest import MANIFEST_NAME, MANIFEST_VERSION, OWN_NAMES, file_entry
from auditor.report.parquet import quarantine_table
from auditor.report.provenance import provenance
from auditor.rules import ruleset as ruleset_mod
from auditor.rules.ruleset import Ruleset, load_ruleset
from auditor.run import AuditJob, run_audit
from auditor.triage.baseline import load_accepted, verdict

#: Differences listed one by one before the rest are counted.
MAX_LISTED = 10
#: Provenance keys that name this machine's installation, not the audit:
#: not compared (the ruleset's content hash is).
INSTALL_KEYS = ("files",)


@dataclass
class Verdict:
    """What no longer matches (`problems`; none: the report stands) and what
    was checked."""

    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    inputs: int = 0
    findings: int = 0
    quarantined: int = 0
    ruleset_id: str = ""
    files: int = 0

    @property
    def stands(self) -> bool:
        return not self.problems


def verify_report(folder: Path, inputs_root: Path | None = None,
                  inflate: InflateLimits = DEFAULT_INFLATE_LIMITS, jobs: int = 1,
                  progress=None, scratch: str | None = None) -> Verdict:
    """Re-check the report in `folder` (ReportError when there is none),
    reading .gz inputs under `inflate` (as `check` was given), the audit
    re-run in `jobs` processes and told to `progress` as it goes (an
    `auditor.run.progress.NoProgress`), its working files in `scratch`
    (`--scratch`; None: TMPDIR)."""
    folder = Path(folder)
    files = _snapshot(folder)
    verdict_ = Verdict()
    manifest = _read_manifest(folder, files, verdict_)
    meta, findings, parquet_problem = _read_parquet(folder, files, "findings.parquet")
    if manifest is None and meta is None:
        if "findings.parquet" in files or MANIFEST_NAME in files:
            raise ReportError(parquet_problem)
        raise ReportError(f"{folder}: no report here (no manifest.json, no findings.parquet; "
                          f"`auditor check` writes them)")
    if manifest is not None:
        _check_files(manifest, files, verdict_)
        _check_own_fields(manifest, verdict_)
        _check_provenances(folder, manifest, files, verdict_,
                           {"findings.parquet": (meta, parquet_problem)})
        recorded = manifest["provenance"]
    else:
        verdict_.problems.append(f"{folder / MANIFEST_NAME}: missing (every report folder "
                                 f"has one)")
        recorded = meta
    if not isinstance(recorded.get("inputs"), list) or \
            not isinstance(recorded.get("ruleset"), dict):
        verdict_.problems.append("the provenance names no inputs or no ruleset")
        return verdict_
    unreadable = _unreadable_provenance(recorded)
    if unreadable:
        verdict_.problems += unreadable
        verdict_.problems.append("the audit was not re-run from that provenance")
        return verdict_
    verdict_.inputs = len(recorded["inputs"])
    verdict_.files = len(manifest["files"]) if manifest else 0
    if findings is not None:
        verdict_.findings = findings.num_rows
    with inflate_limits(inflate):
        _rerun(folder, files, recorded, manifest, findings, inputs_root, verdict_, jobs,
               progress, scratch)
    version = recorded.get("auditor_version")
    if version and version != __version__:
        verdict_.notes.append(f"the report was made by auditor {version}; this is "
                              f"{__version__} (its files may render differently)")
    return verdict_


def check_folder(folder: Path) -> tuple[dict | None, dict[str, bytes | None], list[str]]:
    """Part 1 alone (what `auditor trend` checks of each report): the
    manifest, every file it lists with its size and SHA-256, no report file
    unlisted, the findings', quarantine's and roll-ups' provenance the
    manifest's. (manifest or None, the folder's files, problems)."""
    folder = Path(folder)
    files = _snapshot(folder)
    verdict_ = Verdict()
    manifest = _read_manifest(folder, files, verdict_)
    if manifest is None and not verdict_.problems:
        verdict_.problems.append(f"{MANIFEST_NAME}: missing (every report folder has one)")
    if manifest is not None:
        _check_files(manifest, files, verdict_)
        _check_provenances(folder, manifest, files, verdict_)
    return manifest, files, verdict_.problems


#: The report's Parquet files written with the manifest's provenance as it
#: is (the dice files add their test's parameters to it).
SAME_PROVENANCE = ("findings.parquet", "quarantine.parquet", "rollups.parquet")


def _check_provenances(folder: Path, manifest: dict, files: dict, verdict_: Verdict,
                       known: dict | None = None) -> None:
    """Each file of SAME_PROVENANCE in the folder carries the manifest's
    provenance (a missing file is `_check_files`' to say). `known`: name ->
    (provenance, problem) of a file already read whole (`_read_parquet`);
    any other is read from its footer alone."""
    recorded = manifest["provenance"]
    for name in SAME_PROVENANCE:
        if files.get(name) is None:
            continue
        own, problem = (known or {}).get(name) or _footer_provenance(folder, files, name)
        if problem:
            verdict_.problems.append(problem)
        elif own != recorded:
            where = _differing(recorded, own) or sorted(
                k for k in set(recorded) | set(own) if recorded.get(k) != own.get(k))
            verdict_.problems.append(f"{name}: its provenance differs from the manifest's (in "
                                     f"{', '.join(where)})")


def _rerun(folder, files, recorded, manifest, findings, inputs_root, verdict_,
           jobs: int = 1, progress=None, scratch: str | None = None) -> None:
    """Parts 2 to 4: the audit re-run, compared with the report."""
    located = _check_inputs(recorded["inputs"], verdict_, inputs_root)
    ruleset = _check_ruleset(recorded, verdict_, jobs, progress, scratch)
    if len(located) < len(recorded["inputs"]) or ruleset is None:
        verdict_.problems.append("the audit could not be re-run (see above)")
        return
    audit, rulesets = ruleset
    sites = {str(path): inp["site"] for path, label in located.items()
             for inp in recorded["inputs"]
             if str(inp.get("path", "")) == label and inp.get("site") is not None}
    read = ReadOptions.recorded(recorded.get("read_options"))
    labels = {str(path): label for path, label in located.items()}
    formats = [str(f) for f in manifest["formats"]] if manifest is not None else []
    try:
        result = audit(list(located), read, labels, sites or None, formats)
    except LogFileError as exc:
        verdict_.problems.append(f"input {exc}: can no longer be read")
        return
    except AuditorError as exc:
        verdict_.problems.append(f"the audit could not be re-run: {exc}")
        return
    logs = result.logs
    _check_counts(recorded["inputs"], logs.inputs, verdict_)
    result = regulated(result)
    verdict_.findings, verdict_.quarantined = len(result.findings), len(logs.quarantine)
    if findings is not None:
        schema = stored_schema(result.findings) if "site" in findings.schema.names \
            else stored_schema(result.findings.drop(columns=["site"], errors="ignore"))
        fresh = pa.Table.from_pandas(result.findings, schema=schema, preserve_index=False)
        _compare("finding", findings, fresh, "finding_id", verdict_)
    _check_quarantine(folder, files, logs, manifest, verdict_)
    triage = _triage(recorded, rulesets, result.findings, verdict_)
    if triage is None:
        return
    fresh_meta = provenance(result)
    fresh_meta["statuses"] = triage.as_meta()
    fail_on = (recorded.get("verdict") or {}).get("fail_on", "major")
    fresh_meta["verdict"] = verdict(result.findings, triage.status, fail_on)
    _check_not_audited(recorded, fresh_meta, inputs_root, verdict_, read)
    if "generated_at" in recorded:
        fresh_meta["generated_at"] = recorded["generated_at"]
    differing = _differing(recorded, fresh_meta)
    if differing:
        verdict_.problems.append(f"provenance: {', '.join(differing)} not what the audit "
                                 f"gives now")
    if manifest is None:
        return
    reshaped = _reshaped(recorded, fresh_meta)
    if reshaped:
        verdict_.problems.append(f"provenance: {', '.join(reshaped[:MAX_LISTED])} not of the "
                                 f"kind the auditor writes there; the formats were not "
                                 f"rendered again from it")
        return
    triaged = result.with_findings(triage.annotate(result.findings))
    _render_again(manifest, recorded, triaged, files, verdict_)


def _check_not_audited(recorded: dict, fresh_meta: dict, root: Path | None,
                       verdict_: Verdict, read: ReadOptions) -> None:
    """A keep-going report stands only while each file it did not audit is
    the same bytes and still unreadable for the same reason; the files it
    excluded are recorded as they were (a choice, not a finding)."""
    entries = recorded.get("not_audited") or []
    everything = list(recorded.get("inputs", [])) + [{"path": e.get("file", "")}
                                                     for e in entries]
    where = _locate(everything, root)
    standing: dict[str, str] = {}
    shas: dict[str, str | None] = {}
    for e in entries:
        name = str(e.get("file", ""))
        path = _on_disk(where.get(name, Path(name)))
        if not path.is_file():
            verdict_.problems.append(f"not audited {name}: missing")
            continue
        digest = sha256_of(path)
        if digest != e.get("sha256"):
            verdict_.problems.append(f"not audited {name}: changed (sha256 was "
                                     f"{e.get('sha256')}, now {digest})")
            continue
        why = still_unreadable(path, read)
        if why != e.get("reason"):
            verdict_.problems.append(f"not audited {name}: " + (
                "can be read now" if why is None else f"unreadable now for another reason: {why}"))
            continue
        standing[name], shas[name] = why, digest
    excluded = {str(x.get("file", "")): str(x.get("glob", ""))
                for x in recorded.get("excluded") or []}
    not_audited_meta(fresh_meta, standing if len(standing) == len(entries) else {}, excluded,
                     shas)


# --- part 1: the folder -----------------------------------------------------------------------

def _snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry of `folder` with its bytes (None: not a regular file),
    read through one open handle on the folder: should a run swap a new
    report in meanwhile, the snapshot starts again, so it is always one
    whole run's."""
    if not folder.is_dir():
        raise ReportError(f"{folder}: no such folder")
    for _ in range(5):
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise ReportError(f"{folder}: cannot be read: {exc.strerror or exc}") from None
        try:
            return _read_entries(fd)
        except FileNotFoundError:
            continue  # the folder was swapped and the earlier one deleted: read the new one
        finally:
            os.close(fd)
    raise ReportError(f"{folder}: its report kept changing while it was read")


#: What the snapshot holds for a file of the user's in the report folder
#: (a name no run writes, `OWN_NAMES`): never read, whatever its size (a
#: 4 GiB file kept beside a report must not make it "no report").
NOT_READ = b""


def _read_entries(fd: int) -> dict[str, bytes | None]:
    import stat

    entries: dict[str, bytes | None] = {}
    for name in sorted(os.listdir(fd)):
        st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            entries[name] = None
            continue
        if name not in OWN_NAMES:
            entries[name] = NOT_READ
            continue
        try:
            handle = os.open(name, os.O_RDONLY, dir_fd=fd)
        except PermissionError:
            entries[name] = None
            continue
        with open(handle, "rb") as f:
            entries[name] = f.read()
    return entries


def _read_manifest(folder: Path, files: dict, verdict_: Verdict) -> dict | None:
    if MANIFEST_NAME not in files:
        return None
    where = folder / MANIFEST_NAME
    try:
        manifest = json.loads(files[MANIFEST_NAME] or b"")
    except ValueError as exc:
        verdict_.problems.append(f"{where}: not readable JSON ({exc})")
        return None
    ok = isinstance(manifest, dict) and isinstance(manifest.get("provenance"), dict) \
        and isinstance(manifest.get("formats"), list) \
        and isinstance(manifest.get("files"), list) \
        and all(isinstance(f, dict) and {"name", "sha256", "size"} <= set(f)
                for f in manifest["files"])
    if not ok:
        verdict_.problems.append(f"{where}: not an auditor manifest (files, formats, "
                                 f"provenance)")
        return None
    return manifest


def _footer_provenance(folder: Path, files: dict, name: str) -> tuple[dict | None, str | None]:
    """(provenance, problem) of a Parquet file of the report, from its footer."""
    try:
        schema = read_stored_schema(pa.BufferReader(files[name]))
    except (pa.ArrowException, OSError, ValueError) as exc:
        return None, f"{folder / name}: not a readable Parquet file: {exc}"
    own = _provenance_in(schema)
    if own is None:
        return None, f"{folder / name}: no auditor provenance in its metadata"
    return own, None


def _provenance_in(schema) -> dict | None:
    """The `auditor` provenance a report Parquet file's schema carries
    (None: none, or not a JSON object)."""
    raw = (schema.metadata or {}).get(b"auditor")
    try:
        meta = json.loads(raw) if raw else None
    except ValueError:
        return None
    return meta if isinstance(meta, dict) else None


def _read_parquet(folder: Path, files: dict, name: str):
    """(provenance, table without it, problem) of a Parquet file of the
    report; a problem and Nones when it is missing or unreadable."""
    target = folder / name
    data = files.get(name)
    if data is None:
        return None, None, (f"{folder}: no report here (no {name}; `auditor check "
                            f"--format parquet` writes it)")
    try:
        table = read_stored(pa.BufferReader(data))
    except (pa.ArrowException, OSError, ValueError) as exc:
        return None, None, f"{target}: not a readable Parquet file: {exc}"
    meta = _provenance_in(table.schema)
    if meta is None or not isinstance(meta.get("inputs"), list) \
            or not isinstance(meta.get("ruleset"), dict):
        return None, None, f"{target}: no auditor provenance in its metadata"
    return meta, table.replace_schema_metadata(None), None


def _check_files(manifest: dict, files: dict, verdict_: Verdict) -> None:
    """Every file listed, with its size and SHA-256; no file unlisted."""
    listed = set()
    for entry in manifest["files"]:
        name = str(entry["name"])
        listed.add(name)
        data = files.get(name)
        if name not in OWN_NAMES:
            verdict_.problems.append(f"{name}: listed in the manifest, but no run of the "
                                     f"auditor writes a file of that name")
        elif name not in files:
            verdict_.problems.append(f"{name}: missing (listed in the manifest)")
        elif data is None:
            verdict_.problems.append(f"{name}: not a readable file")
        else:
            now = file_entry(name, data)
            if (now["sha256"], now["size"]) != (entry["sha256"], entry["size"]):
                verdict_.problems.append(
                    f"{name}: changed since it was written (sha256 was {entry['sha256']}, "
                    f"now {now['sha256']}; {entry['size']} bytes, now {now['size']})")
    for name in files:
        if name in listed or name == MANIFEST_NAME:
            continue
        if name in OWN_NAMES:  # a report file no run wrote here: an earlier run's, or forged
            verdict_.problems.append(f"{name}: not in the manifest (no run of the auditor "
                                     f"wrote it here)")
        else:  # the user's own file, kept across runs (`auditor.atomic.report_folder`)
            verdict_.notes.append(f"{name} is not part of the report (not in its manifest)")


def _check_own_fields(manifest: dict, verdict_: Verdict) -> None:
    """The manifest's own fields as `auditor check` writes them (its
    version, the auditor's as its provenance has it, each named format's
    options by their names): an edit to one is a problem, though the files
    may render the same from it."""
    version = manifest.get("manifest_version")
    if type(version) is not int or version != MANIFEST_VERSION:
        verdict_.problems.append(f"{MANIFEST_NAME}: manifest_version {json.dumps(version)}; "
                                 f"this auditor writes and reads {MANIFEST_VERSION}")
    made_by = manifest.get("auditor_version")
    if made_by != manifest["provenance"].get("auditor_version"):
        verdict_.problems.append(f"{MANIFEST_NAME}: auditor_version {json.dumps(made_by)}, "
                                 f"not its provenance's")
    options = manifest.get("options", {})
    named = {str(f) for f in manifest["formats"]}
    known = {f.name: {keyword for keyword, _ in f.options} for f in REPORT_FORMATS.values()}
    if not isinstance(options, dict) or any(
            name not in named or not isinstance(given, dict) or not given
            or not set(given) <= known.get(name, set())
            or any(isinstance(v, (dict, list)) for v in given.values())
            for name, given in options.items()):
        verdict_.problems.append(f"{MANIFEST_NAME}: options {json.dumps(options)[:200]} are not "
                                 f"options of the formats it names")


def _differing(recorded: dict, fresh: dict) -> list[str]:
    """The provenance keys (`verdict.failing`) whose values differ, the
    installation's paths and the auditor's version aside."""
    out = []
    for key in sorted(set(recorded) | set(fresh)):
        a, b = recorded.get(key), fresh.get(key)
        if key == "auditor_version":
            continue
        if key == "ruleset_versions" and isinstance(a, list) and isinstance(b, list):
            a, b = [_uninstalled(x) for x in a], [_uninstalled(x) for x in b]
        if key == "ruleset":
            a, b = _uninstalled(a), _uninstalled(b)
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{key}.{k}" for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
        elif a != b:
            out.append(key)
    return out


def _uninstalled(block):
    if not isinstance(block, dict):
        return block
    return {k: v for k, v in block.items() if k not in INSTALL_KEYS}


def _unreadable_provenance(recorded: dict) -> list[str]:
    """What the re-run would read of the provenance (its inputs, ruleset,
    read options, baseline and waivers, fail threshold, files not
    audited), where it is not what the auditor writes: a problem each,
    never an internal error (a forged or damaged report)."""
    problems = []

    def objects(value) -> bool:
        return isinstance(value, list) and all(isinstance(v, dict) for v in value)

    if not all(isinstance(i, dict) and isinstance(i.get("path"), str)
               for i in recorded["inputs"]):
        problems.append("provenance: inputs is not a list of inputs, each with its path")
    block = recorded["ruleset"]
    if not all(isinstance(block.get(k), str) for k in ("id", "content_hash")) or \
            not isinstance(block.get("files", []), list) or \
            not isinstance(block.get("family") or "", str) or \
            not objects(recorded.get("ruleset_versions", [])):
        problems.append("provenance: ruleset is not a ruleset the auditor records (id, "
                        "content_hash, files, family, ruleset_versions)")
    statuses, verdict_block = recorded.get("statuses", {}), recorded.get("verdict", {})
    if not isinstance(statuses, dict) or not all(
            statuses.get(k) is None or (isinstance(statuses[k], dict)
                                        and isinstance(statuses[k].get("file"), str))
            for k in ("baseline", "waivers")):
        problems.append("provenance: statuses does not name a baseline and waivers as the "
                        "auditor records them")
    if not isinstance(verdict_block, dict) or \
            verdict_block.get("fail_on", "major") not in FAIL_ON_CHOICES:
        problems.append("provenance: verdict is not a verdict the auditor records")
    for key in ("not_audited", "excluded"):
        if not objects(recorded.get(key, [])):
            problems.append(f"provenance: {key} is not a list of files")
    if isinstance(recorded.get("generated_at", ""), (dict, list)):
        problems.append("provenance: generated_at is not a time")
    try:
        ReadOptions.recorded(recorded.get("read_options"))
    except AuditorError as exc:
        problems.append(f"provenance: {exc}")
    return problems


def _reshaped(recorded, fresh, where: str = "") -> list[str]:
    """Where the recorded provenance holds another kind of value (object,
    list, text, number, true/false, null) than the one the audit gives now
    (`fresh`): the formats are rendered from the recorded one, and render
    only what the auditor writes. Values that differ are `_differing`'s."""
    def kind(value) -> str:
        return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) \
            else type(value).__name__

    if kind(recorded) != kind(fresh):
        return [where or "the whole"]
    if isinstance(fresh, dict):  # (a key only one of them has: nothing to judge it by)
        return [p for k in sorted(set(recorded) | set(fresh), key=str)
                for p in (_reshaped(recorded[k], fresh[k], f"{where}.{k}" if where else k)
                          if k in fresh and k in recorded else [f"{where}.{k}" if where else k])]
    if isinstance(fresh, list):  # (each item against the audit's, else its last)
        return [p for i, a in enumerate(recorded)
                for p in (_reshaped(a, fresh[min(i, len(fresh) - 1)], f"{where}[{i}]")
                          if fresh else [f"{where}[{i}]"])]
    return []


# --- part 2: the audit --------------------------------------------------------------------------

def _locate(inputs: list[dict], root: Path | None) -> dict[str, Path]:
    """Recorded input path -> where it is now: as recorded, or under `root`
    by its place below the folder all the recorded inputs share."""
    paths = [str(inp.get("path", "")) for inp in inputs]
    if root is None:
        return {p: Path(p) for p in paths}
    try:
        common = os.path.commonpath([os.path.dirname(p) or "." for p in paths])
    except ValueError:  # absolute and relative paths mixed: by file name
        common = None
    return {p: Path(root) / (os.path.relpath(p, common) if common is not None
                             else os.path.basename(p)) for p in paths}


def _check_inputs(inputs: list[dict], verdict_: Verdict,
                  root: Path | None = None) -> dict[str, str]:
    """The inputs still there (where found now -> recorded path); each
    missing or changed one is a problem."""
    present = {}
    for recorded, path in _locate(inputs, root).items():
        inp = next(i for i in inputs if str(i.get("path", "")) == recorded)
        where = recorded if root is None else f"{recorded} (looked for at {path})"
        if not path.is_file():
            verdict_.problems.append(f"input {where}: missing")
            continue
        try:
            digest = sha256_of(path)
        except OSError as exc:
            verdict_.problems.append(f"input {where}: cannot be read: {exc.strerror or exc}")
            continue
        if digest != inp.get("sha256"):
            verdict_.problems.append(f"input {where}: changed (sha256 was {inp.get('sha256')}, "
                                     f"now {digest})")
        present[str(path)] = recorded
    return present


def _check_ruleset(meta: dict, verdict_: Verdict, jobs: int = 1, progress=None,
                   scratch: str | None = None):
    """(the audit to re-run, as a function of the files, how to read them,
    their names in the report, their sites and the formats to render again;
    the ruleset and the family's versions, for triage), or None when the
    ruleset (or a version of its family) is missing or no longer loads. A
    changed content hash is a problem, and the audit still re-runs."""
    block = meta["ruleset"]
    verdict_.ruleset_id = str(block.get("id"))
    if block.get("family") and meta.get("ruleset_versions"):
        from auditor.rules.versions import make_family
        from auditor.run import family as family_run

        versions = [_load(b, verdict_) for b in meta["ruleset_versions"]]
        if any(v is None for v in versions):
            return None
        try:
            family = make_family(block["family"], versions)
        except RulesetError as exc:
            verdict_.problems.append(f"ruleset family {block['family']}: {exc}")
            return None
        def audit_versions(files, read, labels, sites, formats):
            # (as `check` audits a family: a batch of files at a time where the
            # plan gives batches, else the logs loaded at once)
            job = AuditJob(tuple(files), tuple(discover_logs(files)), family.latest, read=read,
                           sites=sites, labels=labels,
                           collector=collector_for(formats, family.latest), scratch=scratch)

            def audit_version(logs, version, collector=None):  # (as `check` audits each)
                return run_audit(AuditJob.loaded(version, jobs=jobs, collector=collector),
                                 loaded=logs)

            batched = family_run.audit_family_batches(job, family, audit_version, progress)
            if batched is not None:
                return batched
            logs = load_logs(files, options=read, labels=labels, sites=sites)
            return family_run.audit_family(logs, family, audit_version)

        return audit_versions, (family.latest, family.versions)
    ruleset = _load(block, verdict_)
    if ruleset is None:
        return None

    def audit(files, read, labels, sites, formats):
        # (as `check` audits: a batch of files at a time, in `jobs`
        # processes, so memory follows the batch, not the input; the
        # reports' collector takes what the page needs as each batch goes)
        job = AuditJob(tuple(files), tuple(discover_logs(files)), ruleset, jobs=jobs, read=read,
                       sites=sites, labels=labels,
                       collector=collector_for(formats, ruleset, apart=jobs > 1),
                       scratch=scratch)
        return run_audit(job, progress=progress)

    return audit, (ruleset, ())


def _load(block: dict, verdict_: Verdict) -> Ruleset | None:
    """The ruleset a block names: from its files where they are, a shipped
    one by its id in this installation (wherever the report's was)."""
    rid = block.get("id")
    files = [str(_on_disk(Path(str(f)))) for f in block.get("files") or []]
    missing = [f for f in files if not Path(f).is_file()]
    for f in missing:
        if not _shipped(f).is_file():
            verdict_.problems.append(f"ruleset {rid}: file {f} missing")
            return None
    if files:
        ref = str(_shipped(files[-1])) if files[-1] in missing else files[-1]
    else:
        ref = str(rid)
    try:
        ruleset = load_ruleset(ref)
    except RulesetError as exc:
        verdict_.problems.append(f"ruleset {rid}: no longer loads: {exc}")
        return None
    if ruleset.content_hash != block.get("content_hash"):
        verdict_.problems.append(f"ruleset {rid}: changed (content hash was "
                                 f"{block.get('content_hash')}, now {ruleset.content_hash})")
    return ruleset


def _on_disk(recorded: Path) -> Path:
    """A file a report names, as it is on disk: by the name as recorded, or,
    when none is, by the bytes its `\\xNN` stand for (a name that is not
    UTF-8 is recorded shown: decision 118)."""
    return recorded if recorded.is_file() else Path(unshown_path(str(recorded)))


def _shipped(recorded: str) -> Path:
    """Where a shipped ruleset recorded at `recorded` (another installation's
    path, say) is in this one: by its file name, that is its id."""
    return ruleset_mod.shipped_dir() / Path(recorded).name


def _check_quarantine(folder: Path, files: dict, logs, manifest, verdict_: Verdict) -> None:
    name = "quarantine.parquet"
    if name not in files:
        if manifest is None:
            verdict_.problems.append(f"{folder / name}: missing")
        return
    try:
        old_q = read_stored(pa.BufferReader(files[name] or b"")) \
            .replace_schema_metadata(None)
    except (pa.ArrowException, OSError) as exc:
        verdict_.problems.append(f"{folder / name}: not readable: {exc}")
        return
    # (as the report writes it: with its `site` column when a row has a site)
    quarantine, schema = quarantine_table(logs.quarantine)
    new_q = pa.Table.from_pandas(quarantine, schema=schema, preserve_index=False)
    verdict_.quarantined = new_q.num_rows
    _compare("quarantined row", old_q, new_q, None, verdict_)


# --- part 3: the statuses -----------------------------------------------------------------------

def _triage(recorded: dict, rulesets, findings, verdict_: Verdict):
    """The triage of the fresh findings by the baseline and waivers the
    report names (each checked against its recorded SHA-256), as on the day
    the report was stamped, else today; None when one of them is gone."""
    statuses = recorded.get("statuses") or {}
    given = {}
    for kind in ("baseline", "waivers"):
        block = statuses.get(kind)
        if not block:
            continue
        path = _on_disk(Path(str(block.get("file"))))
        if not path.is_file():
            verdict_.problems.append(f"{kind} {block.get('file')}: missing (the statuses cannot "
                                     "be checked)")
            return None
        digest = sha256_of(path)
        if digest != block.get("sha256"):
            verdict_.problems.append(f"{kind} {path}: changed (sha256 was {block.get('sha256')}, "
                                     f"now {digest})")
        given[kind] = str(path)
    ruleset, versions = rulesets
    try:
        accepted = load_accepted(given.get("baseline"), given.get("waivers"), ruleset, versions)
    except AuditorError as exc:
        verdict_.problems.append(f"the baseline or waivers no longer load: {exc}")
        return None
    stamped = str(recorded.get("generated_at") or "")[:10]
    with contextlib.suppress(ValueError):
        return accepted.triage(findings, date.fromisoformat(stamped)) if stamped \
            else accepted.triage(findings)
    return accepted.triage(findings)


# --- part 4: the files --------------------------------------------------------------------------

def _render_again(manifest: dict, meta: dict, result, files: dict, verdict_: Verdict) -> None:
    """Every format the manifest names, written again from the fresh audit
    and the recorded provenance, compared byte for byte with the report."""
    from auditor.report.formats import FORMAT_MODULES

    formats = [str(f) for f in manifest["formats"]]
    unknown = [f for f in formats if f not in FORMAT_MODULES]
    if unknown:
        verdict_.problems.append(f"manifest.json: names formats the auditor does not have "
                                 f"({', '.join(unknown)})")
    options = manifest.get("options") if isinstance(manifest.get("options"), dict) else {}
    with tempfile.TemporaryDirectory(prefix="auditor-verify-") as tmp:
        try:
            with commit_together():
                write_and_render(result, meta, Path(tmp), [f for f in formats
                                                          if f in FORMAT_MODULES],
                                 (), options)
        except (AuditorError, TypeError) as exc:
            verdict_.problems.append(f"the report's formats could not be rendered again: {exc}")
            return
        produced = {p.name: p.read_bytes() for p in Path(tmp).iterdir() if p.is_file()}
    listed = {str(f["name"]) for f in manifest["files"]}
    for name, data in sorted(produced.items()):
        if name not in files:
            if name in listed:
                continue  # already said: missing
            verdict_.problems.append(f"{name}: not in the report, though its format "
                                     f"({', '.join(formats)}) writes it")
        elif files[name] != data:
            verdict_.problems.append(f"{name}: not what the audit renders now (its content "
                                     f"was edited, or the findings or provenance differ)")
    for name in sorted(listed - set(produced)):
        verdict_.problems.append(f"{name}: listed in the manifest, but none of its formats "
                                 f"writes it")


def _check_counts(recorded: list[dict], now, verdict: Verdict) -> None:
    by_path = {f.path: f.as_dict() for f in now}
    for inp in recorded:
        fresh = by_path.get(str(inp.get("path")))
        if fresh is None:
            continue
        for key in ("rows_read", "rows_replayed", "rows_quarantined"):
            if fresh[key] != inp.get(key):
                verdict.problems.append(f"input {inp['path']}: {key} was {inp.get(key)}, "
                                        f"now {fresh[key]}")


def _compare(what: str, old: pa.Table, new: pa.Table, key: str | None,
             verdict: Verdict) -> None:
    """Row for row; what differs is listed (by `key` where there is one)."""
    if old.schema.names != new.schema.names:
        verdict.problems.append(f"{what}s: the report's columns are {old.schema.names}, "
                                f"now {new.schema.names}")
        return
    try:
        new = new.cast(old.schema)
    except (pa.ArrowException, ValueError):
        pass
    if old.equals(new):
        return
    old_rows, new_rows = old.to_pylist(), new.to_pylist()
    lines: list[str] = []
    if key is not None:
        before = {r[key]: r for r in old_rows}
        after = {r[key]: r for r in new_rows}
        for k, row in before.items():
            if k not in after:
                lines.append(f"{what} {k} ({_where(row)}) is in the report, not found now")
            elif after[k] != row:
                cols = [c for c in row if row[c] != after[k][c]]
                lines.append(f"{what} {k} ({_where(row)}) now differs in {', '.join(cols)}")
        for k, row in after.items():
            if k not in before:
                lines.append(f"{what} {k} ({_where(row)}) is found now, not in the report")
        if not lines:
            lines.append(f"{what}s are the same but in another order")
    else:
        for i, (a, b) in enumerate(zip(old_rows, new_rows)):
            if a != b:
                lines.append(f"{what} #{i + 1} ({_where(a)}) now differs")
        if len(old_rows) != len(new_rows):
            lines.append(f"{len(old_rows)} {what}(s) in the report, {len(new_rows)} now")
    verdict.problems.extend(lines[:MAX_LISTED])
    if len(lines) > MAX_LISTED:
        verdict.problems.append(f"… and {len(lines) - MAX_LISTED} more {what} difference(s)")


def _where(row: dict) -> str:
    parts = [str(row[k]) for k in ("code",) if row.get(k)]
    if row.get("table_id") is not None:
        parts.append(f"{row['table_id']} seq {row.get('seq')}")
    if row.get("source_file"):
        parts.append(f"{Path(str(row['source_file'])).name}:{row.get('source_line')}")
    return ", ".join(parts) or "no location"
