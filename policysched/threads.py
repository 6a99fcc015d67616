"""``Thread``: a ``threading.Thread`` whose name is also the OS thread's name (Linux
``comm``, at most 15 bytes), so that ``top -H``, ``ps -L`` and ``/proc/<pid>/task/*/comm``
say which of the scheduler's threads uses the CPU (the end-to-end benchmark's per-thread
table reads them). Elsewhere, or if the call fails, it is an ordinary thread."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading

_PR_SET_NAME = 15
_COMM_BYTES = 15


def _load_prctl() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_prctl = _load_prctl()


def name_os_thread(name: str) -> None:
    """Give the calling OS thread ``name`` (cut to 15 bytes); no-op where unsupported."""
    if _prctl is not None:
        _prctl(_PR_SET_NAME, name.encode()[:_COMM_BYTES], 0, 0, 0)


class Thread(threading.Thread):
    """A thread that names its OS thread after itself when it starts."""

    def run(self) -> None:
        name_os_thread(self.name)
        super().run()


__all__ = ["Thread", "name_os_thread"]
