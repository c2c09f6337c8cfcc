# SPDX-License-Identifier: BSD-3-Clause
"""Debian's headless Chromium (scripts/install-deps.sh installs it) driven
through the DevTools protocol over a pipe (--remote-debugging-pipe: JSON
messages ending in NUL on file descriptors 3 and 4), so a test can open a
page, click, type and read the page back with no package beyond the
standard library."""

import json
import os
import shutil
import subprocess
import tempfile
import time


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """One headless Chromium with one tab: open(url), js(expression)."""

    def __init__(self, timeout=60):
        self.timeout = timeout
        self.profile = tempfile.TemporaryDirectory(prefix="iok-chromium-")
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        # the child reads commands on fd 3, writes answers on fd 4
        self.proc = subprocess.Popen(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={self.profile.name}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=lambda: (os.dup2(to_chrome_r, 3), os.dup2(from_chrome_w, 4)),
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._id, self._buffer, self.session = 0, b"", None
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]

    def call(self, method, **params):
        """One protocol command; its result (an error raises)."""
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if self.session and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read()
            if answer.get("id") == self._id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]

    def _read(self):
        while b"\0" not in self._buffer:
            chunk = os.read(self._from_chrome, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its pipe (did it start?)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def js(self, expression):
        """The value of a JavaScript expression in the page (awaited)."""
        out = self.call(
            "Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True
        )
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression}: {out['exceptionDetails']}")
        return out["result"].get("value")

    def wait(self, expression, seconds=None):
        """Polls until the expression is truthy; its value, or None at the end."""
        end = time.monotonic() + (seconds or self.timeout)
        while time.monotonic() < end:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.2)
        return None

    def open(self, url):
        """Navigates and waits for the page to load; the URL it ended at."""
        self.call("Page.navigate", url=url)
        self.wait(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")
        return self.js("location.href")

    def type(self, text):
        """Types into the focused element, as keys are pressed."""
        for c in text:
            self.call("Input.dispatchKeyEvent", type="keyDown", text=c, key=c)
            self.call("Input.dispatchKeyEvent", type="keyUp", key=c)

    def close(self):
        try:
            os.close(self._to_chrome)
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._from_chrome)
        self.profile.cleanup()
