"""Sources → documents: files, directories, multi-document YAML, ConfigMaps and Lists."""

from __future__ import annotations

from pathlib import Path

from policysched.policy import load_configmap, load_paths, load_policy_set
from policysched.policy.diagnostics import DiagnosticKind
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


def test_directory_is_recursive_sorted_and_skips_hidden_entries(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", POLICY.format(name="b"))
    write(tmp_path / "a" / "z.yml", POLICY.format(name="az"))
    write(tmp_path / "c.txt", "not yaml: [")
    # a ConfigMap volume mount: ..data links to a timestamped copy of the files
    write(tmp_path / "..2024_01_01" / "b.yaml", POLICY.format(name="b"))
    write(tmp_path / ".hidden.yaml", POLICY.format(name="hidden"))
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
