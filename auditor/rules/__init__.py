"""Rulesets: loading, `extends` merging and validation, versions in force, and
descriptions of rules. Data only: nothing here runs an audit."""
