"""What a shadow scheduler reports (``policysched run --shadow``): each ``Judgment`` as a
line of the JSON-lines report file, counted in ``policysched_shadow_decisions_total{result,
profile}``, and summed up on the health server's ``/shadow`` (JSON: pods judged, agreement,
counts by result, the latest differences)."""

from __future__ import annotations

import logging
import threading
from collections import Counter, deque
from dataclasses import dataclass
from http import HTTPStatus
from pathlib import Path
from typing import IO, Any, Final

import orjson
from prometheus_client import Counter as MetricCounter

from ..errors import UserError
from ..framework.shadow import AGREE, RESULTS, Judgment, ShadowSettings
from .metrics import SchedulerMetrics

log = logging.getLogger(__name__)

SHADOW_PATH: Final = "/shadow"
CONTENT_TYPE_JSON: Final = "application/json"
RECENT_DIFFERENCES: Final = 50  # the differences /shadow lists, newest last
DECISIONS_METRIC: Final = "policysched_shadow_decisions"

REPORT_OPEN_FAILED = "cannot open the shadow report {path}: {reason}"
LOG_REPORT_WRITE_FAILED = "shadow report %s: a judgment was not written: %s"
LOG_JUDGED = "shadow: %s %s (shadow: %s; actual: %s)"


@dataclass(frozen=True)
class ShadowOptions:
    """``run --shadow``: whose pods to judge, with which profile, and where the report
    file goes (None: no file, /shadow and the metrics only)."""

    settings: ShadowSettings
    report_path: str | None = None


class ShadowReport:
    """Receives the judgments (on the loop thread) and serves their summary (any thread)."""

    def __init__(self, metrics: SchedulerMetrics, report_path: str | None = None,
                 keep: int = RECENT_DIFFERENCES) -> None:
        self.decisions = MetricCounter(
            DECISIONS_METRIC, "Pods of another scheduler judged by the shadow scheduler, by "
            "result: 'agree' (the same node, one scored as high, or both rejected the pod), "
            "'differ' (another node), 'would_reject' (bound, but the shadow would not "
            "bind it), 'would_bind' (rejected, but the shadow would bind it), 'error' (the "
            "shadow's decision was an Error).", ["result", "profile"],
            registry=metrics.registry)
        self.path = report_path
        self.counts: Counter[str] = Counter({result: 0 for result in RESULTS})
        self.differences: deque[dict[str, Any]] = deque(maxlen=keep)
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        if report_path is not None:
            try:
                Path(report_path).parent.mkdir(parents=True, exist_ok=True)
                self._file = open(report_path, "ab")  # noqa: SIM115 (closed by close())
            except OSError as e:
                raise UserError(REPORT_OPEN_FAILED.format(
                    path=report_path, reason=e.strerror or e)) from None

    def record(self, judgment: Judgment) -> None:
        """One judgment: a report line (flushed), the metric, the summary."""
        line = judgment.as_dict()
        self.decisions.labels(judgment.result, judgment.profile).inc()
        with self._lock:
            self.counts[judgment.result] += 1
            if judgment.result != AGREE:
                self.differences.append(line)
        log.debug(LOG_JUDGED, judgment.pod, judgment.result, line["shadow"], line["actual"])
        if self._file is not None:
            try:
                self._file.write(orjson.dumps(line) + b"\n")
                self._file.flush()
            except OSError as e:
                log.warning(LOG_REPORT_WRITE_FAILED, self.path, e)

    def summary(self) -> dict[str, Any]:
        with self._lock:
            judged = sum(self.counts.values())
            return {
                "judged": judged,
                "agreement": round(self.counts[AGREE] / judged, 4) if judged else None,
                "results": dict(self.counts),
                "report": self.path,
                "differences": list(self.differences),
            }

    def page(self) -> tuple[int, str, bytes]:
        """``/shadow``: the summary as JSON."""
        return (HTTPStatus.OK, CONTENT_TYPE_JSON,
                orjson.dumps(self.summary(), option=orjson.OPT_INDENT_2) + b"\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
