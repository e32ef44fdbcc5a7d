"""The event-log interchange format v1 as data: columns, event types and the
vocabulary of each coded column.

Everything that reads, validates, replays or generates logs takes its words
from here, so the spec (`shared/spec/event-log-v1.md`) is written down once.
"""

from __future__ import annotations

#: Columns in the order of the spec's table. (name, kind)
#: kinds: str, int, ts, amount. Types are enforced by `auditor.logs.coerce`.
COLUMNS: tuple[tuple[str, str], ...] = (
    ("table_id", "str"),
    ("seq", "int"),
    ("ts", "ts"),
    ("event", "str"),
    ("actor_role", "str"),
    ("actor_id", "str"),
    ("seat", "int"),
    ("player_id", "str"),
    ("dice", "str"),
    ("die1", "int"),
    ("die2", "int"),
    ("total", "int"),
    ("bet", "str"),
    ("amount", "amount"),
    ("outcome", "str"),
    ("reason", "str"),
    ("flags", "str"),
)
COLUMN_NAMES: tuple[str, ...] = tuple(name for name, _ in COLUMNS)
COLUMN_KINDS: dict[str, str] = dict(COLUMNS)

#: Highest seat number accepted. Craps tables have well under 20 positions;
#: the replay keeps seats as bits of a 64-bit mask.
MAX_SEAT = 62

#: The years a `ts` may fall in: no table was recorded electronically before
#: 1970, and from then to the end of 2261 every time, and every span between
#: two, is a 64-bit count of nanoseconds (what pandas and the reports hold).
#: A time outside them quarantines its row.
TS_YEARS = (1970, 2261)

#: A file lacking any of these cannot be a log at all.
REQUIRED_COLUMNS: tuple[str, ...] = ("table_id", "seq", "ts", "event")

ROLES: tuple[str, ...] = (
    "player",
    "stickperson",
    "dealer",
    "boxperson",
    "game_supervisor",
    "pit_manager",
    "casino_manager",
    "security",
    "system",
)

#: Event types, in a fixed order: the position is the event's integer code.
EVENTS: tuple[str, ...] = (
    "table_open",
    "table_close",
    "staff_on",
    "staff_off",
    "player_join",
    "player_leave",
    "wager_placed",
    "wager_removed",
    "wager_settled",
    "settlement_complete",
    "dice_received",
    "dice_inspected",
    "dice_to_bowl",
    "dice_removed",
    "dice_offered",
    "dice_declined",
    "dice_accepted",
    "dice_selected",
    "dice_collected",
    "dice_to_shooter",
    "die_off_table",
    "die_retrieved",
    "die_lost",
    "roll",
    "die_cocked",
    "total_called",
    "no_roll",
    "dispute",
    "ruling",
    "overrule",
    "marker",
    "shooter_relinquish",
)
EVENT_CODE: dict[str, int] = {name: i for i, name in enumerate(EVENTS)}

#: Columns each event must carry ("per event" in the spec). A row without one
#: of them is malformed and quarantined.
EVENT_REQUIRES: dict[str, tuple[str, ...]] = {
    "table_open": (),
    "table_close": (),
    "staff_on": ("actor_role",),
    "staff_off": ("actor_role",),
    "player_join": ("seat",),
    "player_leave": ("seat",),
    "wager_placed": ("seat", "bet", "amount"),
    "wager_removed": ("seat", "bet"),
    "wager_settled": ("seat", "bet", "outcome", "amount"),
    "settlement_complete": (),
    "dice_received": ("dice",),
    "dice_inspected": ("dice", "actor_role", "outcome"),
    "dice_to_bowl": ("dice",),
    "dice_removed": ("dice",),
    "dice_offered": ("actor_role", "seat", "dice"),
    "dice_declined": ("seat",),
    "dice_accepted": ("seat",),
    "dice_selected": ("seat", "dice"),
    "dice_collected": ("actor_role",),
    "dice_to_shooter": ("actor_role", "seat"),
    "die_off_table": ("dice",),
    "die_retrieved": ("dice",),
    "die_lost": ("dice",),
    "roll": ("actor_role", "dice", "die1", "die2"),
    "die_cocked": ("dice", "die1"),
    "total_called": ("actor_role", "total"),
    "no_roll": ("actor_role", "reason"),
    "dispute": ("dice",),
    "ruling": ("actor_role", "reason"),
    "overrule": ("actor_role", "reason"),
    "marker": ("outcome",),
    "shooter_relinquish": ("seat", "reason"),
}

#: The roll flags a recorder may observe.
NO_ROLL_CONDITIONS: tuple[str, ...] = (
    "die_off_table",
    "die_on_die",
    "on_bank_chips",
    "in_bowl_or_rail",
    "multi_face_on_object",
    "fraudulent",
    "unapproved_die",
    "uncallable",
    "wrong_thrower",
)
ROLL_FLAGS: tuple[str, ...] = (
    "one_hand",
    "two_hands",
    "simultaneous",
    "not_simultaneous",
    "far_end",
    "short",
    *NO_ROLL_CONDITIONS,
    "chips_contact",
)
NO_ROLL_REASONS: tuple[str, ...] = (
    *NO_ROLL_CONDITIONS,
    "chips_contact",
    "not_simultaneous",
    "short",
    "two_hands",
    "discretion",
)

#: Allowed `outcome` values per event that takes one.
OUTCOMES: dict[str, tuple[str, ...]] = {
    "wager_settled": ("win", "lose", "push"),
    "dice_inspected": ("pass", "fail"),
    "marker": ("on", "off"),
}

#: Allowed `reason` values per event that takes one. `overrule` names a role.
REASONS: dict[str, tuple[str, ...]] = {
    "no_roll": NO_ROLL_REASONS,
    "ruling": ("face_determined", "void"),
    "overrule": ROLES,
    "shooter_relinquish": ("voluntary", "seven_out", "ordered"),
}

#: Allowed `flags` words per event that takes them.
FLAGS: dict[str, tuple[str, ...]] = {
    "roll": ROLL_FLAGS,
    "dice_collected": ("stick", "no_stick"),
    "dice_to_shooter": ("stick", "no_stick"),
    "no_roll": ("before_rest", "after_rest"),
    "marker": ("dont_pass_line",),
}

#: Columns the spec has filled on every event of these types: a file that
#: records such events but leaves the column empty on every row has not
#: recorded it, as if the column were absent (`auditor.run.coverage`).
FILLED_ON: dict[str, tuple[str, ...]] = {
    "flags": ("roll", "dice_collected", "dice_to_shooter", "no_roll"),
}

#: Numbers a come or don't come bet can travel to.
POINT_NUMBERS: tuple[int, ...] = (4, 5, 6, 8, 9, 10)

#: A bet is valid when it matches this: lower-case words joined by `_`,
#: optionally ending in a number (place_6, come_8, hard_10, ...).
BET_PATTERN = r"^[a-z][a-z]*(?:_[a-z]+)*(?:_(?:[2-9]|1[0-2]))?$"
