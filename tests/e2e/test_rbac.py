"""The policysched ServiceAccount's permissions, as the API server sees them (deploy/
clusterrole.yaml, role.yaml and their bindings): everything the scheduler does is allowed,
and what it never does is refused — asked with SelfSubjectAccessReview under the
ServiceAccount's own token, and tried for real (403)."""

from __future__ import annotations

from typing import Any

import pytest

from . import support

pytestmark = pytest.mark.e2e

NS = support.SYSTEM_NAMESPACE

# (verb, group, resource, subresource, namespace): what `policysched run` does.
ALLOWED = [
    ("list", "", "pods", "", ""),
    ("watch", "", "pods", "", ""),
    ("get", "", "pods", "", "default"),
    ("patch", "", "pods", "", "default"),  # preBind labels/annotations
    ("delete", "", "pods", "", "default"),  # preemption deletes its victims
    ("create", "", "pods", "binding", "default"),
    ("patch", "", "pods", "status", "default"),
    ("list", "", "nodes", "", ""),
    ("watch", "", "nodes", "", ""),
    ("get", "", "nodes", "", ""),
    ("list", "", "namespaces", "", ""),
    ("watch", "", "namespaces", "", ""),
    ("list", "", "services", "", ""),
    ("watch", "", "services", "", ""),
    ("list", "", "replicationcontrollers", "", ""),
    ("watch", "", "replicationcontrollers", "", ""),
    ("list", "apps", "replicasets", "", ""),
    ("watch", "apps", "replicasets", "", ""),
    ("list", "apps", "statefulsets", "", ""),
    ("watch", "apps", "statefulsets", "", ""),
    ("list", "policy", "poddisruptionbudgets", "", ""),
    ("watch", "policy", "poddisruptionbudgets", "", ""),
    *((verb, "", resource, "", "") for verb in ("list", "watch", "get", "update")
      for resource in ("persistentvolumeclaims", "persistentvolumes")),  # update: preBind
    *((verb, "storage.k8s.io", resource, "", "") for verb in ("list", "watch")
      for resource in ("storageclasses", "csinodes", "csidrivers")),
    ("create", "events.k8s.io", "events", "", "default"),
    ("patch", "events.k8s.io", "events", "", "default"),
    ("create", "events.k8s.io", "events", "", NS),  # PolicyRejected on a ConfigMap
    ("list", "scheduling.x-k8s.io", "podgroups", "", ""),
    ("watch", "scheduling.x-k8s.io", "podgroups", "", ""),
    ("list", "", "configmaps", "", NS),
    ("watch", "", "configmaps", "", NS),
    ("get", "", "configmaps", "", NS),
    ("get", "coordination.k8s.io", "leases", "", NS),
    ("create", "coordination.k8s.io", "leases", "", NS),
    ("update", "coordination.k8s.io", "leases", "", NS),
]

# What it must not be able to do.
DENIED = [
    ("delete", "", "nodes", "", ""),
    ("update", "", "nodes", "", ""),
    ("patch", "", "nodes", "", ""),
    ("create", "", "nodes", "", ""),
    ("delete", "", "persistentvolumes", "", ""),
    ("create", "", "persistentvolumes", "", ""),
    ("delete", "", "persistentvolumeclaims", "", "default"),
    ("get", "", "secrets", "", NS),
    ("list", "", "secrets", "", ""),
    ("create", "", "pods", "", "default"),
    ("update", "", "pods", "", "default"),
    ("update", "", "pods", "status", "default"),
    ("create", "", "pods", "exec", "default"),
    ("create", "", "pods", "eviction", "default"),  # preemption deletes, as kube-scheduler
    ("deletecollection", "", "pods", "", "default"),
    ("list", "", "configmaps", "", "default"),  # only the policy namespace
    ("update", "", "configmaps", "", NS),  # reads its policies, never writes them
    ("delete", "", "configmaps", "", NS),
    ("create", "coordination.k8s.io", "leases", "", "kube-system"),  # only its own namespace
    ("delete", "coordination.k8s.io", "leases", "", NS),
    ("create", "", "events", "", "default"),  # core/v1 Events: not used
    ("delete", "events.k8s.io", "events", "", "default"),
    ("create", "scheduling.x-k8s.io", "podgroups", "", "default"),
    ("create", "", "serviceaccounts", "token", NS),
    ("create", "rbac.authorization.k8s.io", "rolebindings", "", NS),
    ("escalate", "rbac.authorization.k8s.io", "clusterroles", "", ""),
    ("create", "apps", "deployments", "", NS),
    ("delete", "", "namespaces", "", ""),
    ("update", "", "services", "", "default"),
    ("create", "apps", "replicasets", "", "default"),
]


def _allowed(sa_api: Any, verb: str, group: str, resource: str, subresource: str,
             namespace: str) -> bool:
    from kubernetes import client

    attributes: dict[str, str] = {"verb": verb, "group": group, "resource": resource}
    if subresource:
        attributes["subresource"] = subresource
    if namespace:
        attributes["namespace"] = namespace
    review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
              "spec": {"resourceAttributes": attributes}}
    authorization: Any = client.AuthorizationV1Api(sa_api)
    return bool(authorization.create_self_subject_access_review(review).status.allowed)


def _describe(verb: str, group: str, resource: str, subresource: str, namespace: str) -> str:
    what = f"{resource}/{subresource}" if subresource else resource
    if group:
        what += f".{group}"
    return f"{verb} {what}" + (f" in {namespace}" if namespace else " (all namespaces)")


def test_the_service_account_is_who_the_scheduler_runs_as(sa_api: Any) -> None:
    from kubernetes import client

    authentication: Any = client.AuthenticationV1Api(sa_api)
    review = authentication.create_self_subject_review(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert review.status.user_info.username == (
        f"system:serviceaccount:{NS}:{support.SERVICE_ACCOUNT}")


def test_the_service_account_may_do_what_the_scheduler_does(sa_api: Any) -> None:
    refused = [_describe(*rule) for rule in ALLOWED if not _allowed(sa_api, *rule)]
    assert not refused, f"missing permissions: {refused}"


def test_the_service_account_may_not_do_more(sa_api: Any) -> None:
    granted = [_describe(*rule) for rule in DENIED if _allowed(sa_api, *rule)]
    assert not granted, f"excessive permissions: {granted}"


def test_forbidden_requests_get_403(sa_api: Any, admin_api: Any) -> None:
    """Not only the review: real requests are refused and change nothing."""
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException

    core: Any = client.CoreV1Api(sa_api)
    with pytest.raises(ApiException) as secrets:
        core.list_namespaced_secret(NS)
    assert secrets.value.status == 403
    with pytest.raises(ApiException) as delete:
        core.delete_node("kwok-node-0")
    assert delete.value.status == 403
    admin: Any = client.CoreV1Api(admin_api)
    assert admin.read_node("kwok-node-0").metadata.name == "kwok-node-0"
    with pytest.raises(ApiException) as write:
        core.patch_namespaced_config_map(
            "policysched-policy-delay", NS, {"metadata": {"labels": {"x": "y"}}})
    assert write.value.status == 403
