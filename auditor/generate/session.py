"""The lawful game: one craps table's session, played by the rules, as rows of
the event log.

Why a simulation and not templates: the auditor replays the game (the point,
every line and come bet, where each die is, whose turn it is to be offered
the dice), so a log is lawful only if it comes from actually playing the game.
`TableSim` keeps just the state that needs and writes each event as one plain
tuple in the column order `ROW_COLUMNS` (`table_id`, `seq` and `ts` are added
when the rows become an Arrow table). Tuples appended to one list keep the
hot loop lean: no dict per event, no pandas.

What a session looks like (every choice is drawn from the table's own seeded
`random.Random`, so a seed gives the same log on every run and machine):

- Opening: `table_open`, `staff_on` for the stickperson, two dealers, the
  boxperson and the game supervisor, `dice_received` of five dice (`A1..A5`;
  replacement sets `B1..B5`, ..., `Z`, `AA`, ...), inspected (pass) by a
  dealer, the game supervisor and a pit manager, then `dice_to_bowl`.
- Players join at seats 1..14; every seated player holds a pass or don't
  pass bet before any offer round, so the offer rules that skip players
  without a line bet and those that offer to everyone agree.
- Offer rounds: the whole set, first to the lowest occupied seat (start of
  play) or to the next occupied seat clockwise from the outgoing shooter, on
  clockwise after each `dice_declined`. Someone other than the outgoing
  shooter always accepts. The shooter selects two dice; the rest go to the
  bowl.
- Each valid roll: `roll` (flags `one_hand,simultaneous,far_end`),
  `total_called`, `dice_collected` (stick), one `wager_settled` per wager
  the roll decided (line bets by the spec's rules, bar 12 on don't bets, a
  push settlement written half the time), `settlement_complete`, new wagers,
  then `dice_to_shooter` (stick) unless it was a 7 Out. A 7 Out, or now and
  then a voluntary pass, ends the hand: `shooter_relinquish`, players come and
  go, sometimes a new set replaces the old one, line bets, a new offer round.
- Rare lawful irregularities (about 1 roll in 50 each): a die off the table
  (void roll, remaining dice offered to the shooter, the die found, inspected
  by the game supervisor and the boxperson and put back in the bowl after the
  next valid roll),
  a cocked die (the roll records the counted face), a discretionary no roll.
"""

from __future__ import annotations

import random
from bisect import bisect_right, insort
from collections.abc import Iterator
from dataclasses import dataclass, field

from auditor.logs.schema import COLUMN_NAMES, POINT_NUMBERS

#: The columns of a row tuple: everything after table_id, seq and ts.
ROW_COLUMNS: tuple[str, ...] = COLUMN_NAMES[3:]
# The hot paths below write tuples positionally; fail loudly if the schema's
# column order ever changes instead of writing values into the wrong columns.
assert ROW_COLUMNS == (
    "event", "actor_role", "actor_id", "seat", "player_id", "dice", "die1", "die2",
    "total", "bet", "amount", "outcome", "reason", "flags",
), ROW_COLUMNS
COL = {name: i for i, name in enumerate(ROW_COLUMNS)}

NORMAL_THROW = "one_hand,simultaneous,far_end"
POINTS = frozenset(POINT_NUMBERS)
SEATS = range(1, 15)

# How often things happen; chosen to look like a table, not tuned for anything.
P_DISCRETION = 0.02     # a discretionary no roll
P_OFF_TABLE = 0.02      # a die leaves the table
P_COCKED = 0.02         # a cocked die
P_VOLUNTARY = 0.02      # the shooter passes the dice after a roll
P_DECLINE = 0.25        # a player declines the offered dice
P_RELINE = 0.85         # a non-shooter makes a new line bet after a decision
P_LEAVE = 0.2           # per hand boundary
P_JOIN = 0.25           # per hand boundary
P_REPLACE = 0.08        # a new set of dice, per hand boundary
MAX_PLAYERS = 10
LINE_STAKES = (5.0, 10.0, 10.0, 25.0, 25.0, 100.0)


