"""Tests of policysched.framework."""

from pathlib import Path

from policysched.commands.loading import load_engine
from policysched.framework.profiles import Engine

POLICIES_ONLY = str(Path(__file__).parent / "fixtures" / "policies-only.yaml")
"""A configuration whose one profile enables exactly the policies given with it."""

FIT = Path(__file__).resolve().parents[2] / "policies" / "node-resources-fit.yaml"


def engine_with(tmp_path: Path, policies: str) -> Engine:
    """node-resources-fit plus ``policies`` (YAML), in one profile."""
    (tmp_path / "fit.yaml").write_text(FIT.read_text())
    (tmp_path / "test.yaml").write_text(policies)
    return load_engine([str(tmp_path)], POLICIES_ONLY)
