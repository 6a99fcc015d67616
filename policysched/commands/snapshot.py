"""``policysched snapshot``: a live cluster written as a cluster file that ``simulate``,
``explain``, ``diff`` and policy tests read unchanged (``cluster.snapshot`` lists and trims
the objects; ``cluster.anonymiser`` replaces names and labels on request).

The objects are checked as the cluster-file reader checks a file's (``check_objects``)
before anything is written. The YAML is PyYAML's, whose quoting the reader reads back as
written; it is not parsed again, which would take most of the time. The file starts with
comments saying when it was taken: ``simulate`` starts its clock at the file's latest
creationTimestamp unless told ``--now`` (the time of the snapshot, given in the header).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from ..cluster.anonymiser import Anonymiser
from ..cluster.cluster_file import ClusterFileError, check_objects
from ..cluster.kube import DEFAULT_BURST, DEFAULT_QPS, LIST_PAGE_SIZE
from ..cluster.memory import NODE, POD
from ..cluster.snapshot import ListProgress, snapshot
from ..cluster.transport import ApiError, TokenBucket, Transport
from ..errors import UserError
from ..model.objects import format_timestamp
from ..service.main import api_client
from . import messages


@dataclass(frozen=True)
class Written:
    """A snapshot's text (the cluster file) and what it holds, per kind."""

    text: str
    counts: dict[str, int]
    pending: int


def take_snapshot(kubeconfig: str | None, context: str | None, *, anonymise: bool = False,
                  keep_keys: Sequence[str] = (), page_size: int = LIST_PAGE_SIZE,
                  on_progress: Callable[[ListProgress], None] | None = None,
                  clock: Callable[[], float] = time.time) -> Written:
    """The cluster of ``kubeconfig`` (resolved as ``run`` resolves it; ``context``: one of
    its contexts) as a cluster file's text. Raises ``UserError``."""
    api = api_client(kubeconfig, context)
    transport = Transport(api, TokenBucket(DEFAULT_QPS, DEFAULT_BURST))
    taken = clock()
    try:
        objects = snapshot(transport, on_progress, page_size)
    except ApiError as e:
        raise UserError(messages.SNAPSHOT_FAILED.format(host=transport.host,
                                                        reason=e.message)) from None
    finally:
        transport.close()
        api.close()
    if anonymise:
        objects = Anonymiser(keep_keys).objects(objects)
    counts = Counter(str(o["kind"]) for o in objects)
    pending = sum(1 for o in objects if o["kind"] == POD and not o["spec"].get("nodeName"))
    header = messages.SNAPSHOT_HEADER.format(
        source="" if anonymise else messages.SNAPSHOT_SOURCE.format(host=transport.host),
        at=format_timestamp(int(taken)), now=int(taken), nodes=counts[NODE], pods=counts[POD],
        pending=pending)
    try:  # what simulate would refuse: say it now
        check_objects(objects, messages.SNAPSHOT_NAME)
    except ClusterFileError as e:
        raise UserError(messages.SNAPSHOT_UNREADABLE.format(problems=e)) from None
    return Written(header + render(objects), dict(counts), pending)


def render(objects: Iterable[dict[str, Any]]) -> str:
    """Multi-document YAML, keys sorted (apiVersion, kind, metadata, spec, status)."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return str(yaml.dump_all(objects, Dumper=dumper, sort_keys=True,
                             default_flow_style=False, allow_unicode=True, width=100,
                             explicit_start=True))
