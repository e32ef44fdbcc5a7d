"""The violation catalogue (`shared/spec/violations.md`): every code a finding
may carry and what it means. Codes are jurisdiction-neutral; rulesets decide
which apply, under which clause and with which severity."""

from __future__ import annotations

#: code -> what is wrong (the catalogue's own words)
CODES: dict[str, str] = {
    "shooter.ineligible": (
        "a player rolled without an active Pass or Don't Pass wager at the time of the roll (allowed exceptions: the stickperson's throws of R 5.11; the previous shooter's marker-off throws of SD (2))"
    ),
    "shooter.not_accepted": (
        "someone rolled who had not accepted the dice when properly offered, or a second player rolled while a shooter held the dice"
    ),
    "shooter.kept_after_seven_out": (
        "the shooter rolled again after a 7 Out instead of passing the dice"
    ),
    "shooter.order_to_pass_unauthorised": (
        "a shooter was ordered to pass the dice by a role the ruleset does not empower (game supervisor; boxperson in SD)"
    ),
    "shooter.stickperson_throw": (
        "the stickperson threw although an eligible player was available and willing, or no undetermined wager remained, or kept throwing after a decision or 7 Out"
    ),
    "shooter.marker_off_throw": (
        "a previous shooter threw without a line bet outside the SD (2) conditions: another player would shoot, no come/don't-come wager remained, or the on/off marker was not placed off on the don't pass line"
    ),
    "offer.order": (
        "the dice were offered out of turn: at the start of play not first to the lowest occupied seat (the player immediately left of the game supervisor, or the seat `table_open` names), after a shooter leaves not first to the player immediately left of that shooter, or not on clockwise after a refusal"
    ),
    "offer.ineligible_player": (
        "dice offered to a player without a Pass or Don't Pass wager where the rules offer them only to such players"
    ),
    "offer.incomplete_set": (
        "the offer was not of the complete set of dice"
    ),
    "offer.wrong_role": (
        "the dice were offered by a role the rules do not name (stickperson; a dealer in NZ)"
    ),
    "dice.set_size": (
        "the set at the table is not the required number of dice (5; \"five or more\" in SD)"
    ),
    "dice.not_inspected": (
        "a set (or a found die) went into the bowl or into play without the required inspections: independently by a dealer and by the game supervisor (two different people), or by the game supervisor for a found die"
    ),
    "dice.failed_inspection_used": (
        "a die that failed an inspection was put in the bowl or used"
    ),
    "dice.not_in_bowl": (
        "dice not in active play were not returned to the bowl (after the shooter's selection, or when a set is replaced)"
    ),
    "dice.shooter_selection": (
        "the shooter did not choose and keep exactly two of the offered dice, or rolled dice other than the ones chosen"
    ),
    "dice.unknown_die": (
        "a die serial that is not part of the set at the table was used"
    ),
    "dice.stick_not_used": (
        "the stickperson collected the dice or passed them to the shooter without the craps stick"
    ),
    "dice.passed_before_settlement": (
        "the dice went back to the shooter before the wagers decided by the roll were settled"
    ),
    "dice.off_table_procedure": (
        "after a die left the table the shooter was not offered the remaining dice to choose from, or a found die returned to play or the bowl without the game supervisor's inspection"
    ),
    "dice.lost_die_procedure": (
        "after a die was lost: no new set placed, old set's remaining dice not removed, or the shooter kept using the old set beyond the 7 Out / win-and-decline allowance"
    ),
    "throw.two_hands": (
        "the shooter handled or threw the dice with two hands"
    ),
    "throw.not_simultaneous": (
        "the dice did not leave the hand simultaneously"
    ),
    "throw.short": (
        "the dice did not strike the far end of the table"
    ),
    "call.missing": (
        "no total was called after a valid roll"
    ),
    "call.wrong_total": (
        "the called total is not the sum of the uppermost faces (with a cocked die, the face opposite the one resting on the object)"
    ),
    "call.wrong_role": (
        "the total was called by someone other than the stickperson"
    ),
    "noroll.missing": (
        "a roll with a mandatory no-roll condition (die off the table, one die on the other, on the bank's chips, in the bowl or on a rail, more than one face on an object, fraudulent or unapproved die, uncallable, thrown by someone other than the shooter) was not voided and wagers were settled on it"
    ),
    "noroll.improper": (
        "a no roll was declared only because the dice touched chips other than the bank"
    ),
    "noroll.late": (
        "a no roll was called after the dice came to rest"
    ),
    "noroll.wrong_role": (
        "a no roll was declared by someone other than the stickperson or the game supervisor"
    ),
    "dispute.wrong_role": (
        "a face dispute was decided by someone other than the game supervisor"
    ),
    "overrule.authority": (
        "an overrule by a role without authority over the role overruled (game supervisor over stickperson; casino manager in charge of the pit over both; a more senior manager over a less senior one)"
    ),
    "settle.wrong_outcome": (
        "a line bet was settled win/lose/push against what the dice decided"
    ),
    "settle.missing": (
        "a line bet decided by a valid roll was never settled before the next roll"
    ),
    "settle.void_roll": (
        "wagers were settled on a roll that was declared no roll"
    ),
    "log.sequence_gap": (
        "`seq` skips numbers within a table: events may be missing"
    ),
    "log.out_of_order": (
        "`seq` repeats or goes back, or `ts` goes back as `seq` rises"
    ),
    "log.malformed": (
        "a row that cannot be read: unknown event, a missing column its event requires, a value of the wrong type or range; the row is quarantined and named by file and line"
    ),
    "log.unknown_reference": (
        "an event names a seat with no player, or a die never received"
    ),
}

#: Evidence-quality codes: always reported, whatever the ruleset says.
LOG_CODES: tuple[str, ...] = tuple(c for c in CODES if c.startswith("log."))

SEVERITIES: tuple[str, ...] = ("critical", "major", "minor", "info")
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}
#: `--fail-on none`: report only, the run never fails on its findings.
REPORT_ONLY = "none"
#: what `--fail-on` accepts: a severity, or none
FAIL_ON_CHOICES: tuple[str, ...] = (*SEVERITIES, REPORT_ONLY)
