"""`policysched snapshot` as a user runs it: a kubeconfig (and one of its contexts), the
cluster file written, progress on stderr, exit 1 with one line when the cluster cannot be
read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from policysched.cli import main
from policysched.cluster.cluster_file import load_cluster_file

from ..cluster.test_kube import FakeApiServer
from ..cluster.test_snapshot import node, pod


@pytest.fixture()
def server() -> Iterator[FakeApiServer]:
    fake = FakeApiServer(page_size=1).start()
    for name in ("secret-node-1", "secret-node-2"):
        fake.put("nodes", node(name))
    fake.put("pods", pod("secret-pod", node="secret-node-1"))
    fake.put("pods", pod("secret-pending"))
    yield fake
    fake.stop()


def kubeconfig(path: Path, server: FakeApiServer) -> Path:
    """Two contexts: ``live`` (the fake API server) and ``dead`` (nothing listens), the
    current one."""
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "dead",
        "clusters": [{"name": "fake", "cluster": {"server": server.url}},
                     {"name": "nowhere", "cluster": {"server": "http://127.0.0.1:1"}}],
        "users": [{"name": "u", "user": {"token": "secret"}}],
        "contexts": [{"name": "live", "context": {"cluster": "fake", "user": "u"}},
                     {"name": "dead", "context": {"cluster": "nowhere", "user": "u"}}]}
    path.write_text(yaml.safe_dump(config))
    return path


def test_snapshot_writes_a_cluster_file(server: FakeApiServer, tmp_path: Path) -> None:
    out = tmp_path / "cluster.yaml"
    result = CliRunner().invoke(main, [
        "snapshot", "--kubeconfig", str(kubeconfig(tmp_path / "kc", server)),
        "--context", "live", "--page-size", "1", "-o", str(out)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    # one line per page while a kind is being listed (pages of 1 here), one per kind
    assert "Pod: 1 listed...\nPod: 2\n" in result.stderr
    assert result.stderr.endswith(f"wrote {out}: 2 nodes, 2 pods (1 pending)\n")
    text = out.read_text()
    assert text.startswith(f"# policysched snapshot of {server.url} at ")
    assert [o["metadata"]["name"] for o in load_cluster_file(out)] == [
        "secret-node-1", "secret-node-2", "secret-pending", "secret-pod"]


def test_anonymised_to_stdout(server: FakeApiServer, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [
        "snapshot", "--kubeconfig", str(kubeconfig(tmp_path / "kc", server)),
        "--context", "live", "--anonymise"])
    assert result.exit_code == 0, result.stderr
    assert "secret" not in result.stdout and server.url not in result.stdout
    assert result.stdout.startswith("# policysched snapshot at ")
    assert "name: node-1\n" in result.stdout and "nodeName: node-1\n" in result.stdout
    assert result.stderr.endswith("wrote stdout: 2 nodes, 2 pods (1 pending)\n")


def test_an_unreachable_cluster_is_one_line_and_exit_1(server: FakeApiServer,
                                                       tmp_path: Path) -> None:
    out = tmp_path / "cluster.yaml"
    result = CliRunner().invoke(main, [
        "snapshot", "--kubeconfig", str(kubeconfig(tmp_path / "kc", server)),
        "-o", str(out)])  # the current context: nothing listens there
    assert result.exit_code == 1
    assert result.stderr.startswith("cannot read the cluster at http://127.0.0.1:1: ")
    assert "Traceback" not in result.stderr and not out.exists()


def test_an_unknown_context_is_an_error(server: FakeApiServer, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [
        "snapshot", "--kubeconfig", str(kubeconfig(tmp_path / "kc", server)),
        "--context", "nope"])
    assert result.exit_code == 1
    assert "cannot load kubeconfig" in result.stderr and "nope" in result.stderr
