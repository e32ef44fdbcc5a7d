"""Use cases behind the commands: check, validate, verify, baseline, and the ruleset authoring tools."""