def set_letters(k: int) -> str:
    """The serial prefix of the table's k-th set (0 -> A, 25 -> Z, 26 -> AA),
    so serials stay unique however many sets a long session uses."""
    out = ""
    k += 1
    while k:
        k, r = divmod(k - 1, 26)
        out = chr(65 + r) + out
    return out


def _decision_tables() -> dict[int, list[dict[str, tuple]]]:
    """What a total decides: DECIDE[point][total] is {bet name: decision} for
    the bets that total decides with the table at `point` (0 = come-out).
    A decision is ("win", payout per unit staked), ("lose", 0), ("push", 0),
    ("travel", new bet name) or ("hard", 0) for the hard 8. The settlement
    loop only looks bets up: no arithmetic on rules per roll."""
    def line(point: int, dont: bool) -> list:
        row: list = [None] * 13
        for t in range(2, 13):
            if point == 0:
                win = t in (7, 11)
                lose = t in (2, 3, 12)
            else:
                win, lose = t == point, t == 7
            if dont:
                win, lose = lose, win
                if point == 0 and t == 12:
                    win = lose = False
                    row[t] = ("push", 0)
            if win:
                row[t] = ("win", 1)
            elif lose:
                row[t] = ("lose", 0)
        return row

    tables: dict[int, list[dict[str, tuple]]] = {}
    for p in (0, *POINT_NUMBERS):
        tab = {"pass": line(p, False), "dont_pass": line(p, True)}
        come, dont_come = line(0, False), line(0, True)
        for n in POINT_NUMBERS:
            come[n] = ("travel", f"come_{n}")
            dont_come[n] = ("travel", f"dont_come_{n}")
            tab[f"come_{n}"] = line(n, False)
            tab[f"dont_come_{n}"] = line(n, True)
        tab["come"], tab["dont_come"] = come, dont_come
        field_row: list = [("lose", 0)] * 13
        for t in (3, 4, 9, 10, 11):
            field_row[t] = ("win", 1)
        field_row[2], field_row[12] = ("win", 2), ("win", 3)
        tab["field"] = field_row
        place, hard = [None] * 13, [None] * 13
        if p:  # place and hardway bets are off on the come-out roll
            place[6], place[7] = ("win", 7 / 6), ("lose", 0)
            hard[7], hard[8] = ("lose", 0), ("hard", 0)
        tab["place_6"], tab["hard_8"] = place, hard
        tables[p] = [{bet: row[t] for bet, row in tab.items() if row[t] is not None}
                     for t in range(13)]
    return tables


DECIDE = _decision_tables()


@dataclass(slots=True)
class RollSite:
    """A valid roll, described for the planter (row indexes into `rows`)."""
    roll: int
    complete: int
    to_shooter: int          # -1 after a 7 Out
    seven_out: bool
    point: int               # the table's point before the roll (0 = come-out)
    seat: int
    pid: str
    dice: str
    total: int
    line_bet: str | None     # the shooter's line bet at the roll
    line_stake: float
    line_settled: bool       # the roll settled (or pushed) the shooter's line bet
    pass_win: int            # row of a pass `win` settlement, or -1
    line_settlement: tuple | None  # (row, seat, pid, bet, stake): a line bet won/lost
    other: tuple | None      # (seat, pid): another player holding a line bet
    n_settled: int


@dataclass(slots=True)
class OfferSite:
    """An offer round."""
    first: int               # row of its first dice_offered
    after_relinquish: bool
    out_seat: int
    declined_first: bool
    second_seat: int         # seat of the second offer (0 if none)
    accepted_offer: int      # row of the dice_offered that was accepted
    selected: tuple[str, str]
    full_set: tuple[str, ...]


@dataclass(slots=True)
class ReplaceSite:
    """A lawful set replacement: the rows of the new set's arrival."""
    received: int
    inspect_supervisor: int  # the pit manager's inspection is the next row
    to_bowl: int


