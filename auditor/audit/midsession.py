"""Tables whose log in this audit starts or ends in the middle of a session
(a night split into hourly files audited apart, the pre-commit hook's one
changed file).

A table whose first row here is not `table_open` starts *unestablished*:
the auditor does not know the dice at the table, the offer round (the
shooter, the point) or the wagers at each seat. Each piece is established
again by its own event (docs/decisions.md 92): all of them by a
`table_open`; the dice once the dice received since the start (less those
removed) form a full set (`dice_set_size`); the offer round by a
`dice_accepted`; a seat's wagers by a `player_join` at that seat. Until
then, a rule that needs the unknown piece is *not evaluated* at that table
(listed in `not_evaluated` with the table, the seq range and the reason
"log starts mid-session at seq N") and its findings there are dropped: they
would rest on an empty table the replay assumed, not on the log. Rules that
need no earlier state (the call against the dice, throw flags, stick use,
no-roll calls, roles and authority) are judged as always.

A table whose log ends without `table_close` ends mid-session (named in
the provenance): a procedure still pending at its end (the dice not yet back in the bowl, a
decided wager not yet settled, a lost die's procedure before the next
shooter) is not judged, not reported as missed; the audit does not know
what came after; such a rule is listed as not evaluated there (reason "log
ends mid-session at seq N"), and only where something was pending. A
`table_close` or `table_open` still ends it.

Everything here is read from the marks each file's load takes
(`auditor.logs.sessions`), so every engine gives the same result: this runs
where every engine's findings end (`AuditResult`)."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

from auditor.checks.parameters import PARAMETERS
from auditor.findings import joined_sites
from auditor.logs.site import shown_table

#: The dice in a full set where no ruleset says (the parameter's default).
DEFAULT_SET_SIZE = PARAMETERS["dice_set_size"].default

#: What re-establishes each piece of state (besides a `table_open`).
ESTABLISHED_BY = {"dice": "dice_received", "offer": "dice_accepted",
                  "wagers": "player_join"}
#: The pieces of earlier state each code's rule needs (codes not named need none).
NEEDS = {
    "dice.set_size": ("dice",), "dice.not_inspected": ("dice",),
    "dice.failed_inspection_used": ("dice",), "dice.not_in_bowl": ("dice",),
    "dice.shooter_selection": ("dice",), "dice.unknown_die": ("dice",),
    "dice.off_table_procedure": ("dice",), "dice.lost_die_procedure": ("dice",),
    "offer.incomplete_set": ("dice",),
    "offer.order": ("offer",), "shooter.not_accepted": ("offer",),
    "shooter.kept_after_seven_out": ("offer",), "shooter.marker_off_throw": ("offer",),
    "settle.wrong_outcome": ("offer", "wagers"), "offer.ineligible_player": ("wagers",),
    "settle.missing": ("wagers",), "settle.void_roll": ("wagers",),
    "shooter.ineligible": ("wagers",), "dice.passed_before_settlement": ("wagers",),
    "log.unknown_reference": ("dice", "wagers"),
}
_SAID = {"dice": "the dice at the table are known again once the dice received form a "
                 "full set",
         "offer": "the offer round and the point from a dice_accepted",
         "wagers": "a seat's wagers from a player_join at that seat"}


class TableStart:
    """One table's log in this audit, from its marks in every file."""

    def __init__(self, key: str, set_size: int = DEFAULT_SET_SIZE):
        self.key = key
        self.set_size = set_size
        self.first: tuple[int, str] | None = None
        self.last: tuple[int, str] | None = None
        self.file: str | None = None
        self.last_file: str | None = None
        self.markers: dict[str, list] = {}

    def add(self, marks, path: str) -> None:
        if self.first is None or marks.first[0] < self.first[0]:
            self.first, self.file = marks.first, path
        if self.last is None or marks.last[0] > self.last[0]:
            self.last, self.last_file = marks.last, path
        for event, seqs in marks.markers.items():
            self.markers.setdefault(event, []).extend(seqs)

    @property
    def starts_mid_session(self) -> bool:
        return self.first is not None and self.first[1] != "table_open"

    @property
    def ends_mid_session(self) -> bool:
        return self.last is not None and self.last[1] != "table_close"

    def _after(self, event: str) -> int | None:
        start = self.first[0]
        later = [s for s in self.markers.get(event, []) if s >= start]
        return min(later) if later else None

    def pending_at_end(self, code: str, seq: int, event) -> bool:
        """Whether a finding of `code` at `seq` (an `event` row) was judged at
        the log's end only: the log ends mid-session, the finding is of a
        procedure owed at that row, and no row that ends it follows `seq`."""
        pending = PENDING.get(code)
        if pending is None or not self.ends_mid_session or event != pending[0]:
            return False
        later = ("table_close", "table_open", *pending[1])
        return not any(s > seq for event in later for s in self.markers.get(event, []))

    def established(self, piece: str, seat=None) -> int | None:
        """The seq from which `piece` is known again (None: never, here)."""
        opened = self._after("table_open")
        if piece == "wagers":
            joined = [s for s, at in self.markers.get("player_join", [])
                      if s >= self.first[0] and seat is not None and at == seat]
            again = min(joined) if joined else None
        elif piece == "dice":
            again = self._full_set
        else:
            again = self._after(ESTABLISHED_BY[piece])
        known = [s for s in (opened, again) if s is not None]
        return min(known) if known else None

    @cached_property
    def _full_set(self) -> int | None:
        """The seq of the first `dice_received` at which the dice received
        since the table's start, less those removed since, are a full set
        (`set_size` dice): from there every die at the table is known.
        Worked out once (asked per finding)."""
        known: set[str] = set()
        for s, sign, serials in sorted(self.markers.get("dice", [])):
            if s < self.first[0]:
                continue
            if sign > 0:
                known.update(serials)
                if len(known) >= self.set_size:
                    return s
            else:
                known.difference_update(serials)
        return None


