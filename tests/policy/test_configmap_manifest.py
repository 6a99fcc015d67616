"""policy.configmap_manifest: policy files as a watched ConfigMap, read back verbatim by
the loader (so positions in it are the files' own)."""

from __future__ import annotations

import pytest
import yaml

from policysched.policy import load_configmap
from policysched.policy.configmap_manifest import (
    POLICY_LABEL,
    ManifestError,
    configmap_manifest,
)
from policysched.policy.policy_set import build_policy_set

POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: p}
spec:
  filter:
  - name: f
    expression: "true &&"
"""


@pytest.mark.parametrize("text", [
    POLICY,
    POLICY.rstrip("\n"),                   # no final newline
    POLICY + "\n\n",                       # trailing blank lines kept
    "  indented: first line\nx: 1\n",      # a block needs an explicit indentation
    "true\n",
])
def test_the_manifest_gives_back_each_file_byte_for_byte(text: str) -> None:
    document = yaml.safe_load(configmap_manifest("cm", "ns", {"a.yaml": text, "b.yaml": "x\n"},
                                                 {"app": "true", "team": "web"}))
    assert document["data"] == {"a.yaml": text, "b.yaml": "x\n"}
    assert document["metadata"] == {"name": "cm", "namespace": "ns", "labels": {
        "app": "true", "team": "web", POLICY_LABEL: "true"}}


def test_a_diagnostic_in_the_configmap_is_at_the_files_line_and_column() -> None:
    configmap = yaml.safe_load(configmap_manifest("cm", "ns", {"p.yaml": POLICY}))
    (error,) = build_policy_set(load_configmap(configmap)).errors
    assert error.headline().startswith("ns/cm[p.yaml]:7:")


@pytest.mark.parametrize("text", ["a:\t1\n", "a: 1   \n"])
def test_text_a_block_would_change_is_refused(text: str) -> None:
    with pytest.raises(ManifestError, match="tabs or trailing blanks"):
        configmap_manifest("cm", "ns", {"p.yaml": text})
