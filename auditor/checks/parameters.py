"""Every parameter a ruleset may set, with its type, default and meaning.

Parameters are what really differ between jurisdictions (see
`shared/jurisdictions.md` §20). A ruleset sets them once under
`[ruleset.parameters]`; a rule may override the ones its check reads under
`[rule.params]`. One central validator checks both against this catalogue,
so a message can always say which parameter of which rule is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from auditor.errors import AuditorError
from auditor.logs.schema import NO_ROLL_CONDITIONS, ROLES


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str  # int | bool | choice | roles | role_groups | role_map | conditions
    default: Any
    doc: str
    choices: tuple = ()


PARAMETERS: dict[str, Parameter] = {
    p.name: p
    for p in (
        Parameter("dice_set_size", "int", 5, "Number of dice in the set at the table."),
        Parameter("dice_set_size_mode", "choice", "exact",
                  "`exact`: the set must be exactly `dice_set_size` dice; `at_least`: that "
                  "many or more.", ("exact", "at_least")),
        Parameter("first_offer_anchor", "choice", "game_supervisor",
                  "Where the first offer of play goes. `game_supervisor`: the player immediately "
                  "to the game supervisor's left, i.e. the lowest occupied seat. `table_open_seat`"
                  ": the seat that `table_open` names (e.g. South Dakota's left of the third base "
                  "dealer), else the lowest occupied seat.",
                  ("game_supervisor", "table_open_seat")),
        Parameter("skip_players_without_line_bet", "bool", False,
                  "After a shooter relinquishes, the dice go only to players holding a Pass or "
                  "Don't Pass wager; the others are passed over."),
        Parameter("offer_roles", "roles", ["stickperson"], "Roles that may offer the dice."),
        Parameter("offer_rounds", "choice", "all",
                  "Which offers the offer checks (order, role, complete set) govern: `all`, "
                  "only `after_relinquish`, or only `start_of_play` — for a text read only "
                  "about one kind of offer.", ("all", "after_relinquish", "start_of_play")),
        Parameter("no_shooter_fallback", "choice", "none",
                  "What happens when no eligible player will shoot and wagers remain: "
                  "`stickperson_throws`, `previous_shooter_marker_off`, or `none` (not provided).",
                  ("none", "stickperson_throws", "previous_shooter_marker_off")),
        Parameter("order_to_pass_roles", "roles", ["game_supervisor"],
                  "Roles empowered to order a shooter to pass the dice."),
        Parameter("new_dice_inspections", "role_groups", [["dealer"], ["game_supervisor"]],
                  "Inspections a set needs before it goes into the bowl or into play: one "
                  "passing inspection by a role of each group, each by a different person."),
        Parameter("found_die_inspections", "role_groups", [["game_supervisor"]],
                  "Inspections a die that left the table and was found needs before it returns "
                  "to the shooter or the bowl."),
        Parameter("eligibility", "choice", "every_roll",
                  "When a shooter must hold a Pass or Don't Pass wager: `every_roll`, or "
                  "`come_out` (only on come-out rolls).", ("every_roll", "come_out")),
        Parameter("bar_number", "int", 12,
                  "The number barred on Don't Pass / Don't Come come-out rolls (12 or 2): a push."),
        Parameter("caller_roles", "roles", ["stickperson"], "Roles that call the total."),
        Parameter("no_roll_roles", "roles", ["stickperson", "game_supervisor"],
                  "Roles that may declare a no roll."),
        Parameter("dispute_roles", "roles", ["game_supervisor"],
                  "Roles that decide a dispute about which face is uppermost."),
        Parameter("boxperson_is_game_supervisor", "bool", True,
                  "The log format names one position \"game supervisor (boxperson)\": a "
                  "role list naming either `game_supervisor` or `boxperson` accepts both. "
                  "`false` where the ruleset's own text makes them different people."),
        Parameter("overrule_authority", "role_map",
                  {"game_supervisor": ["stickperson"]},
                  "For each role, the roles whose calls it may overrule."),
        Parameter("mandatory_no_roll_conditions", "conditions", list(NO_ROLL_CONDITIONS),
                  "Roll conditions that make the roll void whether or not a no roll is called."),
        Parameter("lost_dice_for_new_set", "int", 1,
                  "How many dice of a set must be lost before a new set is required."),
        Parameter("include_voided_rolls", "bool", False,
                  "Whether a throw fault counts on a roll that was voided by a no roll (by "
                  "default the no roll is taken as the table dealing with the fault)."),
    )
}


#: The two role names of the one position the log format calls "game
#: supervisor (boxperson)" (event-log-v1, Seats).
SUPERVISOR_POSITION = ("game_supervisor", "boxperson")


def position_roles(roles, one_position: bool) -> list[str]:
    """`roles` and, when they name the game supervisor's position by either
    of its names and `one_position` (the `boxperson_is_game_supervisor`
    parameter) holds, its other name: the roles a check accepts."""
    roles = list(roles)
    if one_position and any(r in SUPERVISOR_POSITION for r in roles):
        roles += [r for r in SUPERVISOR_POSITION if r not in roles]
    return roles


def position_authority(authority: dict, one_position: bool) -> dict[str, list[str]]:
    """An `overrule_authority` table read with `position_roles`: either name
    of the position holds what the table gives the other, and may be
    overruled by whoever may overrule the other."""
    out = {role: position_roles(over, one_position) for role, over in authority.items()}
    if one_position:
        given = [r for r in SUPERVISOR_POSITION if r in out]
        if given:
            joined = list(dict.fromkeys(x for r in given for x in out[r]))
            for r in SUPERVISOR_POSITION:
                out[r] = joined
    return out


class ParameterError(AuditorError, ValueError):
    """A value the catalogue refuses (still a ValueError, as it always was).
    The ruleset loader re-raises it as a RulesetError that names the file,
    rule and key."""


def validate_value(name: str, value: Any) -> Any:
    """Check one parameter value against the catalogue; return it normalised
    (role lists sorted are NOT reordered: order is kept as written)."""
    if name not in PARAMETERS:
        raise ParameterError(f"unknown parameter {name!r}")
    p = PARAMETERS[name]
    kind = p.kind
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise ParameterError(f"parameter {name!r} should be an integer")
        if name == "bar_number" and value not in (2, 12):
            raise ParameterError("parameter 'bar_number' should be 12 or 2")
        if name != "bar_number" and value < 1:
            raise ParameterError(f"parameter {name!r} should be 1 or more")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise ParameterError(f"parameter {name!r} should be true or false")
        return value
    if kind == "choice":
        if value not in p.choices:
            raise ParameterError(f"parameter {name!r} should be one of {', '.join(p.choices)}")
        return value
    if kind == "roles":
        return _roles(name, value)
    if kind == "conditions":
        if not isinstance(value, list) or not all(v in NO_ROLL_CONDITIONS for v in value):
            raise ParameterError(f"parameter {name!r} should be a list of "
                                 f"{', '.join(NO_ROLL_CONDITIONS)}")
        return list(value)
    if kind == "role_groups":
        if not isinstance(value, list) or not value:
            raise ParameterError(f"parameter {name!r} should be a list of role lists")
        return [_roles(name, group) for group in value]
    if kind == "role_map":
        if not isinstance(value, dict):
            raise ParameterError(f"parameter {name!r} should be a table of role = [roles]")
        return {_roles(name, [k])[0]: _roles(name, v) for k, v in value.items()}
    raise AssertionError(kind)


def _roles(name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ParameterError(f"parameter {name!r} should be a non-empty list of roles")
    unknown = [v for v in value if v not in ROLES]
    if unknown:
        raise ParameterError(f"parameter {name!r}: unknown role(s) {', '.join(unknown)} "
                             f"(roles: {', '.join(ROLES)})")
    return list(value)
