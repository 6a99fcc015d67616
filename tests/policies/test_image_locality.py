"""image-locality: kube-scheduler's ImageLocality score."""

from __future__ import annotations

from typing import Any

from .helpers import MI, Cluster, Harness, node, pod

MIN = 23 * MI
MAX = 1000 * MI


def harness(images: list[str], nodes: list[dict[str, Any]],
            init: tuple[str, ...] = ()) -> Harness:
    spec: dict[str, Any] = {
        "containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]}
    if init:
        spec["initContainers"] = [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]
    return Harness("image-locality", pod(spec=spec), Cluster(nodes))


def test_worked_example() -> None:
    nodes = [node("has", images={"registry/app:v1": 500 * MI}), node("lacks"),
             node("also", images={"registry/app:v1": 500 * MI})]
    h = harness(["registry/app:v1"], nodes)
    # spread 2/3: int(500Mi * 2/3) = 349525333; 100 * (that - 23Mi) / (1000Mi - 23Mi) = 31
    scaled = int(float(500 * MI) * (2 / 3))
    expected = 100 * (scaled - MIN) // (MAX - MIN)
    assert expected == 31
    assert h.raw_scores() == {"has": expected, "lacks": 0, "also": expected}


def test_untagged_image_is_latest() -> None:
    nodes = [node("a", images={"busybox:latest": 600 * MI}),
             node("b", images={"busybox": 600 * MI})]
    h = harness(["busybox"], nodes)
    assert h.variables["images"] == ["busybox:latest"]
    scaled = int(float(600 * MI) * 0.5)
    assert h.raw_scores() == {"a": 100 * (scaled - MIN) // (MAX - MIN), "b": 0}
    # a registry port is not a tag
    assert harness(["registry:5000/app"], nodes).variables["images"] == ["registry:5000/app:latest"]


def test_small_images_score_zero_and_the_sum_is_capped_per_container() -> None:
    nodes = [node("small", images={"tiny:1": 10 * MI}), node("huge", images={"huge:1": 4000 * MI})]
    assert harness(["tiny:1"], nodes).raw_scores() == {"small": 0, "huge": 0}
    # huge: int(4000Mi / 2) = 2000Mi, capped at 1000Mi * 1 container -> 100
    assert harness(["huge:1"], nodes).raw_scores() == {"small": 0, "huge": 100}
    # two containers: the cap doubles
    result = harness(["huge:1", "other:1"], nodes).raw_scores()
    assert result == {"small": 0, "huge": 100 * (2000 * MI - MIN) // (2 * MAX - MIN)}


def test_init_containers_count() -> None:
    nodes = [node("a", images={"setup:1": 800 * MI})]
    assert harness(["app:1"], nodes, init=("setup:1",)).raw_scores() == {
        "a": 100 * (800 * MI - MIN) // (2 * MAX - MIN)}


def test_images_up_to_int64_max_bytes_do_not_overflow() -> None:
    # sizeBytes is an int64: 2^63-1 becomes a double of 2^63, beyond int64 once converted,
    # and 32 of them sum beyond int64. Each term is capped at the maximum first: still 100
    big = 2**63 - 1
    images = [f"app:{i}" for i in range(32)]
    nodes = [node("a", images=dict.fromkeys(images, big)), node("b", images={"app:0": big})]
    assert harness(images, nodes).raw_scores()["a"] == 100
    assert harness(["app:0"], nodes).raw_scores() == {"a": 100, "b": 100}
