"""Sources → documents: files, directories, multi-document YAML, ConfigMaps and Lists; the
limits on policy input; ConfigMap keys checked as the API server checks them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policysched.policy import load_configmap, load_paths, load_policy_set, load_text
from policysched.policy.diagnostics import DiagnosticKind
from policysched.policy.limits import DEFAULT_LIMITS, PolicyLimits
from policysched.policy.positions import Position

POLICY = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata:
  name: {name}
spec:
  filter:
  - name: ok
    expression: "!node.unschedulable"
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_multi_document_file(tmp_path: Path) -> None:
    f = write(tmp_path / "p.yaml", POLICY.format(name="a") + "---\n" + POLICY.format(name="b"))
    loaded = load_paths([f])
    assert loaded.diagnostics == []
    assert [d.name for d in loaded.documents] == ["a", "b"]
    assert [d.position.line for d in loaded.documents] == [1, 10]
    assert loaded.files == [str(f)]


def test_directory_is_recursive_sorted_and_skips_hidden_and_kustomize_files(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", POLICY.format(name="b"))
    write(tmp_path / "a" / "z.yml", POLICY.format(name="az"))
    write(tmp_path / "c.txt", "not yaml: [")
    # a ConfigMap volume mount: ..data links to a timestamped copy of the files
    write(tmp_path / "..2024_01_01" / "b.yaml", POLICY.format(name="b"))
    write(tmp_path / ".hidden.yaml", POLICY.format(name="hidden"))
    # kustomize's file, which may turn the policies of the directory into ConfigMaps
    write(tmp_path / "kustomization.yaml", "kind: Kustomization\nresources: [../base]\n")
    loaded = load_paths([tmp_path])
    assert loaded.diagnostics == []
    assert [d.name for d in loaded.documents] == ["az", "b"]
    assert loaded.files == [str(tmp_path / "a" / "z.yml"), str(tmp_path / "b.yaml")]


def test_empty_directory_and_empty_file_are_errors(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    f = write(tmp_path / "nothing.yaml", "# nothing here\n")
    loaded = load_paths([tmp_path / "empty", f])
    assert [(d.path, d.message) for d in loaded.diagnostics] == [
        (str(tmp_path / "empty"), "no .yaml or .yml files found in this directory"),
        (str(f), "no SchedulingPolicy documents found"),
    ]


def test_unreadable_and_non_utf8_files_are_errors(tmp_path: Path) -> None:
    f = tmp_path / "latin1.yaml"
    f.write_bytes(b"a: 1\nb: caf\xe9\n")
    missing = tmp_path / "missing.yaml"
    loaded = load_paths([f, missing])
    [not_utf8, unreadable] = loaded.diagnostics
    assert not_utf8.kind is DiagnosticKind.IO
    assert (not_utf8.line, not_utf8.column) == (2, 7)
    assert not_utf8.message == "file is not valid UTF-8 text (byte 11)"
    assert unreadable.message.startswith("cannot read file: ")


def test_configmap_block_scalar_positions_are_real_file_lines(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\n"
        "kind: ConfigMap\n"
        "metadata: {name: pols, namespace: sched}\n"
        "data:\n"
        "  one.yaml: |\n"
        + "".join("    " + line + "\n" for line in POLICY.format(name="one").splitlines())
        + "    ---\n"
        + "".join("    " + line + "\n" for line in POLICY.format(name="two").splitlines())
    )
    f = write(tmp_path / "cm.yaml", text)
    loaded = load_paths([f])
    assert loaded.diagnostics == []
    one, two = loaded.documents
    assert (one.name, one.origin) == ("one", "sched/pols[one.yaml]")
    assert one.source == str(f)
    # "name: one" is line 4 of the embedded text, line 9 of the file, indented by 4 more
    assert one.yaml.position(("metadata", "name")).line == 9
    assert one.yaml.position(("metadata", "name")).column == 13
    assert two.yaml.position(("spec", "filter", 0, "expression")) == Position(str(f), 22, 21)


def test_configmap_from_the_api_is_positioned_inside_the_key() -> None:
    configmap = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "pols", "namespace": "sched"},
        "data": {"a.yaml": POLICY.format(name="a").replace('"!node.unschedulable"', "nod.x")},
    }
    policy_set = load_policy_set_from_configmap(configmap)
    [error] = policy_set.diagnostics
    assert error.location == "sched/pols[a.yaml]:8:17"
    assert error.line_text == "    expression: nod.x"
    assert error.origin == "sched/pols[a.yaml]"


def load_policy_set_from_configmap(configmap: dict[str, object]):  # type: ignore[no-untyped-def]
    from policysched.policy import build_policy_set

    return build_policy_set(load_configmap(configmap))


def test_kubectl_lists_of_configmaps_are_read(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, namespace: n}\n"
        "  data:\n    p.yaml: |\n"
        + "".join("      " + line + "\n" for line in POLICY.format(name="in-list").splitlines())
    )
    loaded = load_paths([write(tmp_path / "list.yaml", text)])
    assert loaded.diagnostics == []
    [doc] = loaded.documents
    assert doc.name == "in-list"
    assert doc.yaml.position(("metadata", "name")).line == 12


def test_non_policy_documents_are_errors_but_configmaps_are_not(tmp_path: Path) -> None:
    f = write(
        tmp_path / "mixed.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: empty}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: n}\n"
        "data:\n  x.yaml: |\n    kind: Secret\n",
    )
    loaded = load_paths([f])
    assert [(d.line, d.column, d.message) for d in loaded.diagnostics] == [
        (2, 7, 'not a SchedulingPolicy: kind is "Deployment" (expected SchedulingPolicy, '
               "SchedulerConfiguration, or a ConfigMap holding policies)"),
        (14, 11, 'n/other[x.yaml] holds a document of kind "Secret": '
                 "expected SchedulingPolicy or SchedulerConfiguration"),
    ]


def test_configmap_values_must_be_strings(tmp_path: Path) -> None:
    f = write(tmp_path / "cm.yaml",
              "kind: ConfigMap\nmetadata: {name: c}\ndata:\n  p.yaml:\n    kind: x\n")
    [error] = load_paths([f]).diagnostics
    assert error.message == 'ConfigMap data "p.yaml" must be a string, not a mapping'
    assert (error.line, error.column) == (5, 5)


def test_duplicate_policy_names_across_files(tmp_path: Path) -> None:
    a = write(tmp_path / "a.yaml", POLICY.format(name="same"))
    b = write(tmp_path / "b.yaml", POLICY.format(name="same"))
    policy_set = load_policy_set([a, b])
    [error] = policy_set.diagnostics
    assert error.headline() == (
        f'{b}:4:9: same: duplicate policy name "same" (first defined at {a}:4:9)'
    )
    assert error.kind is DiagnosticKind.DUPLICATE_NAME


# -- limits on policy input ------------------------------------------------------------------


def rules_policy(rules: int = 1, variables: int = 0, expression: str = "true") -> str:
    text = "apiVersion: policysched.io/v1alpha1\nkind: SchedulingPolicy\n"
    text += "metadata: {name: p}\nspec:\n"
    if variables:
        text += "  variables:\n" + "".join(
            f"  - {{name: v{i}, expression: '{i}'}}\n" for i in range(variables))
    text += "  filter:\n" + "".join(
        f'  - {{name: r{i}, expression: "{expression}"}}\n' for i in range(rules))
    return text


def limit_setting(key: str) -> str:
    return f"(policyLimits.{key} in the SchedulerConfiguration)"


def test_a_file_over_max_bytes_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    # issue 9: a 50 MB expression took a minute and 3 GiB; a file past maxBytes (256 KiB by
    # default) is not even read past it
    expression = "'" + "a" * DEFAULT_LIMITS.max_bytes + "' != ''"
    f = write(tmp_path / "big.yaml", rules_policy(expression=expression))
    loaded = load_paths([f])
    assert loaded.documents == [] and loaded.files == [str(f)]
    [error] = loaded.diagnostics
    assert error.kind is DiagnosticKind.LIMIT
    assert error.headline() == (f"{f}:1:1: too large to read: more than 262144 bytes "
                                + limit_setting("maxBytes"))
    # the limit counts bytes: a file just at it is read
    text = rules_policy()
    at_limit = write(tmp_path / "ok.yaml", text)
    assert load_paths([at_limit], PolicyLimits(max_bytes=len(text))).diagnostics == []
    assert load_paths([at_limit], PolicyLimits(max_bytes=len(text) - 1)).diagnostics != []


def test_a_configmap_value_over_max_bytes_is_refused_before_it_is_parsed() -> None:
    text = rules_policy(expression="'é' != ''")  # é: two bytes
    configmap = {"metadata": {"name": "pols", "namespace": "sched"}, "data": {"p.yaml": text}}
    assert load_configmap(configmap, PolicyLimits(max_bytes=len(text.encode()))).documents
    loaded = load_configmap(configmap, PolicyLimits(max_bytes=len(text)))
    [error] = loaded.diagnostics
    assert loaded.documents == []
    assert error.kind is DiagnosticKind.LIMIT and error.location == "sched/pols[p.yaml]:1:1"


def test_the_aliased_rules_of_issue_9_are_refused_at_once() -> None:
    # 779 kB: one 90,000-character rule and 19,999 aliases of it (1.8 GB of CEL) kept
    # validate busy for more than 90 s and the reload thread for more than 400 s
    expression = "size([" + ",".join(["0"] * 44_990) + "]) > 0"
    text = "apiVersion: policysched.io/v1alpha1\nkind: SchedulingPolicy\n"
    text += "metadata: {name: aliased}\nspec:\n  filter:\n"
    text += f"  - &r {{name: r0, expression: '{expression}'}}\n"
    text += "".join(f"  - {{<<: *r, name: rule-n-{i:06d}}}\n" for i in range(1, 20_000))
    assert 770_000 < len(text) < 780_000
    [too_large] = load_text(text, "aliased.yaml").diagnostics
    assert too_large.message.startswith("too large to read")
    # with room for its size, its aliases are what is refused
    loaded = load_text(text, "aliased.yaml", PolicyLimits(max_bytes=1 << 20))
    [error] = loaded.diagnostics
    assert loaded.documents == []
    assert error.kind is DiagnosticKind.LIMIT
    assert error.message.startswith("YAML aliases expand the text to more than 2 times")
    assert error.line_text == "  - {<<: *r, name: rule-n-000018}"  # the alias too many


def test_an_expression_over_the_limit_is_refused_before_it_is_compiled() -> None:
    long = "'" + "a" * (DEFAULT_LIMITS.max_expression_length - 7) + "' != ''"
    assert len(long) == DEFAULT_LIMITS.max_expression_length + 1
    loaded = load_text(rules_policy(expression=long), "long.yaml")
    assert loaded.documents == []  # not compiled
    [error] = loaded.diagnostics
    assert error.kind is DiagnosticKind.LIMIT
    assert error.headline() == (
        "long.yaml:6:28: p/r0: expression: expression too long: 10001 characters, more than "
        "10000 " + limit_setting("maxExpressionLength"))
    at_limit = load_text(rules_policy(expression=long[1:]), "ok.yaml")
    assert at_limit.diagnostics == [] and len(at_limit.documents) == 1


def test_every_kind_of_expression_is_bounded() -> None:
    text = """\
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: p}
spec:
  match: "1234 == 1234"
  variables:
  - {name: v, expression: "12345"}
  queueSort:
  - {name: q, keys: ["1", "123456"]}
  preBind:
  - {name: b, labels: {x: "1234567"}}
