"""Open a report in headless Chromium and check that it rendered: sections, images, console.

Usage::

    from rewardkit.report.browser import check_in_browser, find_chromium
    if find_chromium():
        r = check_in_browser("out/report.html")
        r.ok, r.sections, r.images_loaded, r.images_total, r.console_errors

Chromium is driven over the DevTools protocol through ``--remote-debugging-pipe`` (fd 3 carries
commands in, fd 4 replies out, each message JSON ending in a NUL byte): nothing but the standard
library, no port, no websocket, no downloaded browser build. The page is opened in a fresh
profile; every ``console.error``, uncaught exception and browser log entry of level "error"
(e.g. an image that failed to load) is collected from before navigation until the checks ran.
Chromium comes from the system (Debian's ``chromium``); ``REWARDKIT_CHROMIUM`` overrides it.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._json import JsonMixin

__all__ = ["BrowserCheck", "check_in_browser", "find_chromium"]

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
)
CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")

# Run in the page once it has loaded: wait for every image to decode (or fail), then report.
PROBE = """
(async () => {
  const imgs = Array.from(document.images);
  const decoded = await Promise.all(imgs.map(i => i.decode().then(() => true, () => false)));
  return {
    title: document.title,
    sections: Array.from(document.querySelectorAll("section[data-section]"))
      .map(s => s.dataset.section),
    images: imgs.map((img, k) => ({
      alt: img.alt,
      section: img.closest("section") ? img.closest("section").dataset.section : null,
      loaded: decoded[k] && img.complete && img.naturalWidth > 0 && img.naturalHeight > 0,
    })),
    external: Array.from(document.querySelectorAll("[src], [href]"))
      .map(e => e.getAttribute("src") || e.getAttribute("href"))
      .filter(u => !u.startsWith("data:") && !u.startsWith("#")),
  };
})()
"""


@dataclass(frozen=True)
class BrowserCheck(JsonMixin):
    """What the browser saw. ``ok``: every image loaded, no console error, nothing external."""

    url: str
    title: str
    sections: tuple[str, ...]
    images_total: int
    images_loaded: int
    broken_images: tuple[str, ...]  # "section/alt" of each image that did not load
    console_errors: tuple[str, ...]
    external_refs: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return (
            self.images_loaded == self.images_total
            and not self.console_errors
            and not self.external_refs
        )


def find_chromium() -> str | None:
    """The Chromium executable: ``$REWARDKIT_CHROMIUM``, else the first on PATH, else None."""
    env = os.environ.get("REWARDKIT_CHROMIUM")
    if env:
        return env if shutil.which(env) else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class _Pipe:
    """The DevTools protocol over Chromium's debugging pipe."""

    def __init__(self, write_fd: int, read_fd: int, deadline: float) -> None:
        self.w, self.r, self.deadline = write_fd, read_fd, deadline
        self.buf = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def _read_message(self) -> dict[str, Any]:
        while b"\0" not in self.buf:
            left = self.deadline - time.monotonic()
            if left <= 0 or not select.select([self.r], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise ConnectionError("Chromium closed the debugging pipe")
            self.buf += chunk
        raw, _, self.buf = self.buf.partition(b"\0")
        msg: dict[str, Any] = json.loads(raw)
        return msg

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read_message()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"DevTools {method} failed: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str) -> dict[str, Any]:
        for i, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(i)
        while True:
            ev = self._read_message()
            if ev.get("method") == method:
                return ev
            self.events.append(ev)


def _high_fd(fd: int) -> int:
    # Move a pipe end above 2..4 so that placing the child's fds 3 and 4 cannot clobber it.
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


def _errors(events: list[dict[str, Any]]) -> list[str]:
    out = []
    for ev in events:
        method, p = ev.get("method"), ev.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            args = " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])
            out.append(f"console.{p['type']}: {args}")
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append(f"exception: {d.get('exception', {}).get('description', d.get('text'))}")
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            out.append(f"log ({e.get('source')}): {e.get('text')} {e.get('url', '')}".strip())
    return out


def check_in_browser(
    path: str | os.PathLike[str], *, chromium: str | None = None, timeout_s: float = 60.0
) -> BrowserCheck:
    """Load ``path`` in headless Chromium and report what rendered (see :class:`BrowserCheck`)."""
    exe = chromium or find_chromium()
    if exe is None:
        raise FileNotFoundError(
            "No Chromium found: install it (Debian: apt-get install chromium) or set "
            "REWARDKIT_CHROMIUM to its path."
        )
    url = Path(path).resolve().as_uri()
    cmd_r, cmd_w = (_high_fd(fd) for fd in os.pipe())
    res_r, res_w = (_high_fd(fd) for fd in os.pipe())

    def child_fds() -> None:  # runs in the child between fork and exec
        os.dup2(cmd_r, 3)
        os.dup2(res_w, 4)

    with tempfile.TemporaryDirectory(prefix="rewardkit-chromium-") as profile:
        proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),
            preexec_fn=child_fds,
        )
        os.close(cmd_r)
        os.close(res_w)
        pipe = _Pipe(cmd_w, res_r, time.monotonic() + timeout_s)
        try:
            target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
            sid = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
                "sessionId"
            ]
            for domain in ("Page", "Runtime", "Log"):
                pipe.send(f"{domain}.enable", session=sid)
            pipe.send("Page.navigate", {"url": url}, session=sid)
            pipe.wait_event("Page.loadEventFired")
            probe = pipe.send(
                "Runtime.evaluate",
                {"expression": PROBE, "awaitPromise": True, "returnByValue": True},
                session=sid,
            )
            if "exceptionDetails" in probe:
                raise RuntimeError(f"the page probe failed: {probe['exceptionDetails']}")
            seen = probe["result"]["value"]
            with contextlib.suppress(ConnectionError):
                pipe.send("Browser.close")
        finally:
            os.close(cmd_w)
            os.close(res_r)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    images = seen["images"]
    return BrowserCheck(
        url=url,
        title=seen["title"],
        sections=tuple(seen["sections"]),
        images_total=len(images),
        images_loaded=sum(bool(i["loaded"]) for i in images),
        broken_images=tuple(f"{i['section']}/{i['alt']}" for i in images if not i["loaded"]),
        console_errors=tuple(_errors(pipe.events)),
        external_refs=tuple(seen["external"]),
    )
