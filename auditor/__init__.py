"""Craps compliance auditor: replay recorded craps table event logs and report
every breach of a jurisdiction's rules, tied to its event and clause."""

__version__ = "0.1.0"
