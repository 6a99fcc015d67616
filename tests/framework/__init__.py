"""Tests of policysched.framework."""

from pathlib import Path

POLICIES_ONLY = str(Path(__file__).parent / "fixtures" / "policies-only.yaml")
"""A configuration whose one profile enables exactly the policies given with it."""
