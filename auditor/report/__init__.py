"""Writing what an audit found: findings and quarantine tables, provenance,
the terminal summary. Output goes to the top-level `reports/` by default."""
