"""Build small craps logs inside a test, audit them, and read the findings.

A test starts from `lawful_table()` (a table opened, dice received, inspected
and in the bowl, players seated with pass bets, a shooter chosen), adds the
events of the case, and asserts on the exact findings as (code, table, seq).
"""

from __future__ import annotations

import csv
from datetime import UTC, datetime, timedelta
from pathlib import Path

from auditor.logs.load import load_logs
from auditor.logs.schema import COLUMN_NAMES
from auditor.rules.ruleset import Ruleset, load_ruleset
from auditor.run.local import audit_in_process

STICK = "stickperson"
DICE = "A1,A2,A3,A4,A5"
THROW = "one_hand,simultaneous,far_end"
#: A dealer, the game supervisor (seed 000 5.2) and a pit manager (SD
#: 20:18:19:11) inspect: lawful under every shipped ruleset.
INSPECTORS = ("dealer", "game_supervisor", "pit_manager")
SHIPPED = ("nz-table-games", "nz-1996", "sd-20-18-33", "nsw-1992")


class LogBuilder:
    """Appends events to one table with consecutive seq and rising ts."""

    def __init__(self, table: str = "T1", start: datetime | None = None):
        self.table = table
        self.rows: list[dict] = []
        self.seq = 0
        self.ts = start or datetime(2026, 3, 1, 20, 0, 0, tzinfo=UTC)
        self.staff = {"stickperson": "K1", "dealer": "D3", "boxperson": "B2",
                      "game_supervisor": "S7", "pit_manager": "M4", "casino_manager": "C1",
                      "security": "G2", "system": "SYS"}

    # --- raw events ------------------------------------------------------

    def add(self, event: str, **cells) -> int:
        """Append one event; return its seq. `role` sets actor_role and, for
        staff, a default actor_id; players get their player id."""
        self.seq += 1
        self.ts += timedelta(seconds=5)
        role = cells.pop("role", None)
        row = {"table_id": self.table, "seq": self.seq,
               "ts": self.ts.isoformat(), "event": event}
        if role:
            row["actor_role"] = role
            if role == "player" and "seat" in cells:
                row["actor_id"] = row["player_id"] = f"P{cells['seat']}"
            elif role in self.staff:
                row["actor_id"] = self.staff[role]
        row.update({k: v for k, v in cells.items()})
        self.rows.append(row)
        return self.seq

    # --- lawful building blocks -----------------------------------------

    def open(self, seats=(2, 5, 7), dice=DICE, inspectors=INSPECTORS,
             open_seat=None) -> None:
        self.add("table_open", role="game_supervisor", **({"seat": open_seat} if open_seat
                                                            else {}))
        self.add("dice_received", role="security", dice=dice)
        for who in inspectors:
            self.add("dice_inspected", role=who, dice=dice, outcome="pass")
        self.add("dice_to_bowl", role=STICK, dice=dice)
        for s in seats:
            self.add("player_join", role="player", seat=s)

    def bet(self, seat: int, bet: str = "pass", amount: int = 10) -> int:
        return self.add("wager_placed", role="player", seat=seat, bet=bet, amount=amount)

    def offer(self, seat: int, role: str = STICK, dice: str = DICE) -> int:
        return self.add("dice_offered", role=role, seat=seat, dice=dice)

    def decline(self, seat: int) -> int:
        return self.add("dice_declined", role="player", seat=seat)

    def accept(self, seat: int, keep=("A1", "A2"), dice: str = DICE) -> int:
        """Accept, choose `keep`, and return the rest of `dice` to the bowl."""
        self.add("dice_accepted", role="player", seat=seat)
        self.add("dice_selected", role="player", seat=seat, dice=",".join(keep))
        rest = [d for d in dice.split(",") if d not in keep]
        return self.add("dice_to_bowl", role=STICK, dice=",".join(rest))

    def roll(self, seat: int, d1: int, d2: int, flags: str = THROW,
             dice: str = "A1,A2", role: str = "player") -> int:
        cells = {"dice": dice, "die1": d1, "die2": d2, "flags": flags}
        if role == "player":
            cells["seat"] = seat
        return self.add("roll", role=role, **cells)

    def call(self, total: int, role: str = STICK) -> int:
        return self.add("total_called", role=role, total=total)

    def collect(self, flags: str = "stick", dice: str = "A1,A2") -> int:
        return self.add("dice_collected", role=STICK, dice=dice, flags=flags)

    def settle(self, seat: int, bet: str, outcome: str, amount: int = 0) -> int:
        return self.add("wager_settled", role="dealer", seat=seat, bet=bet, outcome=outcome,
                        amount=amount)

    def complete(self) -> int:
        return self.add("settlement_complete", role="dealer")

    def pass_back(self, seat: int, flags: str = "stick", dice: str = "A1,A2") -> int:
        return self.add("dice_to_shooter", role=STICK, seat=seat, dice=dice, flags=flags)

    def play(self, seat: int, d1: int, d2: int, settlements=(), pass_back: bool = True,
             flags: str = THROW, dice: str = "A1,A2") -> int:
        """A whole lawful roll: roll, call, collect with the stick, settle,
        settlement complete, dice back with the stick. Returns the roll's seq.
        `dice` are the two serials thrown (the shooter's chosen pair)."""
        seq = self.roll(seat, d1, d2, flags=flags, dice=dice)
        self.call(d1 + d2)
        self.collect(dice=dice)
        for s, bet, outcome, amount in settlements:
            self.settle(s, bet, outcome, amount)
        self.complete()
        if pass_back:
            self.pass_back(seat, dice=dice)
        return seq

    # --- more building blocks (dice custody) -------------------------------

    def receive(self, dice: str = DICE, inspectors=INSPECTORS,
                bowl: bool = True) -> tuple[int, int | None]:
        """A set arrives, is inspected (passing) by each role of `inspectors`
        (a role, or a (role, actor_id) pair), and goes into the bowl. Returns
        the seqs of the `dice_received` and of the `dice_to_bowl` (None if
        `bowl` is false)."""
        received = self.add("dice_received", role="security", dice=dice)
        for who in inspectors:
            self.inspect(who, dice)
        to_bowl = self.add("dice_to_bowl", role=STICK, dice=dice) if bowl else None
        return received, to_bowl

    def inspect(self, who, dice: str, outcome: str = "pass") -> int:
        """`who` is a role (its default staff id) or a (role, actor_id) pair."""
        role, actor = (who, None) if isinstance(who, str) else who
        cells = {"actor_id": actor} if actor else {}
        return self.add("dice_inspected", role=role, dice=dice, outcome=outcome, **cells)

    def to_bowl(self, dice: str) -> int:
        return self.add("dice_to_bowl", role=STICK, dice=dice)

    def remove(self, dice: str, role: str = "game_supervisor") -> int:
        return self.add("dice_removed", role=role, dice=dice)

    def relinquish(self, seat: int, reason: str = "seven_out", role: str = "player") -> int:
        return self.add("shooter_relinquish", role=role, seat=seat, reason=reason)

    def seven_out(self, shooter: int, seats, dice: str = "A1,A2") -> int:
        """Point 6 then a 7 Out: every pass bet of `seats` loses, the shooter
        relinquishes. Returns the seq of the `shooter_relinquish`."""
        self.play(shooter, 4, 2, dice=dice)
        self.play(shooter, 3, 4, settlements=[(s, "pass", "lose", 0) for s in seats],
                  pass_back=False, dice=dice)
        return self.relinquish(shooter)

    # --- output ------------------------------------------------------------

    def write_csv(self, path: Path) -> Path:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(COLUMN_NAMES))
            writer.writeheader()
            for row in self.rows:
                writer.writerow({k: row.get(k, "") for k in COLUMN_NAMES})
        return path



