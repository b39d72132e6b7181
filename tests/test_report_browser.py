"""The generated HTML in a real browser: headless Chromium driven over the DevTools protocol
(a small WebSocket client on the standard library; no browser-automation package).

Every page of a generated report must load without console errors, exceptions or
network requests, hold no script, and draw every inline SVG with a non-zero size.
Skipped, with the reason, only where no Chromium binary is found.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import urllib.parse
from pathlib import Path

import pytest
from report_helpers import mini_runs, with_findings

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_browser() -> str | None:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    return None


BROWSER = find_browser()
pytestmark = [pytest.mark.xdist_group("test_report_browser"),   # its module fixtures: built once, on one worker
              pytest.mark.skipif(BROWSER is None, reason="no Chromium binary found (install the Debian package "
                                                         "'chromium'; .ci/run does) — the HTML was not checked "
                                                         "in a browser")]


class WebSocket:
    """Just enough of RFC 6455 for the DevTools protocol: text frames, client-side masking."""

    def __init__(self, url: str):
        u = urllib.parse.urlparse(url)
        self.sock = socket.create_connection((u.hostname, u.port))     # no timeout: the suite's hang limit ends a silent browser
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET {u.path} HTTP/1.1\r\nHost: {u.hostname}:{u.port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
                          .encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("the browser closed the DevTools connection")
            head += chunk
        status, _, self.buffer = head.partition(b"\r\n\r\n")
        if b" 101 " not in status.split(b"\r\n")[0]:
            raise ConnectionError(status.decode(errors="replace"))

    def _read(self, n: int) -> bytes:
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the browser closed the DevTools connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def send(self, text: str) -> None:
        data = text.encode()
        n = len(data)
        header = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                  bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                  bytes([0x80 | 127]) + struct.pack(">Q", n))
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv(self) -> str:
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise ConnectionError("the browser closed the DevTools connection")
            if opcode == 0x9:      # ping: answer with a (masked) pong
                mask = os.urandom(4)
                self.sock.sendall(bytes([0x8A, 0x80 | len(payload)]) + mask +
                                  bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()

    def close(self) -> None:
        self.sock.close()


class Browser:
    """One headless Chromium with one page; collects console errors, exceptions and requests."""

    def __init__(self, binary: str):
        self.profile = tempfile.mkdtemp(prefix="turnproof-chromium-")
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--remote-debugging-port=0",
             "--host-resolver-rules=MAP * ~NOTFOUND", f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
        url = self._devtools_url()
        if url is None:
            self.close()
            raise RuntimeError("Chromium did not open its DevTools port")
        self.ws = WebSocket(url)
        self.next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=True)

    def _devtools_url(self) -> str | None:
        """The address Chromium says it listens on, read from its standard error as the lines come (no
        waiting on a clock); the rest of what it writes there is drained beside, so that it never blocks."""
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if line.startswith("DevTools listening on "):
                threading.Thread(target=self.proc.stderr.read, daemon=True).start()
                return line.split(" on ", 1)[1].strip()
        return None

    def call(self, method: str, params: dict | None = None, session: bool = False) -> dict:
        self.next_id += 1
        msg: dict = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str) -> dict:
        for k, ev in enumerate(self.events):
            if ev.get("method") == method:
                return self.events.pop(k)
        while True:
            ev = json.loads(self.ws.recv())
            if ev.get("method") == method:
                return ev
            self.events.append(ev)

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_for("Page.loadEventFired")
        self.call("Runtime.evaluate", {"expression": "new Promise(r => requestAnimationFrame(() => r(1)))",
                                       "awaitPromise": True}, session=True)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                           session=True)
        if "exceptionDetails" in result:
            raise RuntimeError(result["exceptionDetails"])
        return result["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors, uncaught exceptions, error log entries and requests that left the file."""
        out = []
        for ev in self.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
                out.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Runtime.exceptionThrown":
                out.append("exception: " + p.get("exceptionDetails", {}).get("text", ""))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append("log: " + p["entry"].get("text", ""))
            elif m == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if not url.startswith(("file:", "data:", "about:")):
                    out.append(f"network request: {url}")
        return out

    def close(self) -> None:
        try:
            if hasattr(self, "ws"):
                self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)