"""
    loaded = load_text(text, "p.yaml", PolicyLimits(max_expression_length=3))
    assert [(e.line, e.column, e.subject, e.message.split(":")[0]) for e in loaded.diagnostics
            ] == [(5, 10, "p", "match"), (7, 27, "p", "variable v"), (9, 27, "p/q", "keys[1]"),
                  (11, 27, "p/b", "labels[x]")]


def test_too_many_rules_or_variables_are_refused_before_compiling() -> None:
    limits = DEFAULT_LIMITS
    text = rules_policy(rules=limits.max_rules + 1, variables=limits.max_variables + 1)
    loaded = load_text(text, "many.yaml")
    assert loaded.documents == []
    assert [e.headline() for e in loaded.diagnostics] == [
        "many.yaml:262:5: p: too many variables: 257, more than 256 "
        + limit_setting("maxVariables"),
        "many.yaml:520:5: p/r256: too many rules: 257, more than 256 "
        + limit_setting("maxRules"),
    ]
    text = rules_policy(rules=limits.max_rules, variables=limits.max_variables)
    assert load_text(text, "enough.yaml").diagnostics == []


def test_list_items_count_as_documents(tmp_path: Path) -> None:
    item = "- {apiVersion: policysched.io/v1alpha1, kind: SchedulingPolicy, metadata: {name: p}}\n"
    text = "apiVersion: v1\nkind: List\nitems:\n" + item * 3
    [error] = load_text(text, "list.yaml", PolicyLimits(max_documents=2)).diagnostics
    assert error.kind is DiagnosticKind.LIMIT and (error.line, error.column) == (6, 3)


# -- ConfigMap keys -------------------------------------------------------------------------

KEY_CHARACTERS = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. "
    "'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
    "'[-._a-zA-Z0-9]+')")


@pytest.mark.parametrize(("key", "reasons"), [
    ("../../etc/passwd", f"{KEY_CHARACTERS}; must not start with '..'"),
    ("", KEY_CHARACTERS),
    ("a\nb", KEY_CHARACTERS),
    (".", "must not be '.'"),
    ("..", "must not be '..'"),
    ("..data", "must not start with '..'"),
    ("x" * 254, "must be no more than 253 characters"),
    ("é.yaml", KEY_CHARACTERS),
])
def test_configmap_keys_the_api_server_refuses_are_errors(key: str, reasons: str) -> None:
    # the API server's IsConfigMapKey, with its messages
    message = f"invalid ConfigMap data key {json.dumps(key, ensure_ascii=False)}: {reasons}"
    configmap = {"metadata": {"name": "pols", "namespace": "sched"},
                 "data": {key: POLICY.format(name="a"), "ok.yaml": POLICY.format(name="b")}}
    loaded = load_configmap(configmap)
    assert [d.name for d in loaded.documents] == ["b"]
    assert [(e.kind, e.message) for e in loaded.diagnostics] == [
        (DiagnosticKind.DOCUMENT, message)]
    # in a manifest, the error is at the key
    manifest = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: pols, namespace: sched}\n"
                f"data:\n  {json.dumps(key)}: |\n    kind: SchedulingPolicy\n")
    [error] = load_text(manifest, "cm.yaml").diagnostics
    assert (error.line, error.column, error.message) == (5, 3, message)
    assert error.origin == f"sched/pols[{key}]"


def test_configmap_keys_kubernetes_accepts_are_read() -> None:
    data = {key: POLICY.format(name=f"p{i}")
            for i, key in enumerate(["a.yaml", "A_b-c.yml", "x" * 253, ".hidden", "a..b"])}
    loaded = load_configmap({"metadata": {"name": "pols", "namespace": "sched"}, "data": data})
    assert loaded.diagnostics == [] and len(loaded.documents) == 5


CLUSTER_FILE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
---
apiVersion: policysched.io/v1alpha1
kind: SchedulingPolicy
metadata: {name: kept}
spec:
  filter:
  - name: any
    expression: "true"
"""


