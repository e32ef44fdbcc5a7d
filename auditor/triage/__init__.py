"""Triage: what is known (baselines), accepted (waivers) and new; the verdict."""