#: Codes judged where a procedure ends: the event their finding points at
#: when the procedure was owed, and what else than a table_close or
#: table_open ends it. Such a finding after which no ending row follows, in
#: a log that ends mid-session, was judged at the log's end only.
PENDING = {"dice.not_in_bowl": ("dice_selected", ("roll",)),
           "settle.missing": ("roll", ("roll", "settlement_complete")),
           "dice.lost_die_procedure": ("die_lost", ("dice_accepted",))}


def table_starts(inputs, set_size: int = DEFAULT_SET_SIZE) -> dict[str, TableStart]:
    out: dict[str, TableStart] = {}
    for f in inputs:
        for key, marks in (getattr(f, "marks", None) or {}).items():
            out.setdefault(key, TableStart(key, set_size)).add(marks, f.path)
    return out


def full_set_size(rulesets) -> int:
    """The dice in a full set: the largest `dice_set_size` any ruleset (or its
    set-size rule) asks for, so the dice stay unknown until every ruleset
    would call the set full."""
    sizes = [rs.parameters.get("dice_set_size", DEFAULT_SET_SIZE) for rs in rulesets]
    sizes += [rule.params["dice_set_size"] for rs in rulesets for rule in rs.rules
              if "dice_set_size" in rule.params]
    return max(sizes, default=DEFAULT_SET_SIZE)


