"""Headless Chromium driven through the DevTools protocol over a pipe (``--remote-debugging-pipe``:
JSON messages, each ended by a NUL byte, on the browser's file descriptors 3 and 4), so no websocket
client or browser-automation package is needed. Only what the site's smoke test uses."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from typing import Any

from tests.conftest import _missing

# Debian's /usr/bin/chromium is a shell script whose start-up does not keep descriptors 3 and 4 for the
# browser: the binary it runs comes first
BINARIES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome")


def chromium() -> str:
    """The Chromium binary; missing, the test skips (locally) or fails (CI), naming the package."""
    for name in BINARIES:
        found = shutil.which(name)
        if found:
            return found
    _missing("headless Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")


def _above_nine(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class Browser:
    def __init__(self, binary: str):
        self._profile = tempfile.mkdtemp(prefix="hoodie-docs-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the browser's ends above 9, so the redirections below never overwrite one with the other
        to_browser_r, from_browser_w = (_above_nine(fd) for fd in (to_browser_r, from_browser_w))
        args = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-pipe",
                f"--user-data-dir={self._profile}", "about:blank"]
        # bash puts the pipe ends on the descriptors 3 and 4 the protocol expects (dash: single-digit ones only)
        self._process = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w}', binary, *args],
            pass_fds=(to_browser_r, from_browser_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self._session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def send(self, method: str, session: bool = False, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def _read(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", session=True, expression=expression, returnByValue=True)
        return result["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = 30.0) -> Any:
        """The value of ``expression`` once it is truthy; fails after ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout_s} s for {expression}")
            time.sleep(0.2)

    def open(self, url: str) -> None:
        self.send("Page.navigate", session=True, url=url)
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'")

    def type_text(self, text: str) -> None:
        self.send("Input.insertText", session=True, text=text)

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except (RuntimeError, OSError):
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)