def audit(paths, ruleset):
    """Audit every log under `paths` in this process against `ruleset` (a
    shipped id, a .toml path or a loaded Ruleset): the library's parts as a
    test wants them in one call."""
    if not isinstance(ruleset, Ruleset):
        ruleset = load_ruleset(ruleset)
    return audit_in_process(load_logs(list(paths)), ruleset)

def reopen(b: LogBuilder, seats=(2, 5, 7), shooter: int = 2) -> None:
    """Close the table and open it again, as `lawful_table` opens it (a new
    session: the replay starts the table afresh)."""
    b.add("table_close", role="game_supervisor")
    b.open(seats=seats)
    for s in seats:
        b.bet(s)
    b.offer(shooter)
    b.accept(shooter)


def lawful_table(seats=(2, 5, 7), shooter: int = 2, **open_kwargs) -> LogBuilder:
    """A table open with every seated player holding a pass bet, the dice
    offered to the lowest seat and accepted by `shooter` (the seats before it
    declining)."""
    b = LogBuilder()
    b.open(seats=seats, **open_kwargs)
    for s in seats:
        b.bet(s)
    for s in sorted(seats):
        b.offer(s)
        if s == shooter:
            break
        b.decline(s)
    b.accept(shooter)
    return b


def broken_table() -> LogBuilder:
    """`lawful_table` with a roll of 7 called, the dice collected without
    the stick and one pass bet settled: findings under every shipped
    ruleset (the night a report under test is made of)."""
    b = lawful_table()
    b.roll(2, 3, 4)
    b.call(7)
    b.collect(flags="no_stick")
    b.settle(2, "pass", "lose")
    return b


