import sys
import threading
from pathlib import Path

import pytest

from policysched.threads import Thread


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="OS thread names are Linux's")
def test_the_os_thread_is_named_after_the_thread() -> None:
    seen: list[str] = []

    def read_comm() -> None:
        seen.append(Path(f"/proc/self/task/{threading.get_native_id()}/comm").read_text().strip())

    thread = Thread(target=read_comm, name="informer-PodDisruptionBudget")
    thread.start()
    thread.join()
    assert seen == ["informer-PodDis"]  # the kernel keeps 15 bytes
