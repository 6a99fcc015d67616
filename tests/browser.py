"""A headless Chromium (Debian's ``chromium`` package; ``make test`` installs it when it is
missing) that renders a local HTML file: the DOM after its scripts ran, the browser's log
(console messages and uncaught errors), or a screenshot.

``python -m tests.browser screenshot PAGE.html OUT.png [--width W --height H]`` is what
``make report-demo`` runs. ``POLICYSCHED_CHROMIUM`` names another browser binary.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome")
TIMEOUT = 120  # seconds for one page
VIRTUAL_TIME = 5000  # ms of page time the browser lets pass before it dumps or shoots
NOT_FOUND = ("no Chromium found ({looked}): `make test` installs Debian's package "
             "(apt-get install -y chromium); or set POLICYSCHED_CHROMIUM to a Chromium binary")


class BrowserMissing(RuntimeError):
    pass


@dataclass(frozen=True)
class RenderedPage:
    dom: str  # the serialised DOM after the page's scripts ran
    log: str  # the browser's stderr: console messages, uncaught errors

    @property
    def console(self) -> list[str]:
        """The page's console messages in the log, uncaught exceptions included ("Uncaught
        TypeError: ..."): Chromium logs every level as INFO:CONSOLE."""
        return [line for line in self.log.splitlines() if ":CONSOLE" in line]


def find_chromium() -> str:
    """The browser binary. Raises ``BrowserMissing``."""
    override = os.environ.get("POLICYSCHED_CHROMIUM")
    names = (override,) if override else NAMES
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    looked = (f"POLICYSCHED_CHROMIUM={override}" if override
              else "looked for " + ", ".join(NAMES) + " on PATH")
    raise BrowserMissing(NOT_FOUND.format(looked=looked))


def _run(page: Path, *options: str, fragment: str = "") -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory(prefix="policysched-browser-") as profile:
        return subprocess.run(
            [find_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-extensions", "--hide-scrollbars",
             f"--user-data-dir={profile}", f"--virtual-time-budget={VIRTUAL_TIME}",
             "--enable-logging=stderr", "--v=0", *options,
             page.resolve().as_uri() + (f"#{fragment}" if fragment else "")],
            capture_output=True, text=True, timeout=TIMEOUT, check=False)


def render(page: Path, fragment: str = "") -> RenderedPage:
    """``page``'s DOM once its scripts ran (opened at ``#fragment``), and the browser's
    log."""
    done = _run(page, "--dump-dom", fragment=fragment)
    if done.returncode != 0 or not done.stdout:
        raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return RenderedPage(done.stdout, done.stderr)


def screenshot(page: Path, out: Path, width: int = 1280, height: int = 1500) -> None:
    """A PNG of ``page``'s first ``width`` x ``height`` pixels."""
    out.unlink(missing_ok=True)
    done = _run(page, f"--screenshot={out.resolve()}", f"--window-size={width},{height}")
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.browser")
    commands = parser.add_subparsers(dest="command", required=True)
    shot = commands.add_parser("screenshot", help="a PNG of an HTML file")
    shot.add_argument("page", type=Path)
    shot.add_argument("out", type=Path)
    shot.add_argument("--width", type=int, default=1280)
    shot.add_argument("--height", type=int, default=1500)
    args = parser.parse_args()
    try:
        screenshot(args.page, args.out, args.width, args.height)
    except (BrowserMissing, RuntimeError) as e:
        parser.exit(1, f"{e}\n")
    print(f"wrote {args.out} ({args.out.stat().st_size // 1024} KiB)")


if __name__ == "__main__":
    main()