def audited_night(folder: Path, *formats: str) -> Path:
    """`broken_table` written to FOLDER/logs/t1.csv and audited, from
    FOLDER (the current folder: paths as a user types them), under
    nz-table-games into FOLDER/reports in `formats` (none: the default);
    the reports folder."""
    (folder / "logs").mkdir()
    broken_table().write_csv(folder / "logs" / "t1.csv")
    args = ["check", "logs", "-r", "nz-table-games", "--out", "reports"]
    for name in formats:
        args += ["--format", name]
    res = run_cli(*args)
    assert res.exit_code == 1, res.output
    return folder / "reports"


def one_roll_table(name: str, wrong_call: bool = False) -> LogBuilder:
    """`lawful_table` named `name`, with one roll (3 and 4) called and every
    pass bet settled; `wrong_call`: the call after it says 6 (one finding)."""
    b = lawful_table()
    b.table = name
    for row in b.rows:
        row["table_id"] = name
    seq = b.play(2, 3, 4, settlements=[(s, "pass", "win", 10) for s in (2, 5, 7)])
    if wrong_call:
        b.rows[seq]["total"] = 6  # the call after the roll
    return b


def findings_of(builder: LogBuilder, tmp_path: Path, ruleset: str = "nz-table-games"):
    path = builder.write_csv(tmp_path / f"{builder.table}.csv")
    return audit([path], ruleset).findings


def found(builder: LogBuilder, tmp_path: Path, ruleset: str = "nz-table-games",
          code_prefix: str | None = None) -> set[tuple[str, str, int]]:
    """The findings as a set of (code, table, seq)."""
    f = findings_of(builder, tmp_path, ruleset)
    out = {(c, t, int(s)) for c, t, s in zip(f["code"], f["table_id"], f["seq"])}
    if code_prefix:
        out = {x for x in out if x[0].startswith(code_prefix)}
    return out


def rulesets_with(code: str) -> list[str]:
    """The shipped rulesets that enforce `code` (for parametrised tests)."""
    from auditor.rules.ruleset import load_ruleset

    return [rs for rs in SHIPPED if any(r.code == code for r in load_ruleset(rs).rules)]


# --- helpers added for the throw/call, no-roll and settlement tests ---------
# (module functions taking a builder, so the class above is left unchanged)


def cocked(builder: LogBuilder, die: str, resting_face: int) -> int:
    """`die_cocked`: `die` rests on an object with `resting_face` uppermost."""
    return builder.add("die_cocked", role=STICK, dice=die, die1=resting_face)


def no_roll(builder: LogBuilder, reason: str, role: str = STICK,
            flags: str = "before_rest") -> int:
    cells = {"reason": reason}
    if flags:
        cells["flags"] = flags
    return builder.add("no_roll", role=role, **cells)


def dispute(builder: LogBuilder, die: str, role: str = "player", seat: int | None = None) -> int:
    cells = {"dice": die}
    if seat is not None:
        cells["seat"] = seat
    return builder.add("dispute", role=role, **cells)