@dataclass
class Sites:
    """Where each kind of violation could be planted, recorded while playing
    (only when something is to be planted; recording never draws a random
    number, so the game is the same with or without it)."""
    rolls: list[RollSite] = field(default_factory=list)
    offers: list[OfferSite] = field(default_factory=list)
    replacements: list[ReplaceSite] = field(default_factory=list)
    voluntary: list[int] = field(default_factory=list)


class TableSim:
    """One table's session. `open()`, then `run(rolls)` (callable again to
    play on), then `close()`; the log is `rows`."""

    def __init__(self, number: int, seed: int | str, offer_role: str,
                 player_numbers: Iterator[int], record_sites: bool = False):
        self.table_id = f"T{number:02d}"
        self.rng = random.Random(f"craps-generate/{seed}/{number}")
        self.rows: list[tuple] = []
        n = f"{number:02d}"
        self.stick, self.box, self.sup = "K" + n, "B" + n, "S" + n
        self.dealers = ("D" + n + "a", "D" + n + "b")  # each works one half of the table
        self.pit = f"M{(number - 1) // 4 + 1:02d}"
        self.guard = "G01"
        self.offer_role = offer_role
        self._player_numbers = player_numbers
        self.seats: dict[int, str] = {}        # seat -> player_id
        self.order: list[int] = []             # occupied seats, ascending
        self.wagers: dict[int, dict[str, float]] = {}
        self.pref: dict[int, tuple[str, float]] = {}  # seat -> (line bet, stake)
        self.point = 0
        self.shooter = 0
        self.pair: tuple[str, str] = ("", "")
        self.pair_text = ""
        self.dice_set: list[str] = []
        self.sets_used = 0
        self.off_die: str | None = None        # off the table, not yet retrieved
        self.valid_rolls = 0
        self.sites = Sites() if record_sites else None
        # Nudges used only to reach a situation an injection needs.
        self.force_voluntary = False
        self.force_replace = False
        self.force_decline = False
        self.min_players = 2
        # A leaning die (`dice.face_bias`): with chance `lean` (fair: 0) it
        # shows the higher of two fair draws, its partner untouched (the
        # total is what the game then plays); the set is replaced only when
        # an injection forces it, so the die serves the whole session.
        self.lean_die: str | None = None
        self.lean = 0.0

    # --- small writers for the cold paths ---------------------------------

    def _ev(self, event: str, role: str | None = None, actor: str | None = None,
            seat: int | None = None, pid: str | None = None, dice: str | None = None,
            **rest) -> None:
        """Append one event by column name; for events that are not per roll."""
        row = [event, role, actor, seat, pid, dice, None, None, None, None, None, None,
               None, None]
        for name, value in rest.items():
            row[COL[name]] = value
        self.rows.append(tuple(row))

    def _player_ev(self, event: str, seat: int, **rest) -> None:
        """An event done by the player at `seat` (actor_id = player_id)."""
        pid = self.seats[seat]
        self._ev(event, "player", pid, seat, pid, **rest)

    # --- the table --------------------------------------------------------

    def open(self) -> None:
        """Open the table: staff, an inspected set in the bowl, players with
        line bets, and the start-of-play offer round."""
        self._ev("table_open", "game_supervisor", self.sup)
        for role, actor in (("stickperson", self.stick), ("dealer", self.dealers[0]),
                            ("dealer", self.dealers[1]), ("boxperson", self.box),
                            ("game_supervisor", self.sup)):
            self._ev("staff_on", role, actor)
        self._new_set(replacement=False)
        for _ in range(self.rng.randint(3, 7)):
            self._join()
        self._line_bets_for_all()
        self._offer_round(None)

    def close(self) -> None:
        """End play; a die still off the table is found first, so the set is
        whole when the table closes."""
        if self.off_die is not None:
            self._retrieve()
        self._ev("table_close", "game_supervisor", self.sup)

    def run(self, rolls: int) -> None:
        """Play until the table has made `rolls` valid rolls in all."""
        turn = self._turn
        while self.valid_rolls < rolls:
            turn()

    # --- dice sets --------------------------------------------------------

    def _new_set(self, replacement: bool) -> None:
        """A set of five arrives, is inspected by a dealer, the game
        supervisor and a pit manager (enough for every jurisdiction), and goes
        into the bowl."""
        letters = set_letters(self.sets_used)
        self.sets_used += 1
        self.dice_set = [f"{letters}{i}" for i in range(1, 6)]
        text = ",".join(self.dice_set)
        received = len(self.rows)
        self._ev("dice_received", "security", self.guard, dice=text)
        self._ev("dice_inspected", "dealer", self.dealers[0], dice=text, outcome="pass")
        self._ev("dice_inspected", "game_supervisor", self.sup, dice=text, outcome="pass")
        self._ev("dice_inspected", "pit_manager", self.pit, dice=text, outcome="pass")
        self._ev("dice_to_bowl", "stickperson", self.stick, dice=text)
        if replacement and self.sites is not None:
            self.sites.replacements.append(ReplaceSite(received, received + 2, received + 4))

    def _replace_set(self) -> None:
        """Between hands: the old set leaves the table first, then the new one
        arrives, so the table never holds two sets (ten dice) at once."""
        self._ev("dice_removed", "game_supervisor", self.sup, dice=",".join(self.dice_set))
        self._new_set(replacement=True)

    # --- players and wagers -------------------------------------------------

    def _join(self) -> None:
        """A new player sits at a free seat and picks a line bet they keep."""
        rng = self.rng
        free = [s for s in SEATS if s not in self.seats]
        seat = rng.choice(free)
        pid = f"P{next(self._player_numbers):04d}"
        self.seats[seat] = pid
        insort(self.order, seat)
        self.wagers[seat] = {}
        bet = "pass" if rng.random() < 0.75 else "dont_pass"
        self.pref[seat] = (bet, rng.choice(LINE_STAKES))
        self._ev("player_join", "player", pid, seat, pid)

    def _leave(self, seat: int) -> None:
        """A player leaves; whatever they still have on the layout is taken
        down first."""
        for bet in list(self.wagers[seat]):
            self._player_ev("wager_removed", seat, bet=bet, amount=self.wagers[seat][bet])
        self._player_ev("player_leave", seat)
        del self.seats[seat], self.wagers[seat], self.pref[seat]
        self.order.remove(seat)

    def _place(self, seat: int, bet: str, stake: float) -> None:
        """A wager goes on the layout (hot path: one tuple, no keywords)."""
        w = self.wagers[seat]
        w[bet] = stake
        pid = self.seats[seat]
        self.rows.append(("wager_placed", "player", pid, seat, pid, None, None, None, None,
                          bet, stake, None, None, None))

    def _line_bets_for_all(self) -> None:
        """Before an offer round every seated player holds a line bet."""
        for seat in self.order:
            w = self.wagers[seat]
            if "pass" not in w and "dont_pass" not in w:
                bet, stake = self.pref[seat]
                self._place(seat, bet, stake)

    # --- offering the dice -------------------------------------------------

    def _offer_round(self, after: int | None) -> None:
        """Offer the whole set: at the start of play from the lowest seat,
        after a relinquishment from the seat clockwise of `after`; on clockwise
        after each refusal. Someone other than `after` accepts, then selects two
        dice and the rest go to the bowl."""
        rng, rows, add = self.rng, self.rows, self.rows.append
        order = self.order
        if after is None:
            cands = list(order)
            role, actor = "stickperson", self.stick
            last_ok = len(cands) - 1
        else:
            i = bisect_right(order, after)
            cands = order[i:] + order[:i]
            role, actor = (("dealer", self.dealers[0]) if self.offer_role == "dealer"
                           else ("stickperson", self.stick))
            last_ok = len(cands) - 1 - (len(cands) > 1 and cands[-1] == after)
        full = ",".join(self.dice_set)
        first = len(rows)
        declined_first = False
        for k, seat in enumerate(cands):
            pid = self.seats[seat]
            add(("dice_offered", role, actor, seat, None, full, None, None, None, None, None,
                 None, None, None))
            if k < last_ok and ((k == 0 and self.force_decline) or rng.random() < P_DECLINE):
                add(("dice_declined", "player", pid, seat, pid, None, None, None, None, None,
                     None, None, None, None))
                declined_first = declined_first or k == 0
                continue
            accepted = len(rows) - 1
            add(("dice_accepted", "player", pid, seat, pid, None, None, None, None, None,
                 None, None, None, None))
            break
        if declined_first and after is not None:
            self.force_decline = False
        i, j = sorted(rng.sample(range(len(self.dice_set)), 2))
        pair = (self.dice_set[i], self.dice_set[j])
        self._take_pair(seat, pair)
        if self.sites is not None:
            self.sites.offers.append(OfferSite(
                first, after is not None, after or 0, declined_first,
                cands[1] if declined_first else 0, accepted, pair, tuple(self.dice_set)))

    def _take_pair(self, seat: int, pair: tuple[str, str]) -> None:
        """The shooter keeps `pair`; every other die of the set at the table
        goes to the bowl."""
        self.shooter = seat
        self.pair, self.pair_text = pair, ",".join(pair)
        rest = ",".join(d for d in self.dice_set if d not in pair and d != self.off_die)
        self._player_ev("dice_selected", seat, dice=self.pair_text)
        self._ev("dice_to_bowl", "stickperson", self.stick, dice=rest)

    # --- rolls ---------------------------------------------------------------

    def _turn(self) -> None:
        """One throw and whatever it leads to."""
        r = self.rng.random()
        if r < P_DISCRETION:
            self._void_roll()
        elif r < P_DISCRETION + P_OFF_TABLE and self.off_die is None:
            self._die_off_table()
        else:
            self._valid_roll(r > 1.0 - P_COCKED)

    def _throw(self, flags: str) -> tuple[int, int]:
        """The shooter throws the pair; returns the faces."""
        rnd = self.rng.random
        d1, d2 = int(rnd() * 6) + 1, int(rnd() * 6) + 1
        if self.lean_die is not None and self.lean_die in self.pair and rnd() < self.lean:
            again = int(rnd() * 6) + 1
            if self.pair[0] == self.lean_die:
                d1 = max(d1, again)
            else:
                d2 = max(d2, again)
        seat = self.shooter
        pid = self.seats[seat]
        self.rows.append(("roll", "player", pid, seat, pid, self.pair_text, d1, d2, None, None,
                          None, None, None, flags))
        return d1, d2

    def _void_roll(self) -> None:
        """A discretionary no roll before the dice rest: nothing is called or
        settled; the dice come back with the stick and the shooter throws
        again."""
        self._throw(NORMAL_THROW)
        stick, add = self.stick, self.rows.append
        add(("no_roll", "stickperson", stick, None, None, None, None, None, None, None, None,
             None, "discretion", "before_rest"))
        add(("dice_collected", "stickperson", stick, None, None, self.pair_text, None, None,
             None, None, None, None, None, "stick"))
        add(("dice_to_shooter", "stickperson", stick, self.shooter, None, self.pair_text,
             None, None, None, None, None, None, None, "stick"))

    def _die_off_table(self) -> None:
        """A die leaves the table: no roll; the shooter is offered the three
        dice in the bowl, keeps the die still on the layout plus one new one;
        the missing die is found after the next valid roll."""
        rng, stick, seat = self.rng, self.stick, self.shooter
        self._throw(NORMAL_THROW + ",die_off_table")
        self._ev("no_roll", "stickperson", stick, reason="die_off_table", flags="before_rest")
        k = rng.random() < 0.5
        lost, kept = self.pair[k], self.pair[not k]
        self._ev("die_off_table", "stickperson", stick, dice=lost)
        bowl = [d for d in self.dice_set if d not in self.pair]
        self._ev("dice_offered", "stickperson", stick, seat, dice=",".join(bowl))
        self.off_die = lost
        self._take_pair(seat, (kept, rng.choice(bowl)))

    def _retrieve(self) -> None:
        """The die that left the table is found, inspected by the game
        supervisor and by the boxperson (NSW 3.5 names the boxperson), and put
        back in the bowl."""
        die, self.off_die = self.off_die, None
        self._ev("die_retrieved", "dealer", self.dealers[0], dice=die)
        self._ev("dice_inspected", "game_supervisor", self.sup, dice=die, outcome="pass")
        self._ev("dice_inspected", "boxperson", self.box, dice=die, outcome="pass")
        self._ev("dice_to_bowl", "stickperson", self.stick, dice=die)

    def _valid_roll(self, cocked: bool) -> None:
        """A valid roll: call, collect, settle, then pass the dice back (or
        the hand ends on a 7 Out or a voluntary pass)."""
        rows, add, stick = self.rows, self.rows.append, self.stick
        seat, dice = self.shooter, self.pair_text
        roll_row = len(rows)
        d1, d2 = self._throw(NORMAL_THROW)
        if cocked:  # the roll row records the counted face; the resting one is its opposite
            k = self.rng.random() < 0.5
            add(("die_cocked", "stickperson", stick, None, None, self.pair[k],
                 7 - (d2 if k else d1), None, None, None, None, None, None, None))
        t = d1 + d2
        add(("total_called", "stickperson", stick, None, None, None, None, None, t, None, None,
             None, None, None))
        add(("dice_collected", "stickperson", stick, None, None, dice, None, None, None, None,
             None, None, None, "stick"))
        site = self._site_before(seat) if self.sites is not None and not cocked else None
        point = self.point
        reline = self._settle(t, d1 == d2, site)
        complete = len(rows)
        add(("settlement_complete", "dealer", self.dealers[0], None, None, None, None, None,
             None, None, None, None, None, None))
        if self.off_die is not None:
            self._retrieve()
        self.valid_rolls += 1
        seven_out = point != 0 and t == 7
        if point == 0:
            if t in POINTS:
                self.point = t
        elif t == 7 or t == point:
            self.point = 0
        if seven_out:
            if site is not None:
                self._site_after(site, roll_row, complete, -1, point, t)
            self._relinquish("seven_out")
            return
        self._new_wagers(reline)
        to_shooter = len(rows)
        add(("dice_to_shooter", "stickperson", stick, seat, None, dice, None, None, None, None,
             None, None, None, "stick"))
        if site is not None:
            self._site_after(site, roll_row, complete, to_shooter, point, t)
        if self.force_voluntary or self.rng.random() < P_VOLUNTARY:
            self.force_voluntary = False
            self._relinquish("voluntary")

    def _settle(self, t: int, hard: bool, site: list | None) -> list[int]:
        """Settle every wager the total decides; travel come bets to their
        number. Returns the seats whose line bet ended."""
        decides = DECIDE[self.point][t]
        wagers = self.wagers
        # Most wagers are not decided by a roll: find the few that are first.
        hits = [(seat, bet) for seat in self.order for bet in wagers[seat] if bet in decides]
        if not hits:
            return []
        add, seats, rnd = self.rows.append, self.seats, self.rng.random
        ended = []
        for seat, bet in hits:
            w = wagers[seat]
            outcome, pay = decides[bet]
            if outcome == "travel":
                w[pay] = w.pop(bet)
                continue
            if outcome == "hard":
                outcome, pay = ("win", 9) if hard else ("lose", 0)
            elif outcome == "push" and rnd() < 0.5:
                continue  # a push leaves the wager standing; writing it is optional
            stake = w[bet] if outcome == "push" else w.pop(bet)
            pid = seats[seat]
            if site is not None:
                site.append((len(self.rows), seat, pid, bet, stake, outcome))
            add(("wager_settled", "dealer", self.dealers[seat > 7], seat, pid, None, None,
                 None, None, bet, round(stake * pay, 2), outcome, None, None))
            if outcome != "push" and (bet == "pass" or bet == "dont_pass"):
                ended.append(seat)
        return ended

    def _new_wagers(self, reline: list[int]) -> None:
        """After the settlements: line bets again for those whose line bet
        ended (always the shooter, who must hold one at every roll), and now
        and then come, don't come, field, place and hardway bets."""
        rng, rnd, wagers = self.rng, self.rng.random, self.wagers
        for seat in reline:
            if seat == self.shooter or rnd() < P_RELINE:
                bet, stake = self.pref[seat]
                self._place(seat, bet, stake)
        on = self.point != 0
        for seat in self.order:
            x = rnd()
            if x >= 0.205:
                continue
            w = wagers[seat]
            if x < 0.10:
                if on and not any(b.startswith("come") for b in w):
                    self._place(seat, "come", self.pref[seat][1])
            elif x < 0.13:
                if on and not any(b.startswith("dont_come") for b in w):
                    self._place(seat, "dont_come", self.pref[seat][1])
            elif x < 0.17:
                if "field" not in w:
                    self._place(seat, "field", rng.choice((5.0, 10.0)))
            elif x < 0.19:
                if on and "place_6" not in w:
                    self._place(seat, "place_6", rng.choice((6.0, 12.0, 30.0)))
            elif on and "hard_8" not in w:
                self._place(seat, "hard_8", rng.choice((1.0, 5.0)))

    # --- the end of a hand -------------------------------------------------

    def _relinquish(self, reason: str) -> None:
        """The shooter gives up the dice; between hands, then a new round."""
        out = self.shooter
        if reason == "voluntary" and self.sites is not None:
            self.sites.voluntary.append(len(self.rows))
        self._player_ev("shooter_relinquish", out, reason=reason)
        self.shooter = 0
        self._between_hands(out)

    def _between_hands(self, out: int) -> None:
        """Players leave and join (never the outgoing shooter, who anchors the
        next offer), sometimes a new set of dice, line bets for everyone, and
        the next offer round."""
        rng, order = self.rng, self.order
        if len(order) > self.min_players and rng.random() < P_LEAVE:
            cands = [s for s in order if s != out
                     and not any(b.startswith(("come", "dont_come")) for b in self.wagers[s])]
            if cands:
                self._leave(rng.choice(cands))
        if len(order) < MAX_PLAYERS and rng.random() < P_JOIN:
            self._join()
        while len(order) < self.min_players:
            self._join()
        if self.force_replace or (rng.random() < P_REPLACE and self.lean_die is None):
            self.force_replace = False
            self._replace_set()
        self._line_bets_for_all()
        self._offer_round(out)

    # --- sites (only when planting) ---------------------------------------

    def _site_before(self, seat: int) -> list:
        """What the planter needs to know from before the roll is settled;
        the list also collects the roll's settlements."""
        w = self.wagers[seat]
        line = "pass" if "pass" in w else "dont_pass" if "dont_pass" in w else None
        other = next(((s, self.seats[s]) for s in self.order if s != seat
                      and ("pass" in self.wagers[s] or "dont_pass" in self.wagers[s])), None)
        return [line, w.get(line, 0.0) if line else 0.0, other]

    def _site_after(self, site: list, roll: int, complete: int, to_shooter: int,
                    point: int, t: int) -> None:
        line, stake, other = site[0], site[1], site[2]
        settled = site[3:]
        seat = self.shooter
        pass_win = next((r for r, _, _, b, _, o in settled if b == "pass" and o == "win"), -1)
        decided = [(r, s, p, b, k) for r, s, p, b, k, o in settled
                   if b in ("pass", "dont_pass") and o in ("win", "lose")]
        decided.sort(key=lambda x: x[1] == seat)  # prefer another player's bet
        self.sites.rolls.append(RollSite(
            roll, complete, to_shooter, point != 0 and t == 7, point, seat, self.seats[seat],
            self.pair_text, t,
            line, stake, any(s == seat and b == line for _, s, _, b, _, _ in settled),
            pass_win, decided[0] if decided else None, other, len(settled)))
