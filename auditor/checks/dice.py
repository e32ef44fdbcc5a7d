"""Dice custody checks: the set, its inspection, the bowl, the stick, and what
happens when a die leaves the table or is lost."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from auditor.checks.common import expand, next_after, searchsorted_ascending, written
from auditor.checks.parameters import position_roles
from auditor.checks.registry import Hits, Needs, check
from auditor.game.state import DIE_LOCATIONS

NEW, OFFERED = DIE_LOCATIONS.index("new"), DIE_LOCATIONS.index("offered")


@check("dice_set_size", "dice.set_size", ("dice_set_size", "dice_set_size_mode"))
def dice_set_size(ctx, params) -> Hits:
    """The set brought to the table is not the required number of dice.

    Parameters: `dice_set_size` (5) and `dice_set_size_mode` (`exact`, or
    `at_least` for "five or more").
    Fires on: a `dice_received` of four dice; five received, one removed (say
    after a failed inspection) and the four left put in the bowl.
    Quiet on: a set of five (or six where `at_least`); a die lost (rule 6.1
    and the lost-die procedure govern that).
    Points at: the `dice_received`, or the `dice_to_bowl` that leaves the
    table with a set shrunk to the wrong size.
    """
    size, exact = params["dice_set_size"], params["dice_set_size_mode"] == "exact"
    want = f"exactly {size}" if exact else f"at least {size}"
    bad: list[tuple[int, int, str]] = []
    for name, verb in (("received_count", "received"), ("bowl_set_count", "left in the set")):
        rows, counts = written(ctx, name)
        bad += [(r, c, verb) for r, c in zip(rows, counts)
                if (c != size if exact else c < size)]
    bad.sort()
    return Hits(np.asarray([r for r, _, _ in bad], dtype=np.int64),
                [f"set of {c} dice {verb}; the rules require {want}" for _, c, verb in bad],
                [{"dice_in_set": c, "required": want} for _, c, _ in bad])


def _position_groups(params, name: str) -> list[list[str]]:
    """The inspection groups of parameter `name`, each read with
    `position_roles` (a boxperson stands for the game supervisor and back)."""
    return [position_roles(g, params["boxperson_is_game_supervisor"]) for g in params[name]]


def _satisfies(inspections: list, groups: list[list[str]]) -> bool:
    """One passing inspection by a role of each group, each by a different
    person (a person is the actor_id, or the role where no id was recorded)."""
    used: set[str] = set()
    for group in groups:
        found = False
        for role, actor in inspections:
            who = actor or f"<{role}>"
            if role in group and who not in used:
                used.add(who)
                found = True
                break
        if not found:
            return False
    return True


def _first_uses(ctx, found: bool) -> list:
    """(row, dice) of first uses of received (or found) dice; split once per
    audit, both ways in one pass, for the two checks that read them."""
    memo = ctx.shared._memo
    got = memo.get(("first_uses", found))
    if got is None:
        rows, records = written(ctx, "first_use")
        split: dict[bool, list] = {True: [], False: []}
        for r, record in zip(rows, records):
            received = [d for d in record if not d["found"]]
            if received:
                split[False].append((r, received))
            if len(received) < len(record):
                split[True].append((r, [d for d in record if d["found"]]))
        memo[("first_uses", True)], memo[("first_uses", False)] = split[True], split[False]
        got = split[found]
    return got


def _inspected_as_required(groups: list[list[str]]):
    """`_satisfies` against `groups`, worked out once per distinct record of
    inspections (the dice of a set share theirs)."""
    verdicts: dict[tuple, bool] = {}

    def satisfied(inspections: list) -> bool:
        key = tuple(map(tuple, inspections))
        ok = verdicts.get(key)
        if ok is None:
            ok = verdicts[key] = _satisfies(inspections, groups)
        return ok
    return satisfied


@check("dice_inspected_before_use", "dice.not_inspected",
       ("new_dice_inspections", "boxperson_is_game_supervisor"))
def dice_inspected_before_use(ctx, params) -> Hits:
    """A set went into the bowl or into play without the required inspections.

    Parameters: `new_dice_inspections`, e.g. `[["dealer"], ["game_supervisor"]]`
    (a dealer and the game supervisor, independently: two different people);
    `boxperson_is_game_supervisor` (either name of that position accepts both).
    Fires on: a set received and inspected only by a dealer, then put in the
    bowl.
    Quiet on: the same set inspected also by the game supervisor first; a die
    that was inspected and failed (that is `dice.failed_inspection_used`).
    Points at: the first `dice_to_bowl` (or first use) of the uninspected dice.
    Found dice are the off-table procedure's concern (`off_table_procedure`).
    """
    groups = _position_groups(params, "new_dice_inspections")
    satisfied = _inspected_as_required(groups)
    out, messages, evidence = [], [], []
    for r, dice in _first_uses(ctx, found=False):
        # A die inspected and failed was inspected: using it is the failed
        # inspection's breach, not this one.
        bad = [d for d in dice if not d["failed"] and not satisfied(d["inspections"])]
        if bad:
            out.append(r)
            names = ", ".join(d["die"] for d in bad)
            messages.append(f"die(s) {names} used without the required inspections "
                            f"({' and '.join('/'.join(g) for g in groups)})")
            evidence.append({"dice": [{"die": d["die"], "inspections": d["inspections"]}
                                      for d in bad]})
    return Hits(np.asarray(out, dtype=np.int64), messages, evidence)


@check("failed_die_unused", "dice.failed_inspection_used")
def failed_die_unused(ctx, params) -> Hits:
    """A die that failed an inspection was put in the bowl, offered or used.

    Fires on: `dice_inspected` outcome `fail` for die A3, then A3 in a
    `dice_to_bowl`.
    Quiet on: the failed die removed with `dice_removed` and never used.
    Points at: each event that puts the failed die in the bowl or in play.
    """
    rows, dice = _failed_dice_used(ctx)
    return Hits(rows, [f"die(s) {', '.join(d)} failed inspection but were used" for d in dice],
                [{"dice": d} for d in dice])


#: Events that put dice in the bowl or in play (where a failed die is a breach).
_DICE_USES = ("dice_to_bowl", "dice_to_shooter", "dice_offered", "dice_selected", "roll")


def _failed_dice_used(ctx) -> tuple[np.ndarray, list[list[str]]]:
    """Rows that put a failed die in the bowl or in play, and those dice (in
    the row's order). A die is the one the table last received under its
    serial in the session (a set received again is new dice); it failed if an
    inspection with outcome `fail` named it after that receipt. Worked out
    per (session, serial) over the few rows naming a serial that ever failed."""
    sh = ctx.shared
    inspected = sh.event_rows("dice_inspected")
    fails = inspected[sh.is_in("outcome", ("fail",), inspected)]
    if not len(fails):
        return np.empty(0, dtype=np.int64), []
    codes = sh.codes("dice")
    failed = sorted({x for c in np.unique(codes[fails]).tolist() for x in _named(sh, c)})
    sid = {x: j for j, x in enumerate(failed)}
    # Per dice value (code): the positions and ids of the serials that ever failed.
    names = sh.category_hits("dice", ("failed_serials", tuple(failed)),
                             lambda text: any(x in sid for x in text.split(",")))
    received, used = sh.event_rows("dice_received"), sh.event_rows(*_DICE_USES)
    parts = [(rows[names[codes[rows]]], kind)
             for rows, kind in ((received, 0), (fails, 1), (used, 2))]
    rows = np.concatenate([r for r, _ in parts])
    kind = np.concatenate([np.full(len(r), k, dtype=np.int8) for r, k in parts])
    # One entry per (row, serial that failed somewhere), with its position in the row.
    per_code = {c: [(j, sid[x]) for j, x in enumerate(_named(sh, c)) if x in sid]
                for c in np.unique(codes[rows]).tolist()}
    counts = np.fromiter((len(per_code[c]) for c in codes[rows].tolist()), dtype=np.int64,
                         count=len(rows))
    flat = [pair for c in codes[rows].tolist() for pair in per_code[c]]
    pos = np.fromiter((j for j, _ in flat), dtype=np.int64, count=len(flat))
    serial = np.fromiter((x for _, x in flat), dtype=np.int64, count=len(flat))
    row, kind = np.repeat(rows, counts), np.repeat(kind, counts)
    session = np.searchsorted(sh.session_starts, row, side="right") - 1
    order = np.lexsort((pos, row, serial, session))
    row, kind, serial, session, pos = (a[order] for a in (row, kind, serial, session, pos))
    group = np.cumsum(np.r_[True, (serial[1:] != serial[:-1]) | (session[1:] != session[:-1])]) \
        if len(row) else np.empty(0, dtype=np.int64)
    span = sh.n + 2  # running maxima per group: offset each group above the last

    def last(k):
        return np.maximum.accumulate(np.where(kind == k, row, -1) + group * span) - group * span

    got = (kind == 2) & (last(0) >= 0) & (last(1) > last(0))
    hit_rows, hit_pos, hit_serial = row[got], pos[got], serial[got]
    order = np.lexsort((hit_pos, hit_rows))
    hit_rows, hit_serial = hit_rows[order], hit_serial[order]
    out, first = np.unique(hit_rows, return_index=True)
    listed = hit_serial.tolist()
    return out.astype(np.int64), [[failed[x] for x in listed[a:b]]
                                  for a, b in pairwise([*first.tolist(), len(listed)])]


def _named(sh, code: int) -> list[str]:
    """The serials dice value `code` names (-1: none)."""
    values = sh.dice_values
    start = values.starts[code]
    return [values.serials[x] for x in values.ids[start:start + values.counts[code]].tolist()]


@check("dice_returned_to_bowl", "dice.not_in_bowl")
def dice_returned_to_bowl(ctx, params) -> Hits:
    """Dice not chosen by the shooter were not returned to the bowl before
    the roll.

    Fires on: `dice_selected` of two dice, then a roll with no `dice_to_bowl`
    of the other three; or the session ends (`table_close`, the next
    `table_open`) with them still out: the return is owed on the choice (seed
    000 5.4), whether or not a roll follows. A log that ends without
    `table_close` ends mid-session: a return still owed there is not judged
    (`auditor.audit.midsession`).
    Quiet on: the other three returned with `dice_to_bowl` before the roll.
    Points at: the `dice_selected` after which the rest were not returned.
    """
    rows, stray = _rest_not_in_bowl(ctx)
    return Hits(rows, [f"die(s) {', '.join(s)} not returned to the bowl after the shooter "
                       f"chose" for s in stray], [{"dice_not_in_bowl": s} for s in stray])


def _rest_not_in_bowl(ctx) -> tuple[np.ndarray, list[list[str]]]:
    """The `dice_selected` rows after which dice stayed out of the bowl, and
    those dice (sorted). A choice is judged where the next roll, the
    `table_close` or the end of its session comes, unless the shooter chose
    again before that: the dice still offered then, and those of the set
    last received not yet moved since, are out. Worked out over the moves to
    `new` or `offered`: each leaves its die there up to the die's next move."""
    sh, moves = ctx.shared, ctx.state.dice_moves
    chosen = sh.event_rows("dice_selected")
    judged_at = np.minimum.reduce([sh.next_event(chosen, "roll"),
                                   next_after(sh.event_rows("table_close"), chosen, sh.n),
                                   sh.session_end(chosen)])
    judged = next_after(chosen, chosen, sh.n) >= judged_at
    chosen, judged_at = chosen[judged], judged_at[judged]
    since = sh.session_start(chosen)
    received = sh.event_rows("dice_received")
    current_set = np.searchsorted(received, judged_at) - np.searchsorted(received, since)
    # Each move to new or offered, and the choices judged while it holds:
    # after the move, up to the die's next move, within the session.
    out = np.flatnonzero((moves.where == NEW) | (moves.where == OFFERED))
    lo = searchsorted_ascending(judged_at, moves.rows[out], side="right")
    k, judge = expand(lo, np.searchsorted(judged_at, moves.until()[out], side="right") - lo)
    move = out[k]
    stray = (since[judge] <= moves.rows[move]) & (
        (moves.where[move] == OFFERED) | (moves.set_id[move] == current_set[judge]))
    move, judge = move[stray], judge[stray]
    found: dict[int, list[str]] = {}
    for j, die in zip(judge.tolist(), moves.die[move].tolist()):
        found.setdefault(j, []).append(moves.serials[die])
    rows = sorted(found)
    return chosen[rows].astype(np.int64) if rows else np.empty(0, dtype=np.int64), \
        [sorted(found[j]) for j in rows]


@check("shooter_selection", "dice.shooter_selection")
def shooter_selection(ctx, params) -> Hits:
    """The shooter did not choose and keep exactly two dice, or rolled dice
    other than the ones chosen.

    Fires on: `dice_selected` of three dice; a roll of A1,A4 after choosing
    A1,A2.
    Quiet on: two dice chosen and those two rolled.
    Points at: the `dice_selected`, or the roll of other dice.
    """
    sel_rows, chosen = written(ctx, "selected_dice")
    counts = np.fromiter(map(len, chosen), dtype=np.int64, count=len(chosen))
    bad = counts != 2
    found = {r: f"shooter chose {c} dice, not 2"
             for r, c in zip(sel_rows[bad].tolist(), counts[bad].tolist())}
    evid = {r: {"chosen_count": c}
            for r, c in zip(sel_rows[bad].tolist(), counts[bad].tolist())}
    roll_rows, chosen = _rolled_not_chosen(ctx)
    dice = ctx.shared.values_at("dice", roll_rows)
    for r, ch, rolled in zip(roll_rows.tolist(), chosen, dice):
        found[r] = f"rolled {rolled} but had chosen {','.join(ch)}"
        evid[r] = {"chosen": ch, "rolled": rolled}
    rows = sorted(found)
    return Hits(np.asarray(rows, dtype=np.int64), [found[r] for r in rows],
                [evid[r] for r in rows])


def _rolled_not_chosen(ctx) -> tuple[np.ndarray, list[list[str]]]:
    """The shooter's rolls of a die outside the ones they chose, and the
    chosen dice: the choice is the latest `dice_selected` since the dice
    were last accepted or relinquished (or the session began). Judged once
    per distinct (choice, dice rolled)."""
    sh = ctx.shared
    chosen_rows, chosen = written(ctx, "selected_dice")
    if not len(chosen_rows):
        return np.empty(0, dtype=np.int64), []
    # A roll naming the very dice of the table's latest choice rolls chosen
    # dice (if that choice holds); the others are few.
    rows, codes = sh.event_rows("roll"), sh.codes("dice")
    latest = np.maximum(searchsorted_ascending(chosen_rows, rows) - 1, 0)
    rows = rows[codes.take(rows) != codes.take(chosen_rows.take(latest))]
    rows = rows[sh.written_at("roll_by_shooter", rows)]  # (written on every player's roll)
    rows = rows[sh.int_at("seat", rows) == ctx.state["shooter"][rows]]
    if not len(rows):
        return rows, []
    choice = sh.latest(chosen_rows, rows, resets=np.concatenate([sh.event_rows(e) for e in (
        "dice_accepted", "shooter_relinquish", "table_open")]))
    rows, choice = rows[choice >= 0], np.searchsorted(chosen_rows, choice[choice >= 0])
    width = len(sh.dice_values.counts)
    rolled = codes[rows].astype(np.int64) % width  # (-1: the last, no dice)
    pairs, inverse = np.unique(choice * width + rolled, return_inverse=True)
    bad = np.fromiter((not set(_named(sh, p % width)).issubset(chosen[p // width])
                       for p in pairs.tolist()), dtype=bool, count=len(pairs))
    hit = bad[inverse.reshape(-1)]
    return rows[hit], [chosen[c] for c in choice[hit].tolist()]


@check("known_dice_only", "dice.unknown_die")
def known_dice_only(ctx, params) -> Hits:
    """A die that is not part of the set at the table was chosen or rolled.

    Fires on: a roll of die Z9 never received, or of a die already removed or
    lost.
    Quiet on: rolls of dice of the set at the table.
    Points at: the `dice_selected` or roll.
    """
    rows, dice = written(ctx, "dice_not_at_table")
    return Hits(rows, [f"die(s) {', '.join(d)} not part of the set at the table"
                       for d in dice], [{"dice": d} for d in dice])


@check("stick_used", "dice.stick_not_used", needs=Needs(columns=("flags",)))
def stick_used(ctx, params) -> Hits:
    """The stickperson collected the dice or passed them to the shooter
    without the craps stick.

    Fires on: `dice_collected` or `dice_to_shooter` with flag `no_stick`.
    Quiet on: flag `stick`. A row with neither flag is not a finding: the log
    did not record it (documented choice).
    Points at: the collection or pass.
    """
    sh = ctx.shared
    rows = sh.event_rows("dice_collected", "dice_to_shooter")
    rows = rows[sh.flag("no_stick", rows)]
    return Hits(rows, [("dice collected" if ev == "dice_collected"
                        else "dice passed to the shooter") + " without the craps stick"
                       for ev in sh.values_at("event", rows)])


@check("settle_before_pass", "dice.passed_before_settlement")
def settle_before_pass(ctx, params) -> Hits:
    """The dice went back to the shooter before the wagers decided by the
    roll were settled.

    Fires on: `dice_to_shooter` while a pass bet the roll decided is still
    unsettled, or followed by settlements of that roll.
    Quiet on: settlements, `settlement_complete`, then `dice_to_shooter`.
    Points at: the `dice_to_shooter`.
    """
    unsettled_rows, owed = written(ctx, "passed_unsettled")
    later_rows = _passed_then_settled(ctx).tolist()
    found: dict[int, dict] = {}
    for r, o in zip(unsettled_rows, owed):
        found[r] = {"unsettled": o}
    for r in later_rows:
        found.setdefault(r, {})["settlement_after_pass"] = True
    rows = sorted(found)
    return Hits(np.asarray(rows, dtype=np.int64),
                ["dice passed to the shooter before the roll's wagers were settled"] * len(rows),
                [found[r] for r in rows])


def _passed_then_settled(ctx) -> np.ndarray:
    """`dice_to_shooter` rows followed by a settlement (`wager_settled` or
    `settlement_complete`) before the next roll of their session."""
    sh = ctx.shared
    passed = sh.event_rows("dice_to_shooter")
    # the first roll, session start or settlement after each pass, if in its table
    ahead = sh.next_event(passed, "roll", "table_open", *_SETTLEMENTS)
    settled = ahead < sh.table_end(passed)
    settled[settled] = sh.is_in("event", _SETTLEMENTS, ahead[settled])
    return passed[settled]


_SETTLEMENTS = ("wager_settled", "settlement_complete")


@check("off_table_procedure", "dice.off_table_procedure",
       ("found_die_inspections", "boxperson_is_game_supervisor"))
def off_table_procedure(ctx, params) -> Hits:
    """After a die left the table the shooter was not offered the remaining
    dice, or a found die came back without the required inspection.

    Parameters: `found_die_inspections` (`[["game_supervisor"]]`);
    `boxperson_is_game_supervisor` (either name of that position accepts both).
    Fires on: `die_off_table`, then the shooter rolls (or the table closes
    and opens again) with no `dice_offered` to them first; a `die_retrieved`
    die put in the bowl without a game supervisor's passing inspection.
    Quiet on: the remaining dice offered to the shooter, and the found die
    inspected by the game supervisor before it returns; a die that leaves the
    table while there is no shooter (no offer is owed to anyone); a found die
    that was inspected and failed (that is `dice.failed_inspection_used`).
    Points at: the `die_off_table` (missing offer), or the event that returns
    the found die.
    """
    found: dict[int, tuple[str, dict]] = {}
    off_rows, shooters = ctx.shared.sparse("offtable_shooter")
    # With no shooter (a stickperson's throw, a die dropped before anyone
    # accepted the dice) there is nobody to offer the remaining dice to.
    has_shooter = shooters != 0 if shooters.dtype != object else \
        np.fromiter((bool(s) for s in shooters), dtype=bool, count=len(shooters))
    off_rows = off_rows[has_shooter]
    for r in off_rows[~_replacement_offer_after(ctx, off_rows)].tolist():
        found[r] = (("the remaining dice were not offered to the shooter after a die "
                     "left the table"), {})
    groups = _position_groups(params, "found_die_inspections")
    satisfied = _inspected_as_required(groups)
    for r, dice in _first_uses(ctx, found=True):
        bad = [d for d in dice if not d["failed"] and not satisfied(d["inspections"])]
        if bad:
            found[r] = ((f"found die {', '.join(d['die'] for d in bad)} returned without "
                         f"inspection by {' and '.join('/'.join(g) for g in groups)}"),
                        {"dice": bad})
    rows = sorted(found)
    return Hits(np.asarray(rows, dtype=np.int64), [found[r][0] for r in rows],
                [found[r][1] for r in rows])


def _replacement_offer_after(ctx, off: np.ndarray) -> np.ndarray:
    """For each `die_off_table` row, whether a replacement offer to the
    shooter came before the next roll of its session (the next `table_open`
    ends the procedure: a later session's offer answers its own die)."""
    sh = ctx.shared
    rows, rounds = sh.sparse("offer_round")
    offers = rows[rounds == 2]
    limit = np.minimum(next_after(sh.event_rows("roll"), off, sh.n), sh.session_end(off))
    return next_after(offers, off, sh.n) < limit


@check("lost_die_procedure", "dice.lost_die_procedure", ("lost_dice_for_new_set",))
def lost_die_procedure(ctx, params) -> Hits:
    """After a die was lost: no new set placed, the old set's remaining dice
    not removed, or the old set used beyond the shooter's allowance.

    Parameter: `lost_dice_for_new_set` (1; 2 where only the loss of two dice
    calls for a new set).
    Fires on: `die_lost`, the shooter sevens out, and the next shooter rolls
    with no `dice_received` of a new set, or with old-set dice; or the session
    ends (`table_close`, the next `table_open`) with no new set placed or the
    old dice still on the table (a log that ends without `table_close` ends
    mid-session: the procedure still pending there is not judged).
    Quiet on: a new set received and inspected, the old remaining dice removed,
    while the shooter finishes with the old dice until the 7 Out (a 7 voided
    by a no roll or a void ruling is no 7 Out).
    Points at: the `die_lost` (new set / removal missing), or the roll that
    used old dice beyond the allowance.
    """
    need = params["lost_dice_for_new_set"]
    found: dict[int, tuple[str, dict]] = {}
    rows, follow = written(ctx, "lost_followup")
    for r, f in zip(rows, follow):
        if f["lost_count"] < need:
            continue
        why = []
        if not f["new_set_received"]:
            why.append("no new set was placed on the table")
        if f["old_dice_not_removed"]:
            why.append(f"old dice {', '.join(f['old_dice_not_removed'])} not removed")
        if why:
            found[r] = ("after a die was lost: " + "; ".join(why), f)
    used_rows, used = written(ctx, "old_set_used")
    for r, u in zip(used_rows, used):
        if u["lost_count"] >= need:
            found[r] = ((f"old-set dice {', '.join(u['dice'])} used after the shooter's "
                         "allowance ended"), u)
    out = sorted(found)
    return Hits(np.asarray(out, dtype=np.int64), [found[r][0] for r in out],
                [found[r][1] for r in out])