def test_a_cluster_file_among_policies_is_one_error_not_one_per_document() -> None:
    loaded = load_text(CLUSTER_FILE, "cluster.yaml")
    (error,) = loaded.diagnostics
    assert (error.path, error.line, error.column) == ("cluster.yaml", 2, 7)
    assert error.message.startswith("3 documents here are not policies (kinds: Node (2), "
                                    "Pod)")
    assert "--cluster" in error.message
    assert [d.name for d in loaded.documents] == ["kept"]  # the policy is still read


def test_a_list_of_other_objects_is_one_error() -> None:
    text = ("apiVersion: v1\nkind: NodeList\nitems:\n- {kind: Node, metadata: {name: a}}\n"
            "- {kind: Node, metadata: {name: b}}\n")
    (error,) = load_text(text, "nodes.yaml").diagnostics
    assert error.message.startswith("2 documents here are not policies (kinds: Node (2))")


def test_a_file_reached_twice_is_read_once(tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text(CLUSTER_FILE.split("---\n")[-1])
    policy_set = load_policy_set([tmp_path, tmp_path / "p.yaml", str(tmp_path) + "/"])
    assert policy_set.valid, policy_set.errors
    assert [p.name for p in policy_set.policies] == ["kept"]
    assert policy_set.files == (str(tmp_path / "p.yaml"),)
