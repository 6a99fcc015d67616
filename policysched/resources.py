"""Where the built-in policy library and the JSON Schemas are, installed or in a checkout.

The repository keeps them at its top (``policies/``, ``schemas/``); a wheel carries them inside
the package (``policysched/policies``, ``policysched/schemas``, mapped in pyproject.toml). A
source checkout or an editable install has only the former, an installed wheel only the latter.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _resource_directory(name: str) -> Path:
    """``name`` inside the installed package, else beside the package in the source tree."""
    installed = _PACKAGE / name
    return installed if installed.is_dir() else _PACKAGE.parent / name


BUILTIN_POLICIES = _resource_directory("policies")
SCHEMA_DIRECTORY = _resource_directory("schemas")
