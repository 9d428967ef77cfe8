"""A minimal Chrome DevTools Protocol client: Python standard library only.

Starts headless Chromium with a fresh profile, connects to its page target
over a WebSocket (RFC 6455, written here: client frames masked, server
frames read with fragmentation, ping and close), sends commands and keeps
every event, so a test can ask what the console said.
"""
import base64
import hashlib
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-default-apps", "--disable-extensions", "--mute-audio",
                  "--remote-debugging-port=0"]


def find_chromium():
    for name in (os.environ.get("GPUBENCH_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


class WebSocket:
    GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    def __init__(self, host, port, path, timeout=30):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                           % (path, host, port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise ConnectionError("websocket handshake: connection closed")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        if " 101 " not in lines[0] + " ":
            raise ConnectionError("websocket handshake refused: " + lines[0])
        want = base64.b64encode(hashlib.sha1((key + self.GUID).encode()).digest()).decode()
        if not any(l.lower().startswith("sec-websocket-accept:") and l.split(":", 1)[1].strip() == want for l in lines):
            raise ConnectionError("websocket handshake: bad Sec-WebSocket-Accept")

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(max(65536, n - len(self.buf)))
            if not chunk:
                raise ConnectionError("websocket closed")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _send_frame(self, opcode, payload):
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
        self.sock.sendall(head + mask + masked)

    def send(self, text):
        self._send_frame(0x1, text.encode())

    def recv(self):
        """The next whole text message (continuation frames joined)."""
        parts = []
        while True:
            b0, b1 = self._read(2)
            opcode, n = b0 & 0x0F, b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
            if opcode == 0x9:  # ping
                self._send_frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise ConnectionError("websocket closed by the browser")
            if opcode in (0x0, 0x1, 0x2):
                parts.append(payload)
                if b0 & 0x80:
                    return b"".join(parts).decode()

    def close(self):
        try:
            self._send_frame(0x8, b"")
        except OSError:
            pass
        self.sock.close()


class Browser:
    """One headless Chromium and its first page.  events: every CDP event."""

    def __init__(self, width=1400, height=1000, flags=()):
        self.exe = find_chromium()
        self.profile = tempfile.mkdtemp(prefix="gpubench-chromium-")
        self.proc = subprocess.Popen([self.exe] + CHROMIUM_FLAGS + list(flags) + ["--user-data-dir=" + self.profile,
                                                                    "--window-size=%d,%d" % (width, height),
                                                                    "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while True:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    lines = f.read().split("\n")
                if len(lines) >= 2 and lines[0].strip():
                    self.port = int(lines[0])
                    break
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError("chromium did not start (exit %s)" % self.proc.poll())
            time.sleep(0.05)
        page = None
        while page is None and time.time() < deadline:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % self.port, timeout=10) as r:
                page = next((t for t in json.load(r) if t.get("type") == "page"), None)
            if page is None:
                time.sleep(0.1)
        if page is None:
            raise RuntimeError("chromium has no page target")
        path = page["webSocketDebuggerUrl"].split(str(self.port), 1)[1]
        self.ws = WebSocket("127.0.0.1", self.port, path)
        self.next_id = 0
        self.events = []
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def call(self, method, params=None, timeout=30):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params or {}}))
        self.ws.sock.settimeout(timeout)
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def eval(self, expression, timeout=30):
        """The value of a JS expression (awaited when it is a promise)."""
        r = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                           "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in r:
            raise RuntimeError("JS exception in %r: %s" % (expression[:80], r["exceptionDetails"]))
        return r["result"].get("value")

    def wait_for(self, expression, timeout=15, what=None):
        deadline = time.time() + timeout
        while True:
            v = self.eval(expression)
            if v:
                return v
            if time.time() > deadline:
                raise AssertionError("timed out waiting for " + (what or expression))
            time.sleep(0.05)

    def goto(self, url):
        self.call("Page.navigate", {"url": url})

    def key(self, key, code=None, keycode=None):
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", {"type": kind, "key": key, "code": code or key,
                                                 "windowsVirtualKeyCode": keycode or 0})

    def screenshot(self, path):
        """The whole page, not only the viewport."""
        m = self.call("Page.getLayoutMetrics")
        size = m.get("cssContentSize") or m["contentSize"]
        r = self.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))

    def problems(self):
        """Console errors and warnings, uncaught exceptions and error log
        entries (failed loads, CSP violations), as strings."""
        out = []
        for e in self.events:
            m, p = e["method"], e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                out.append("console.%s: %s" % (p["type"], " ".join(
                    str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
            elif m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append("exception: %s %s" % (d.get("text", ""), d.get("exception", {}).get("description", "")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
                en = p["entry"]
                out.append("log.%s: %s %s" % (en["level"], en.get("text", ""), en.get("url", "")))
        return out

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.ws.close()
        except Exception:
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)