def mid_session(rulesets, inputs, findings: pd.DataFrame
                ) -> tuple[pd.DataFrame, list[dict], list[dict]]:
    """`findings` less those resting on state a mid-session start left
    unknown; the not-evaluated entries (rule, code, file, table, seq range,
    reason) for them; and the tables starting or ending mid-session."""
    starts = table_starts(inputs, full_set_size(rulesets))
    partial = [t for t in starts.values() if t.starts_mid_session or t.ends_mid_session]
    if not partial:
        return findings, [], []
    rules = {}
    for rs in rulesets:
        for rule in rs.rules:
            rules.setdefault(rule.id, rule)
    entries, tables = [], []
    for t in sorted(partial, key=lambda t: t.key):
        if t.ends_mid_session:
            tables.append({"table": t.key, "ends_at": t.last[0], "last_event": t.last[1],
                           "reason": f"log ends mid-session at seq {t.last[0]} (no "
                                     "table_close)"})
        if not t.starts_mid_session:
            continue
        start = t.first[0]
        tables.append({"table": t.key, "starts_at": start, "first_event": t.first[1],
                       "file": t.file, "reason": f"log starts mid-session at seq {start}"})
        for rule in rules.values():
            pieces = NEEDS.get(rule.code)
            if not pieces:
                continue
            ends = [t.established(p) for p in pieces]
            until = t.last[0] if any(e is None for e in ends) else max(ends) - 1
            if "wagers" in pieces:  # a seat joined again is judged again; the range is its widest
                until = t.last[0] if t._after("table_open") is None else \
                    max(until, t._after("table_open") - 1)
            entries.append({"rule": rule.id, "code": rule.code, "file": t.file,
                            "reason": f"log starts mid-session at seq {start}",
                            "table": t.key, "seq_from": start, "seq_to": until,
                            "until": ", ".join(_SAID[p] for p in pieces)})
    kept, pending = _dropped(findings, starts)
    # a rule is not evaluated at a log's end only where something was pending there
    for (key, rule_id), seqs in sorted(pending.items()):
        t, rule = starts[key], rules.get(rule_id)
        if rule is None:
            continue
        entries.append({"rule": rule.id, "code": rule.code, "file": t.last_file,
                        "reason": f"log ends mid-session at seq {t.last[0]}",
                        "table": t.key, "seq_from": min(seqs), "seq_to": t.last[0],
                        "until": "a procedure pending at the log's end is not judged"})
        for entry in tables:
            if entry["table"] == key and "ends_at" in entry:
                entry["pending"] = True
    return kept, entries, tables


def mid_session_line(tables: list[dict]) -> str:
    """One line for the terminal naming the tables whose log here starts or
    ends mid-session, or ""."""
    tables = [t for t in tables if "starts_at" in t or t.get("pending")]
    if not tables:
        return ""
    said = [f"{shown_table(t['table'])} starts at seq {t['starts_at']} ({t['first_event']}, "
            f"not table_open)" if "starts_at" in t else
            f"{shown_table(t['table'])} ends at seq {t['ends_at']} (no table_close: what "
            f"is pending there is not judged)"
            for t in tables]
    starts = any("starts_at" in t for t in tables)
    return ("MID-SESSION: " + "; ".join(said) + "." + (
        " Rules needing state from before a table's start are not evaluated there until "
        "it is established again." if starts else ""))


def _dropped(findings: pd.DataFrame, starts: dict[str, TableStart]
             ) -> tuple[pd.DataFrame, dict[tuple[str, str], list[int]]]:
    """`findings` less those of a rule needing a piece of state not yet
    established at the finding's table, seq and seat, and less those of a
    procedure pending at a log's end ((table, rule) -> their seqs)."""
    pending: dict[tuple[str, str], list[int]] = {}
    if not len(findings) or not any(t.starts_mid_session or t.ends_mid_session
                                    for t in starts.values()):
        return findings, pending
    keyed = joined_sites(findings[[c for c in ("table_id", "site") if c in findings]])
    tables = keyed["table_id"].astype(object).to_numpy()
    codes = findings["code"].astype(object).to_numpy()
    rule_ids = findings["rule_id"].astype(object).to_numpy()
    events = findings["event"].astype(object).to_numpy() if "event" in findings \
        else np.full(len(findings), None, dtype=object)
    seqs = findings["seq"].astype("Int64").to_numpy(dtype=np.float64, na_value=np.nan)
    seats = findings["seat"].astype("Int64").to_numpy(dtype=np.float64, na_value=np.nan) \
        if "seat" in findings else np.full(len(findings), np.nan)
    keep = np.ones(len(findings), dtype=bool)
    for i in range(len(findings)):
        t = starts.get(tables[i])
        pieces = NEEDS.get(codes[i])
        if t is None or np.isnan(seqs[i]):
            continue
        if t.pending_at_end(codes[i], seqs[i], events[i]):
            keep[i] = False
            pending.setdefault((t.key, rule_ids[i]), []).append(int(seqs[i]))
            continue
        if not pieces or not t.starts_mid_session:
            continue
        seat = None if np.isnan(seats[i]) else int(seats[i])
        for piece in pieces:
            since = t.established(piece, seat)
            if since is None or seqs[i] < since:
                keep[i] = False
                break
    return (findings if keep.all() else findings[keep].reset_index(drop=True)), pending