def ruling(builder: LogBuilder, role: str, reason: str = "face_determined",
           face: int | None = None) -> int:
    cells = {"reason": reason}
    if face is not None:
        cells["die1"] = face
    return builder.add("ruling", role=role, **cells)


def overrule(builder: LogBuilder, role: str, overruled: str) -> int:
    return builder.add("overrule", role=role, reason=overruled)


def enforced_codes(ruleset: str) -> set[str]:
    """The codes a ruleset (id or path) enforces."""
    from auditor.rules.ruleset import load_ruleset

    return {r.code for r in load_ruleset(ruleset).rules}


def family_codes(families: str | tuple[str, ...]) -> set[str]:
    """The codes the checks of these families (`throw`, `noroll`, ...: a
    family is a module of `auditor.checks`, named like its codes) report."""
    from auditor.checks import CHECKS

    families = (families,) if isinstance(families, str) else families
    return {c.code for c in CHECKS.values() if c.family in families}


def found_family(builder: LogBuilder, tmp_path: Path, ruleset: str,
                 family: str | tuple[str, ...]) -> set[tuple[str, str, int]]:
    """The findings of check families as a set of (code, table, seq)."""
    codes = family_codes(family)
    return {x for x in found(builder, tmp_path, ruleset) if x[0] in codes}


def expected(ruleset: str, *findings: tuple[str, str, int]) -> set[tuple[str, str, int]]:
    """`findings` less those whose code `ruleset` does not enforce: the exact
    set to expect from a case run under several rulesets."""
    codes = enforced_codes(ruleset)
    return {f for f in findings if f[0] in codes}


def evidence_of(builder: LogBuilder, tmp_path: Path, ruleset: str,
                code: str) -> dict[int, dict]:
    """{seq: evidence dict} of the findings with `code`."""
    import json

    f = findings_of(builder, tmp_path, ruleset)
    f = f[f["code"] == code]
    return {int(s): json.loads(e) for s, e in zip(f["seq"], f["evidence"])}


def append_broken_rows(csv_path: Path, *extra: dict) -> None:
    """Rows a loader must quarantine, appended to a CSV log: each of `extra`
    (cells by column name; text with a comma is quoted), an unknown event of
    a table with no other row (T99), and a line with too many cells."""
    lines = csv_path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")

    def row(**cells) -> str:
        return ",".join(f'"{v}"' if "," in str(v) else str(v)
                        for v in (cells.get(name, "") for name in header))

    ts = "2026-03-01T20:00:00Z"
    lines += [row(ts=ts, **cells) for cells in extra]
    lines += [row(table_id="T99", seq=5, ts=ts, event="no_such_event"),
              ",".join(["x"] * (len(header) + 3))]
    csv_path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_cli(*args):
    """`auditor ARGS...` through click's runner (paths and numbers as text)."""
    from click.testing import CliRunner

    from auditor.cli import main

    return CliRunner().invoke(main, [str(a) for a in args])


def report_bytes(result, out: Path, meta: dict) -> tuple[bytes, bytes]:
    """The findings.parquet and quarantine.parquet bytes an audit writes to
    the new folder `out`: what engines and batching must leave unchanged."""
    from auditor.report.parquet import write_findings, write_quarantine

    out.mkdir()
    write_findings(result.findings, out / "findings.parquet", meta)
    write_quarantine(result.logs.quarantine, out / "quarantine.parquet", meta)
    return (out / "findings.parquet").read_bytes(), (out / "quarantine.parquet").read_bytes()


def report_findings(out: Path):
    """OUT/findings.parquet, as `auditor check --out OUT` wrote it, as a frame."""
    import pyarrow.parquet as pq

    return pq.read_table(out / "findings.parquet").to_pandas()


def report_provenance(out: Path) -> dict:
    """The provenance `auditor check --out OUT` wrote into OUT/findings.parquet
    (the schema's `auditor` metadata)."""
    import json

    import pyarrow.parquet as pq

    return json.loads(pq.read_schema(out / "findings.parquet").metadata[b"auditor"])


