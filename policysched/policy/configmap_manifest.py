"""Policy files as the ConfigMap a running scheduler watches — the inverse of
``loader.load_configmap``: each file verbatim under its own key (a YAML literal block, so a
diagnostic's ``namespace/name[key]:line:col`` is the file's own line and column), labelled
``policysched.io/policy: "true"``. Used by ``policysched configmap`` and by
``deploy/generate.py`` for the built-in library.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

import yaml

from . import messages

POLICY_LABEL: Final = "policysched.io/policy"
"""The label of the ConfigMaps that hold policies (the default ``policySources`` selector)."""
DEPLOY_NAMESPACE: Final = "policysched-system"
"""The namespace deploy/ installs the scheduler and its policy ConfigMaps in."""
CONFIGMAP_PREFIX: Final = "policysched-policy-"
"""A policy ConfigMap's name: this and the (first) policy's name."""


class ManifestError(ValueError):
    """Text that a YAML literal block cannot carry byte for byte."""


def _literal_block(text: str) -> str:
    """``text`` as the YAML literal block scalar of a ``data`` key (the ``|`` header and the
    lines, indented two spaces more than the key)."""
    if text.endswith("\n\n"):
        chomp = "+"
    elif text.endswith("\n"):
        chomp = ""
    else:
        chomp = "-"
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    indicator = "2" if lines and lines[0][:1] == " " else ""  # else YAML would infer it
    body = "".join(f"    {line}\n" if line else "\n" for line in lines)
    return f"|{indicator}{chomp}\n{body}"


def configmap_manifest(name: str, namespace: str, files: Mapping[str, str],
                       labels: Mapping[str, str] | None = None) -> str:
    """The ConfigMap document holding ``files`` (key → text), labelled as a policy source
    plus ``labels``. Raises ``ManifestError`` for text a literal block would change (tabs,
    trailing blanks)."""
    for key, text in files.items():
        if "\t" in text or any(line != line.rstrip() for line in text.split("\n")):
            raise ManifestError(messages.NOT_VERBATIM.format(key=key))
    all_labels = {**(labels or {}), POLICY_LABEL: "true"}
    document = (
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata:\n"
        f"  name: {name}\n"
        f"  namespace: {namespace}\n"
        "  labels:\n"
        + "".join(f"    {k}: {_scalar(v)}\n" for k, v in all_labels.items())
        + "data:\n"
        + "".join(f"  {key}: {_literal_block(text)}" for key, text in files.items()))
    loaded = yaml.safe_load(document)
    if loaded["data"] != dict(files):  # a block must give back the file, byte for byte
        raise ManifestError(messages.NOT_VERBATIM.format(key=", ".join(files)))
    return document


def _scalar(value: str) -> str:
    """``value`` plain when YAML reads it back as that string, else double-quoted."""
    return value if yaml.safe_load(value) == value else json.dumps(value)
