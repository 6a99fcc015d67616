"""The deploy/ manifests (`kubectl apply -k deploy/`): generated files up to date, the
kustomization renders, and what it renders is what policysched needs — checked without a
cluster (these tests run with the unit tests), plus one e2e test where the real API server
accepts every object (server-side dry run)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from policysched.policy import load_policy_set

from . import support

DEPLOY = support.DEPLOY
POLICIES = support.REPO / "policies"
NS = support.SYSTEM_NAMESPACE
PORT = 10259


@cache
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deploy_generate", DEPLOY / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kustomize(directory: Path) -> tuple[dict[str, Any], ...] | None:
    """``kubectl kustomize DIRECTORY``; None without kubectl."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return None
    done = subprocess.run([kubectl, "kustomize", str(directory)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, f"kubectl kustomize {directory} failed:\n{done.stderr}"
    return tuple(d for d in yaml.safe_load_all(done.stdout) if d)


@cache
def rendered() -> tuple[dict[str, Any], ...]:
    """``kubectl kustomize deploy/`` (kubectl is optional: without it, the same assembly
    done here — resources in order, then the generated configuration ConfigMap)."""
    documents = kustomize(DEPLOY)
    if documents is not None:
        return documents
    kustomization = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
    assembled: list[dict[str, Any]] = []
    for resource in kustomization["resources"]:
        assembled += support.load_manifests(DEPLOY / resource)
    for generated in kustomization.get("configMapGenerator", []):
        assembled.append({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": generated["name"], "namespace": generated["namespace"],
                         "labels": generated.get("options", {}).get("labels", {})},
            "data": {Path(f).name: (DEPLOY / f).read_text() for f in generated["files"]}})
    return tuple(assembled)


def objects(kind: str) -> list[dict[str, Any]]:
    return [d for d in rendered() if d["kind"] == kind]


def one(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in objects(kind) if name is None or d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def config_map(name_prefix: str) -> dict[str, Any]:
    found = [d for d in objects("ConfigMap")
             if d["metadata"]["name"] == name_prefix
             or d["metadata"]["name"].startswith(name_prefix + "-")]
    assert len(found) == 1, [d["metadata"]["name"] for d in found]
    return found[0]


# ------------------------------------------------------------------------------ generated


def test_generated_files_are_up_to_date() -> None:
    stale = generator().stale()
    assert not stale, (f"out of date: {[str(p.relative_to(support.REPO)) for p in stale]}; "
                       "run: make deploy-files")


def test_policy_configmaps_hold_every_builtin_policy_verbatim() -> None:
    maps = {d["metadata"]["name"]: d for d in objects("ConfigMap")
            if d["metadata"].get("labels", {}).get("policysched.io/policy") == "true"}
    files = sorted(p for p in POLICIES.glob("*.yaml") if p.name != "scheduler-config.yaml")
    assert sorted(maps) == [f"policysched-policy-{p.stem}" for p in files]
    for path in files:
        configmap = maps[f"policysched-policy-{path.stem}"]
        assert configmap["metadata"]["namespace"] == NS
        assert configmap["data"] == {path.name: path.read_text()}


def test_policy_configmaps_and_configuration_are_valid() -> None:
    """What `policysched validate` says of the two generated files."""
    policy_set = load_policy_set([str(DEPLOY / "policies-configmap.yaml"),
                                  str(DEPLOY / "scheduler-config.yaml")])
    assert policy_set.valid, [d.headline() for d in policy_set.diagnostics]
    assert len(policy_set.policies) == len(list(POLICIES.glob("*.yaml"))) - 1
    assert len(policy_set.configurations) == 1


def test_configuration_reads_the_configmaps_and_keeps_the_builtin_profiles() -> None:
    configuration = yaml.safe_load((DEPLOY / "scheduler-config.yaml").read_text())
    builtin = yaml.safe_load((POLICIES / "scheduler-config.yaml").read_text())
    assert configuration["profiles"] == builtin["profiles"]
    # no namespace: the scheduler's own (POD_NAMESPACE, set from the pod), so that an
    # overlay's `namespace:` moves the ConfigMap sources and the Lease with the Deployment
    assert configuration["policySources"] == {"configMaps": [{
        "labelSelector": {"matchLabels": {"policysched.io/policy": "true"}}}]}
    assert "namespace" not in configuration["leaderElection"]
    assert configuration["leaderElection"]["leaderElect"] is True
    (container,) = one("Deployment")["spec"]["template"]["spec"]["containers"]
    assert {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {
        "fieldPath": "metadata.namespace"}}} in container["env"]
    assert configuration["healthzBindAddress"] == f"0.0.0.0:{PORT}"
    generated = config_map("policysched-config")
    assert generated["metadata"]["namespace"] == NS
    assert yaml.safe_load(generated["data"]["scheduler-config.yaml"]) == configuration


# ------------------------------------------------------------------------------ kustomization


def test_kustomization_renders_every_object() -> None:
    kinds = sorted({(d["kind"], d["metadata"]["name"]) for d in rendered()
                    if d["kind"] != "ConfigMap"})
    assert kinds == sorted([
        ("Namespace", NS), ("ServiceAccount", "policysched"), ("ClusterRole", "policysched"),
        ("ClusterRoleBinding", "policysched"), ("Role", "policysched"),
        ("RoleBinding", "policysched"), ("Deployment", "policysched")])
    namespaced = [d for d in rendered() if d["kind"] not in (
        "Namespace", "ClusterRole", "ClusterRoleBinding")]
    assert {d["metadata"].get("namespace") for d in namespaced} == {NS}


def test_deployment() -> None:
    deployment = one("Deployment", "policysched")
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    pod = spec["template"]["spec"]
    assert pod["serviceAccountName"] == "policysched"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    (container,) = pod["containers"]
    assert "--leader-elect" in container["args"]
    assert "--config=/etc/policysched/scheduler-config.yaml" in container["args"]
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])
    assert "memory" in container["resources"]["limits"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http-metrics": PORT}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http-metrics"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http-metrics"}
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["config"]["mountPath"] == "/etc/policysched"
    # the reference follows the generated (hash-suffixed) ConfigMap's name
    assert volumes["config"]["configMap"]["name"] == \
        config_map("policysched-config")["metadata"]["name"]


# The exact rules: widening them must be a deliberate change of this table.
CLUSTER_RULES = [
    ("", "pods", ["get", "list", "watch", "patch", "delete"]),
    ("", "pods/binding", ["create"]),
    ("", "pods/status", ["patch"]),
    ("", "nodes", ["get", "list", "watch"]),
    ("", "namespaces", ["list", "watch"]),
    ("", "services", ["list", "watch"]),
    ("", "replicationcontrollers", ["list", "watch"]),
    ("apps", "replicasets", ["list", "watch"]),
    ("apps", "statefulsets", ["list", "watch"]),
    ("policy", "poddisruptionbudgets", ["list", "watch"]),
    ("events.k8s.io", "events", ["create", "patch"]),
    ("", "persistentvolumeclaims", ["get", "list", "watch", "update"]),
    ("", "persistentvolumes", ["get", "list", "watch", "update"]),
    ("storage.k8s.io", "storageclasses", ["list", "watch"]),
    ("storage.k8s.io", "csinodes", ["list", "watch"]),
    ("storage.k8s.io", "csidrivers", ["list", "watch"]),
    ("scheduling.x-k8s.io", "podgroups", ["get", "list", "watch"]),
]
NAMESPACED_RULES = [
    ("", "configmaps", ["get", "list", "watch"]),
    ("coordination.k8s.io", "leases", ["get", "create", "update"]),
]


def _rules(role: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    found = []
    for rule in role["rules"]:
        assert "resourceNames" not in rule and "nonResourceURLs" not in rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                found.append((group, resource, list(rule["verbs"])))
    return found


def test_rbac_is_exactly_what_the_scheduler_uses() -> None:
    assert _rules(one("ClusterRole", "policysched")) == CLUSTER_RULES
    role = one("Role", "policysched")
    assert role["metadata"]["namespace"] == NS
    assert _rules(role) == NAMESPACED_RULES
    subject = {"kind": "ServiceAccount", "name": "policysched", "namespace": NS}
    for kind, role_kind in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        binding = one(kind, "policysched")
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io",
                                      "kind": role_kind, "name": "policysched"}
        assert binding["subjects"] == [subject]


def test_dockerfile() -> None:
    lines = [line.strip() for line in (DEPLOY / "Dockerfile").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert lines[0] == "FROM python:3.11-slim"
    copied = {source for line in lines if line.startswith("COPY ")
              for source in line.split()[1:-1]}
    # everything `pip install .` packages (pyproject.toml maps policies/ and schemas/ in)
    assert {"pyproject.toml", "README.md", "policysched", "policies", "schemas"} <= copied
    assert any(line.startswith("RUN pip install .") for line in lines)
    user = next(line for line in lines if line.startswith("USER "))
    assert user.split()[1].split(":")[0] not in ("0", "root")
    assert lines[-1] == 'ENTRYPOINT ["policysched", "run"]'


# ------------------------------------------------------------------------------ overlay

OVERLAY = support.REPO / "examples" / "maintenance"


def test_the_example_overlay_moves_the_scheduler_and_adds_a_policy() -> None:
    """examples/maintenance/kustomization.yaml, as deploy/README.md shows it: deploy/ in
    another namespace, from another image, with one more policy ConfigMap."""
    kustomization = yaml.safe_load((OVERLAY / "kustomization.yaml").read_text())
    assert kustomization["resources"] == ["../../deploy"]
    (generator,) = kustomization["configMapGenerator"]
    assert generator["options"]["labels"] == {"policysched.io/policy": "true"}
    policy_set = load_policy_set([OVERLAY / f for f in generator["files"]])
    assert policy_set.valid and policy_set.policies, policy_set.diagnostics
    assert all(p.labels.get("policysched.io/profile") == "policysched"
               for p in policy_set.policies)
    documents = kustomize(OVERLAY)
    if documents is None:  # kubectl is optional; the rest needs it
        return
    namespace = kustomization["namespace"]
    for document in documents:
        if document["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
            assert document["metadata"]["namespace"] == namespace, document["metadata"]
    image = kustomization["images"][0]
    (deployment,) = [d for d in documents if d["kind"] == "Deployment"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == f"{image['newName']}:{image['newTag']}"
    bindings = [d for d in documents if d["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    assert bindings and all(s["namespace"] == namespace
                            for b in bindings for s in b["subjects"])
    (added,) = [d for d in documents if d["metadata"]["name"] == generator["name"]]
    assert added["data"] == {f: (OVERLAY / f).read_text() for f in generator["files"]}


# ------------------------------------------------------------------------------ e2e


@pytest.mark.e2e
def test_the_api_server_accepts_every_object(installed: support.Cluster) -> None:
    """`kubectl apply -k deploy/ --dry-run=server`: every rendered object passes the real
    API server's validation and admission (nothing is stored)."""
    from kubernetes import dynamic

    client = dynamic.DynamicClient(installed.api)
    for document in rendered():
        resource = client.resources.get(api_version=document["apiVersion"],
                                        kind=document["kind"])
        namespace = document["metadata"].get("namespace") if resource.namespaced else None
        resource.server_side_apply(body=document, name=document["metadata"]["name"],
                                   namespace=namespace, field_manager="policysched-dry-run",
                                   force_conflicts=True, dry_run="All")
