"""The audit itself, whatever engine runs it: every table of some loaded
logs replayed, every rule's check run, the findings stamped (with their
caveats) and what could not be judged said (coverage). One entry point,
`audit_tables` (`auditor.audit.core`): every engine (`auditor.run`) calls it
on the tables it holds and merges the parts with `auditor.findings.finalize`.

- `core`: `audit_tables`, `AuditResult`, the replay and the checks;
- `caveat`: which findings stand on a hand holding unreadable rows;
- `coverage`: which rules could not be evaluated in which file;
- `collect`: what a report takes of the events before they go.
"""
