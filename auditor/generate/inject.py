"""Planting violations into a lawful session.

Each requested code is planted once per table, at a random suitable place
(drawn with a seeded `random.Random`), by editing the rows of a lawful session
locally: a row is rewritten, moved, removed, or a few rows are inserted. The
game around the edit is left as it was, so planting one code does not cause
findings of other codes where that is avoidable (the settlements stay the
ones the dice decided, the shooter keeps a line bet, the set stays whole).
Different codes are planted at different rolls, offer rounds or sets.

How each code is planted, and the event its finding points at (`seq` in the
planted list):

| code | planted as | points at |
|---|---|---|
| `shooter.ineligible` | a `wager_removed` of the shooter's line bet just before a come-out roll that sets a point (so it does not decide that bet); the same bet is placed again after that roll's `settlement_complete` | the `roll` |
| `shooter.not_accepted` | a roll rewritten to be thrown by another seated player (who holds a line bet) while the shooter holds the dice; call and settlements unchanged | the `roll` |
| `shooter.kept_after_seven_out` | after a 7 Out's `settlement_complete`, before `shooter_relinquish`: the shooter places a pass bet, gets the dice back (stick), rolls a natural or craps (7, 11, 2, 3 or 12, so the table stays on the come-out), which is called, collected and settled | the second `roll` |
| `shooter.order_to_pass_unauthorised` | a voluntary `shooter_relinquish` rewritten as reason `ordered` with actor_role `dealer` | the `shooter_relinquish` |
| `offer.order` | in an offer round after a relinquishment whose first offer was declined, that offer and the decline are removed: the first offer goes to the second player in turn (never the outgoing shooter) | that `dice_offered` |
| `offer.incomplete_set` | an accepted offer names four of the five dice (the one left out is not one the shooter then selects; it goes to the bowl with the rest) | the `dice_offered` |
| `offer.wrong_role` | the first offer after a relinquishment is made by the boxperson | the `dice_offered` |
| `dice.set_size` | at a set replacement, before the new set arrives, a set of four dice (serials unused elsewhere) is received and removed again uninspected and unused | the 4-dice `dice_received` |
| `dice.not_inspected` | a replacement set is inspected only by a dealer (the game supervisor's and pit manager's inspections removed) and goes into the bowl and into play | its `dice_to_bowl` |
| `dice.not_in_bowl` | the `dice_to_bowl` after a shooter's selection in an offer round is removed | the `dice_selected` |
| `dice.stick_not_used` | a `dice_collected` with flags `no_stick` | the `dice_collected` |
| `dice.passed_before_settlement` | the `dice_to_shooter` of a roll that decided a pass/don't pass bet is moved to right after its `dice_collected`, before the settlements | the `dice_to_shooter` |
| `throw.two_hands` / `throw.not_simultaneous` / `throw.short` | the roll's flag `one_hand` / `simultaneous` / `far_end` replaced; the roll stands | the `roll` |
| `call.missing` | the roll's `total_called` removed; settlements unchanged | the `roll` |
| `call.wrong_total` | the `total_called` says one more (12: one less) than the dice; settlements match the dice | the `total_called` |
| `call.wrong_role` | the `total_called` (right total) by a dealer | the `total_called` |
| `noroll.missing` | a roll that decided a pass/don't pass bet also carries the flag `die_on_die`, with no `no_roll`; settled as before | the `roll` |
| `noroll.improper` | before a valid roll, a void roll flagged `chips_contact`, a `no_roll` (stickperson, reason `chips_contact`, `before_rest`), the dice collected and passed back with the stick | the `no_roll` |
| `noroll.late` | the same with a discretionary `no_roll` flagged `after_rest` | the `no_roll` |
| `noroll.wrong_role` | the same with a roll flagged `die_on_die` (void whoever says so) and a `no_roll` (reason `die_on_die`, `before_rest`) by a dealer | the `no_roll` |
| `dispute.wrong_role` | after a roll, a `dispute` of its first die and a `ruling` (face_determined, the face already recorded) by the stickperson | the `ruling` |
| `overrule.authority` | after a correct `total_called`, an `overrule` of the stickperson by a dealer | the `overrule` |
| `settle.wrong_outcome` | a pass bet that won is settled `lose` (amount 0) | the `wager_settled` |
| `settle.missing` | a pass/don't pass bet decided by a 7 Out (no `dice_to_shooter` follows, so the dice are not also passed before settlement) gets no `wager_settled`; the player takes it down (`wager_removed`) after the roll's `settlement_complete` | the `roll` |
| `log.sequence_gap` | one `seq` number skipped: every later event of the table is numbered one higher | the first event after the gap |
| `log.out_of_order` | one event's `ts` set between the two events before it (whole seconds), earlier than its predecessor's | that event |

The two `log.*` codes are applied by `auditor.generate` to the table's `seq`
and `ts` columns once the rows are final; the others edit rows here.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass

from auditor.generate.session import COL, NORMAL_THROW, POINTS, Sites, TableSim, set_letters

#: Codes this generator can plant, in the order they are planted (scarcest
#: suitable place first).
INJECTABLE: tuple[str, ...] = (
    "dice.set_size", "dice.not_inspected",
    "shooter.order_to_pass_unauthorised",
    "offer.order", "offer.wrong_role", "offer.incomplete_set", "dice.not_in_bowl",
    "shooter.kept_after_seven_out", "settle.wrong_outcome", "settle.missing",
    "shooter.ineligible", "shooter.not_accepted", "dice.passed_before_settlement",
    "noroll.missing",
    "throw.two_hands", "throw.not_simultaneous", "throw.short",
    "call.missing", "call.wrong_total", "call.wrong_role",
    "dice.stick_not_used", "noroll.improper", "noroll.late", "noroll.wrong_role",
    "dispute.wrong_role", "overrule.authority",
    "log.sequence_gap", "log.out_of_order",
)
LOG_CODES = ("log.sequence_gap", "log.out_of_order")


@dataclass
class Plan:
    """One planted violation: rows to put in place of existing rows
    ({row index: replacement rows}, [] deletes), and the row it points at
    as (index of an edited or untouched row, offset into its replacement)."""
    code: str
    edits: dict[int, list[tuple]]
    pointer: tuple[int, int]
    note: str


def _set(row: tuple, **values) -> tuple:
    """`row` with some columns changed."""
    out = list(row)
    for name, value in values.items():
        out[COL[name]] = value
    return tuple(out)


def _row(event: str, role=None, actor=None, seat=None, pid=None, **values) -> tuple:
    return _set((event, role, actor, seat, pid) + (None,) * 9, **values)


class _Ctx:
    """What planters need besides the site: the rows, staff ids, a seeded rng."""

    def __init__(self, sim: TableSim, rng: random.Random):
        self.rows = sim.rows
        self.sim = sim
        self.rng = rng
        self.dealer = sim.dealers[0]


# --- planters: (site, ctx) -> Plan, or None if the site does not suit -----

def _throw_flag(old: str, new: str, what: str) -> Callable:
    def plant(s, c: _Ctx) -> Plan:
        row = c.rows[s.roll]
        return Plan("", {s.roll: [_set(row, flags=NORMAL_THROW.replace(old, new))]},
                    (s.roll, 0), f"roll flagged {new}: {what}")
    return plant


def _call_missing(s, c):
    return Plan("", {s.roll + 1: []}, (s.roll, 0), f"roll of {s.total} never called")


def _call_wrong_total(s, c):
    wrong = s.total + 1 if s.total < 12 else 11
    return Plan("", {s.roll + 1: [_set(c.rows[s.roll + 1], total=wrong)]}, (s.roll + 1, 0),
                f"stickperson called {wrong}; the dice showed {s.total}")


def _call_wrong_role(s, c):
    row = _set(c.rows[s.roll + 1], actor_role="dealer", actor_id=c.dealer)
    return Plan("", {s.roll + 1: [row]}, (s.roll + 1, 0), f"total {s.total} called by a dealer")


def _stick_not_used(s, c):
    return Plan("", {s.roll + 2: [_set(c.rows[s.roll + 2], flags="no_stick")]}, (s.roll + 2, 0),
                "dice collected without the stick")


def _passed_before_settlement(s, c):
    if s.to_shooter < 0 or s.line_settlement is None:  # a line bet was settled
        return None
    edits = {s.roll + 2: [c.rows[s.roll + 2], c.rows[s.to_shooter]], s.to_shooter: []}
    return Plan("", edits, (s.roll + 2, 1),
                f"dice passed back before the {s.n_settled} settlement(s) of the roll")


def _settle_wrong_outcome(s, c):
    if s.pass_win < 0:
        return None
    row = c.rows[s.pass_win]
    return Plan("", {s.pass_win: [_set(row, outcome="lose", amount=0.0)]}, (s.pass_win, 0),
                f"seat {row[COL['seat']]}'s winning pass bet settled as lose")


def _settle_missing(s, c):
    # On a 7 Out the dice are not passed back, so the missing settlement is
    # not also a pass of the dice before settlement.
    if s.line_settlement is None or not s.seven_out:
        return None
    idx, seat, pid, bet, stake = s.line_settlement
    removed = _row("wager_removed", "player", pid, seat, pid, bet=bet, amount=stake)
    edits = {idx: [], s.complete: [c.rows[s.complete], removed]}
    return Plan("", edits, (s.roll, 0),
                f"seat {seat}'s {bet} bet decided by a roll of {s.total} never settled")


def _ineligible(s, c):
    # A come-out roll that sets a point: ineligible under every-roll and
    # come-out-only eligibility alike, and the bet it keeps is not decided.
    if s.line_bet is None or s.line_settled or s.point != 0 or s.total not in POINTS:
        return None
    removed = _row("wager_removed", "player", s.pid, s.seat, s.pid, bet=s.line_bet,
                   amount=s.line_stake)
    placed = _row("wager_placed", "player", s.pid, s.seat, s.pid, bet=s.line_bet,
                  amount=s.line_stake)
    edits = {s.roll: [removed, c.rows[s.roll]], s.complete: [c.rows[s.complete], placed]}
    return Plan("", edits, (s.roll, 1),
                f"shooter at seat {s.seat} took down the {s.line_bet} bet, then rolled")


def _not_accepted(s, c):
    if s.other is None:
        return None
    seat, pid = s.other
    row = _set(c.rows[s.roll], actor_id=pid, seat=seat, player_id=pid)
    return Plan("", {s.roll: [row]}, (s.roll, 0),
                f"seat {seat} rolled while seat {s.seat} was the shooter")


def _kept_after_seven_out(s, c):
    if not s.seven_out:
        return None
    d1, d2 = c.rng.choice(((3, 4), (2, 5), (1, 6), (5, 6), (1, 1), (1, 2), (6, 6)))
    t = d1 + d2
    stake = 10.0
    won = t in (7, 11)
    stick, dealer = c.sim.stick, c.sim.dealers[s.seat > 7]
    rows = [
        c.rows[s.complete],
        _row("wager_placed", "player", s.pid, s.seat, s.pid, bet="pass", amount=stake),
        _row("dice_to_shooter", "stickperson", stick, s.seat, dice=s.dice, flags="stick"),
        _row("roll", "player", s.pid, s.seat, s.pid, dice=s.dice, die1=d1, die2=d2,
             flags=NORMAL_THROW),
        _row("total_called", "stickperson", stick, total=t),
        _row("dice_collected", "stickperson", stick, dice=s.dice, flags="stick"),
        _row("wager_settled", "dealer", dealer, s.seat, s.pid, bet="pass",
             amount=stake if won else 0.0, outcome="win" if won else "lose"),
        _row("settlement_complete", "dealer", c.dealer),
    ]
    return Plan("", {s.complete: rows}, (s.complete, 3),
                f"shooter at seat {s.seat} rolled {t} after a 7 Out")


def _void_before(flag: str, reason: str, role: str, rest: str, note: str) -> Callable:
    """A void roll inserted before a valid roll (the shooter holds the dice
    either way); the game is unchanged."""
    def plant(s, c: _Ctx) -> Plan:
        stick = c.sim.stick
        actor = stick if role == "stickperson" else c.dealer
        d1, d2 = c.rng.randint(1, 6), c.rng.randint(1, 6)
        rows = [
            _set(c.rows[s.roll], die1=d1, die2=d2,
                 flags=NORMAL_THROW + ("," + flag if flag else "")),
            _row("no_roll", role, actor, reason=reason, flags=rest),
            _row("dice_collected", "stickperson", stick, dice=s.dice, flags="stick"),
            _row("dice_to_shooter", "stickperson", stick, s.seat, dice=s.dice, flags="stick"),
            c.rows[s.roll],
        ]
        return Plan("", {s.roll: rows}, (s.roll, 1), note)
    return plant


def _noroll_missing(s, c):
    if s.line_settlement is None:  # line bets were settled on it
        return None
    row = _set(c.rows[s.roll], flags=NORMAL_THROW + ",die_on_die")
    return Plan("", {s.roll: [row]}, (s.roll, 0),
                "roll flagged die_on_die was not voided and was settled")


def _dispute_wrong_role(s, c):
    roll = c.rows[s.roll]
    first = s.dice.split(",")[0]
    rows = [roll, _row("dispute", "player", s.pid, s.seat, s.pid, dice=first),
            _row("ruling", "stickperson", c.sim.stick, dice=first, die1=roll[COL["die1"]],
                 reason="face_determined")]
    return Plan("", {s.roll: rows}, (s.roll, 2), "face dispute decided by the stickperson")


def _overrule_authority(s, c):
    rows = [c.rows[s.roll + 1], _row("overrule", "dealer", c.dealer, reason="stickperson")]
    return Plan("", {s.roll + 1: rows}, (s.roll + 1, 1), "a dealer overruled the stickperson")


def _order_to_pass(idx, c):
    row = _set(c.rows[idx], actor_role="dealer", actor_id=c.dealer, reason="ordered")
    return Plan("", {idx: [row]}, (idx, 0),
                f"shooter at seat {row[COL['seat']]} ordered to pass the dice by a dealer")


def _offer_order(o, c):
    if not (o.after_relinquish and o.declined_first and o.second_seat != o.out_seat):
        return None
    return Plan("", {o.first: [], o.first + 1: []}, (o.first + 2, 0),
                f"first offer after seat {o.out_seat} relinquished went to seat "
                f"{o.second_seat}, skipping the player in turn")


def _offer_wrong_role(o, c):
    if not o.after_relinquish:
        return None
    row = _set(c.rows[o.first], actor_role="boxperson", actor_id=c.sim.box)
    return Plan("", {o.first: [row]}, (o.first, 0), "dice offered by the boxperson")


def _offer_incomplete(o, c):
    left_out = next(d for d in reversed(o.full_set) if d not in o.selected)
    dice = ",".join(d for d in o.full_set if d != left_out)
    row = _set(c.rows[o.accepted_offer], dice=dice)
    return Plan("", {o.accepted_offer: [row]}, (o.accepted_offer, 0),
                f"offer of {dice} left out {left_out}")


def _not_in_bowl(o, c):
    return Plan("", {o.accepted_offer + 3: []}, (o.accepted_offer + 2, 0),
                "the dice not selected were not returned to the bowl")


def _set_size(r, c):
    received = c.rows[r.received]
    prefix = set_letters(c.sim.sets_used)
    dice = ",".join(f"{prefix}{i}" for i in range(1, 5))
    rows = [_set(received, dice=dice),
            _row("dice_removed", "game_supervisor", c.sim.sup, dice=dice), received]
    return Plan("", {r.received: rows}, (r.received, 0),
                f"a set of 4 dice ({dice}) received at a set replacement")


def _not_inspected(r, c):
    # The game supervisor's and the pit manager's inspections are dropped.
    edits = {r.inspect_supervisor: [], r.inspect_supervisor + 1: []}
    return Plan("", edits, (r.to_bowl, 0),
                "replacement set put in the bowl after only a dealer's inspection")


ROLL, OFFER, REPLACE, VOLUNTARY = "roll", "offer", "replacement", "voluntary"

#: code -> (kind of site, planter)
PLANTERS: dict[str, tuple[str, Callable]] = {
    "dice.set_size": (REPLACE, _set_size),
    "dice.not_inspected": (REPLACE, _not_inspected),
    "shooter.order_to_pass_unauthorised": (VOLUNTARY, _order_to_pass),
    "offer.order": (OFFER, _offer_order),
    "offer.wrong_role": (OFFER, _offer_wrong_role),
    "offer.incomplete_set": (OFFER, _offer_incomplete),
    "dice.not_in_bowl": (OFFER, _not_in_bowl),
    "shooter.kept_after_seven_out": (ROLL, _kept_after_seven_out),
    "settle.wrong_outcome": (ROLL, _settle_wrong_outcome),
    "settle.missing": (ROLL, _settle_missing),
    "shooter.ineligible": (ROLL, _ineligible),
    "shooter.not_accepted": (ROLL, _not_accepted),
    "dice.passed_before_settlement": (ROLL, _passed_before_settlement),
    "noroll.missing": (ROLL, _noroll_missing),
    "throw.two_hands": (ROLL, _throw_flag("one_hand", "two_hands", "the roll stands")),
    "throw.not_simultaneous": (ROLL, _throw_flag("simultaneous", "not_simultaneous",
                                                 "the roll stands")),
    "throw.short": (ROLL, _throw_flag("far_end", "short", "the roll stands")),
    "call.missing": (ROLL, _call_missing),
    "call.wrong_total": (ROLL, _call_wrong_total),
    "call.wrong_role": (ROLL, _call_wrong_role),
    "dice.stick_not_used": (ROLL, _stick_not_used),
    "noroll.improper": (ROLL, _void_before("chips_contact", "chips_contact", "stickperson",
                                           "before_rest",
                                           "no roll declared for dice touching chips")),
    "noroll.late": (ROLL, _void_before("", "discretion", "stickperson", "after_rest",
                                       "no roll called after the dice came to rest")),
    "noroll.wrong_role": (ROLL, _void_before("die_on_die", "die_on_die", "dealer",
                                             "before_rest", "no roll declared by a dealer")),
    "dispute.wrong_role": (ROLL, _dispute_wrong_role),
    "overrule.authority": (ROLL, _overrule_authority),
}
assert set(PLANTERS) | set(LOG_CODES) == set(INJECTABLE)

#: How to steer a session that has no suitable place yet for a code.
NUDGES: dict[str, tuple[str, ...]] = {
    "dice.set_size": ("force_replace",),
    "dice.not_inspected": ("force_replace",),
    "shooter.order_to_pass_unauthorised": ("force_voluntary",),
    "offer.order": ("force_voluntary", "force_decline"),
    "offer.wrong_role": ("force_voluntary",),
}


def _candidates(kind: str, sites: Sites) -> list:
    return {ROLL: sites.rolls, OFFER: sites.offers, REPLACE: sites.replacements,
            VOLUNTARY: sites.voluntary}[kind]


def _key(kind: str, site) -> tuple:
    """Two codes never share a roll, an offer round, a set or a relinquishment."""
    if kind == ROLL:
        return (kind, site.roll)
    if kind == OFFER:
        return (kind, site.first)
    if kind == REPLACE:
        return (kind, site.received)
    return (kind, site)


def plan(codes: list[str], sim: TableSim, rng: random.Random) -> tuple[list[Plan], list[str]]:
    """Choose a place for every row-editing code in `codes` and plan its
    edits. Returns (plans, codes that found no suitable place yet)."""
    ctx = _Ctx(sim, rng)
    used_keys: set[tuple] = set()
    used_rows: set[int] = set()
    plans, missing = [], []
    for code in sorted((c for c in codes if c in PLANTERS), key=INJECTABLE.index):
        kind, planter = PLANTERS[code]
        cands = _candidates(kind, sim.sites)
        chosen = _pick(cands, kind, planter, ctx, used_keys, used_rows)
        if chosen is None:
            missing.append(code)
            continue
        key, p = chosen
        p.code = code
        used_keys.add(key)
        used_rows.update(p.edits)
        used_rows.add(p.pointer[0])
        plans.append(p)
    return plans, missing


def _pick(cands: list, kind: str, planter: Callable, ctx: _Ctx, used_keys: set,
          used_rows: set):
    """A random suitable site: a few random draws first (cheap on long
    sessions), then every site in a random order."""
    rng = ctx.rng

    def attempt(site):
        key = _key(kind, site)
        if key in used_keys:
            return None
        p = planter(site, ctx)
        if p is None or used_rows.intersection(p.edits) or p.pointer[0] in used_rows:
            return None
        return key, p

    for _ in range(min(64, len(cands))):
        got = attempt(cands[rng.randrange(len(cands))])
        if got is not None:
            return got
    for i in rng.sample(range(len(cands)), len(cands)):
        got = attempt(cands[i])
        if got is not None:
            return got
    return None


def nudge(sim: TableSim, missing: list[str]) -> None:
    """Steer the session towards the situations the missing codes need."""
    for code in missing:
        for flag in NUDGES.get(code, ()):
            setattr(sim, flag, True)
        if code == "offer.order":
            sim.min_players = max(sim.min_players, 3)


def apply(rows: list[tuple], plans: list[Plan]) -> tuple[list[tuple], list[tuple[Plan, int]]]:
    """The rows with every plan's edits in place, and each plan with the new
    index of the row it points at. One pass over the rows."""
    edits: dict[int, list[tuple]] = {}
    for p in plans:
        edits.update(p.edits)
    idxs = sorted(edits)
    shift = [0]
    out: list[tuple] = []
    prev = 0
    for i in idxs:
        out.extend(rows[prev:i])
        out.extend(edits[i])
        shift.append(shift[-1] + len(edits[i]) - 1)
        prev = i + 1
    out.extend(rows[prev:])
    pointed = []
    for p in plans:
        i, off = p.pointer
        pointed.append((p, i + shift[bisect_left(idxs, i)] + off))
    return out, pointed
