"""``Worker``: a daemon thread running one loop until stopped, as the policy reloader, its
directory and ConfigMap watchers and the leader elector do."""

from __future__ import annotations

import threading

from ..threads import Thread


class Worker:
    """Runs ``_run`` on a daemon thread named ``thread_name`` from ``start`` until
    ``stop``; ``_run`` watches ``_stop``. ``_interrupt`` wakes a ``_run`` blocked on
    something other than ``_stop``."""

    thread_name = "policysched-worker"

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        self._stop.set()
        self._interrupt()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        raise NotImplementedError

    def _interrupt(self) -> None:
        """Nothing to wake by default."""