def game_state_log() -> tuple[LogBuilder, dict[str, int]]:
    """A table whose game at its last row is known (for the HTML report's
    derived state): seat 5 accepted the dice offered after seat 2 declined,
    point 6; seat 5 holds a pass and two come bets (travelled to 8), its
    field bet taken down; seat 7's place_8 won; the roll after the 8 was
    voided, and die A2 left the table. The last row is a two-handed roll by
    seat 5. Returns the builder and the seqs named (`accept`, `offer`,
    `select`, `six`, `eight`, `voided`, `off_table`, `bowl`, `last`)."""
    b = lawful_table(seats=(2, 5, 7), shooter=5)
    seqs = {"bowl": b.seq, "select": b.seq - 1, "accept": b.seq - 2, "offer": b.seq - 3}
    seqs["six"] = b.play(5, 3, 3)
    b.bet(5, "come")
    b.bet(5, "come")
    b.bet(7, "place_8", 12)
    b.bet(5, "field", 5)
    b.add("wager_removed", role="player", seat=5, bet="field")
    seqs["eight"] = b.play(5, 4, 4, settlements=[(7, "place_8", "win", 14)])
    seqs["voided"] = b.roll(5, 1, 1, flags="one_hand,simultaneous,far_end,die_off_table")
    seqs["off_table"] = b.add("die_off_table", role=STICK, dice="A2")
    no_roll(b, "die_off_table")
    seqs["last"] = b.roll(5, 2, 3, flags="two_hands,simultaneous,far_end")
    return b, seqs


def two_casinos(root: Path) -> list[Path]:
    """Two casinos' nights, T01 at each (casino-a's in two files): two
    batches of files under `--site-from-path`, one a casino. The files, in
    the order discovered."""
    from auditor.generate import generate, write_log
    from auditor.logs.discover import discover

    a = generate(1, 120, seed=41, inject=["call.wrong_total", "offer.order"]).table
    half = a.num_rows // 2
    write_log(a.slice(0, half), root / "casino-a" / "n1.parquet")
    write_log(a.slice(half), root / "casino-a" / "n2.csv")
    write_log(generate(1, 100, seed=42, inject=["settle.missing"]).table,
              root / "casino-b" / "n1.jsonl")
    return discover([root])


def batches_always(monkeypatch) -> None:
    """Every input audited a batch of files at a time, the smallest too
    (`auditor.run.stream` loads a small input at once)."""
    from auditor.run import stream

    monkeypatch.setattr(stream, "STREAM_MIN_BYTES", 0)
    monkeypatch.setattr(stream, "STREAM_EVENTS", 1)


def nightly_exports(root: Path, tables: int = 3, nights: int = 4, seed: int = 51,
                    inject=("call.wrong_total", "settle.missing", "log.sequence_gap",
                            "offer.order"),
                    interleaved: bool = False, formats=("parquet", "csv", "jsonl")
                    ) -> list[Path]:
    """A casino's nightly exports (`auditor.generate.by_night`): a file a
    night, each holding that night's session of every table, in `formats`
    in turn; every code of `inject` planted. The files link every night
    into one group of the plan. The files, in order."""
    from auditor.generate import by_night, generate, write_log

    log = generate(tables, 40, seed=seed, days=nights, inject=list(inject)).table
    out = []
    for k, night in enumerate(by_night(log, interleaved)):
        path = root / f"night-{k + 1:02d}.{formats[k % len(formats)]}"
        write_log(night, path)
        out.append(path)
    return out


#: Two dated versions of a ruleset family `nz` (`auditor.rules.versions`):
#: NZ 1996 until 28 February 2026, nz-table-games from 1 March 2026.
FAMILY_OLD = """
[ruleset]
id = "nz@1996"
title = "NZ rules as gazetted in 1996"
status = "verified"
extends = "nz-1996"
effective_from = 1996-01-01
effective_to = 2026-02-28
"""
FAMILY_NEW = """
[ruleset]
id = "nz@2026"
title = "NZ rules from March 2026"
status = "verified"
extends = "nz-table-games"
effective_from = "2026-03-01"
"""


def nz_family(folder: Path) -> Path:
    """`FAMILY_OLD` and `FAMILY_NEW` written into `folder` (made): the
    folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "nz@1996.toml").write_text(FAMILY_OLD, encoding="utf-8")
    (folder / "nz@2026.toml").write_text(FAMILY_NEW, encoding="utf-8")
    return folder