MEASURE = """(async () => {
  const images = [...document.images];
  images.forEach(img => { img.loading = 'eager'; });       // a lazy image loads once asked for
  await Promise.all(images.map(img => img.decode().catch(() => null)));
  const box = e => e.getBoundingClientRect();
  const svgs = [...document.querySelectorAll('svg')].map((s, i) => {
    const r = box(s);
    return {i, width: r.width, height: r.height, label: s.getAttribute('aria-label') || ''};
  });
  const imgs = images.map(img => ({src: img.getAttribute('src'), width: img.naturalWidth, height: img.naturalHeight,
                                   shown: box(img).width}));
  const external = [...document.querySelectorAll('[src], link[href], image, use')]
    .map(e => e.getAttribute('src') || e.getAttribute('href') || e.getAttribute('xlink:href') || '')
    .filter(u => u && /^([a-z][a-z0-9+.-]*:|\\/\\/)/i.test(u) && !u.startsWith('data:'));
  return {svgs, imgs, external, scripts: document.scripts.length, title: document.title,
          text: document.body.innerText.length};
})()"""


@pytest.fixture(scope="module")
def browser():
    b = Browser(BROWSER)
    yield b
    b.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from verifier.report.pages import build_game
    from verifier.report.site import write_site
    from verifier.stategraph import game_graph

    out = tmp_path_factory.mktemp("report") / "site"
    runs = with_findings(mini_runs())
    write_site([build_game(runs, state_graph=game_graph(runs[0].model))], out)
    return out


def check_page(browser: Browser, path: Path) -> dict:
    browser.open(path.resolve().as_uri())
    info = browser.evaluate(MEASURE)
    info["problems"] = browser.problems()
    return info


def test_every_page_renders_its_diagrams_without_errors(browser, site):
    pages = sorted(site.rglob("*.html"))
    assert {"index.html", "mini/index.html", "mini/claim.turn-ends.html"} <= {str(p.relative_to(site)) for p in pages}
    for page in pages:
        info = check_page(browser, page)
        name = str(page.relative_to(site))
        assert info["problems"] == [], f"{name}: {info['problems']}"
        assert info["scripts"] == 0, f"{name} holds a script: it must read without JavaScript"
        assert info["external"] == [], f"{name} refers to external resources: {info['external']}"
        assert info["text"] > 200, f"{name} shows almost no text"
        for svg in info["svgs"]:
            assert svg["width"] > 0 and svg["height"] > 0, f"{name}: SVG {svg} is not drawn"
        for img in info["imgs"]:
            assert img["width"] > 0 and img["height"] > 0 and img["shown"] > 0, f"{name}: diagram {img} is not drawn"
    game = check_page(browser, site / "mini" / "index.html")
    assert len(game["svgs"]) == 2                     # the phase diagram and the state graph, inline
    traces = sum(len(check_page(browser, p)["imgs"]) for p in site.glob("mini/claim.*.html"))
    assert traces == len(list(site.glob("mini/trace.*.svg"))) >= 3   # each trace's diagram, as an image


def test_the_check_catches_a_broken_page(browser, tmp_path):
    """The browser check is not vacuous: a zero-size SVG, a console error and a network request
    are all reported."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><head><title>bad</title></head><body><p>x</p>'
                   '<svg width="0" height="0"></svg><img src="http://example.invalid/x.png">'
                   '<img loading="lazy" src="missing.svg">'
                   '<script>console.error("boom")</script></body></html>', encoding="utf-8")
    info = check_page(browser, bad)
    assert any(s["width"] == 0 for s in info["svgs"])
    assert any(i["src"] == "missing.svg" and i["width"] == 0 for i in info["imgs"])
    assert any("boom" in p for p in info["problems"])
    assert any("example.invalid" in p for p in info["problems"])
    assert info["scripts"] == 1 and info["external"]


REPORTS = Path(__file__).resolve().parents[1] / "reports"
SHIPPED = sorted(REPORTS.glob("*/index.html")) + sorted(REPORTS.glob("index.html"))


@pytest.mark.skipif(not SHIPPED, reason="reports/ holds no generated HTML yet (turnproof report models/*.yaml -o reports)")
def test_shipped_reports_render(browser):
    for page in SHIPPED:
        info = check_page(browser, page)
        assert info["problems"] == [] and info["scripts"] == 0 and info["external"] == [], page.name
        assert all(s["width"] > 0 and s["height"] > 0 for s in info["svgs"]), page.name
        assert all(i["width"] > 0 for i in info["imgs"]), page.name
