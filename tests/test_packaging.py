"""The wheel is the product: it carries every module, the built-in policy library and the
JSON Schemas, and the installed command works from any directory without the source tree."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO_CLUSTER = ROOT / "examples" / "demo-cluster.yaml"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip wheel .`` of a copy of the project (the build must not write into the work tree),
    offline: the venv's setuptools is the build backend."""
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", "build")
    for name in ("policysched", "policies", "schemas"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--quiet", "-w", str(tmp / "dist"), str(source)],
        check=True, cwd=tmp, timeout=300)
    (built,) = (tmp / "dist").glob("policysched-*.whl")
    return built


def test_the_wheel_carries_every_module_asset_policy_and_schema(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {f"policysched/{p.relative_to(ROOT / 'policysched').as_posix()}"
                for p in (ROOT / "policysched").rglob("*") if p.suffix in (".py", ".css", ".js")}
    expected |= {f"policysched/policies/{p.name}" for p in (ROOT / "policies").glob("*.yaml")}
    expected |= {f"policysched/schemas/{p.name}" for p in (ROOT / "schemas").glob("*.json")}
    assert "policysched/policies/scheduler-config.yaml" in expected
    assert not expected - names, f"missing from the wheel: {sorted(expected - names)}"


def test_the_installed_command_finds_its_library_from_another_directory(
        wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
         "--target", str(site), str(wheel)],
        check=True, timeout=300)
    work = tmp_path / "elsewhere"
    work.mkdir()
    cluster = shutil.copy(DEMO_CLUSTER, work / "cluster.yaml")
    # the installed copy first; the dependencies from this interpreter's environment
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, *args], cwd=work, env=env, capture_output=True,
                              text=True, timeout=120)

    where = run("-c", "import json, policysched, policysched.resources as r; print(json.dumps("
                "[policysched.__file__, str(r.BUILTIN_POLICIES), str(r.SCHEMA_DIRECTORY)]))")
    assert where.returncode == 0, where.stderr
    module, policies, schemas = (Path(p) for p in json.loads(where.stdout))
    assert module.is_relative_to(site)
    assert policies == site / "policysched" / "policies"
    assert schemas == site / "policysched" / "schemas"

    validate = run("-m", "policysched", "validate", str(policies))
    assert validate.returncode == 0, validate.stdout + validate.stderr

    simulate = run("-m", "policysched", "simulate", "--cluster", str(cluster), "-o", "json")
    assert simulate.returncode == 0, simulate.stderr
    pods = json.loads(simulate.stdout)["pods"]
    assert len(pods) == 10
    assert sum(pod["node"] is not None for pod in pods) == 9
