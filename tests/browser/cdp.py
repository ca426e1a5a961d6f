"""A headless Chromium driven over the DevTools protocol, stdlib only.

Chromium runs with --remote-debugging-pipe: it reads CDP commands on fd 3 and
writes replies and events on fd 4, each message one JSON object followed by a
NUL byte. No websocket library, no network port, nothing to install beyond
Debian's `chromium` package (scripts/install-deps).

API (everything a test needs; keep it this small):

    with Browser() as b:                  # starts chromium; skips (exit 77) when absent
        b.open("/path/report.html")        # loads a file:// page, waits for its load event
        b.eval("document.title")           # evaluates JS, returns the JSON value (raises on exception)
        b.wait_for("window.ready === true")  # polls a JS condition (raises TimeoutError)
        b.click(x, y)                      # mouse press+release at CSS pixels
        b.wheel(x, y, dy)                  # mouse wheel (dy > 0 scrolls down / zooms out)
        b.drag(x0, y0, x1, y1)             # press, move, release
        b.key("Enter")                     # a key press (key names as KeyboardEvent.key)
        b.type("text")                     # inserts text in the focused element
        b.screenshot("out.png")            # saves a PNG of the viewport
        b.console                          # list of console messages and exceptions seen
        b.send("Domain.method", **params)  # any other CDP command, returns its result

Browser(width=1400, height=900) sets the viewport. `find_chromium()` returns the
binary or None. Tests exit with status 77 when Chromium is missing (ctest's
SKIP_RETURN_CODE) so that a machine without it reports SKIPPED, never passes.
"""

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class CdpError(RuntimeError):
    pass


class Browser:
    def __init__(self, width=1400, height=900, timeout=30.0):
        self.width = width
        self.height = height
        self.timeout = timeout
        self.console = []
        self._next_id = 0
        self._buffer = b""
        self._events = []

    def __enter__(self):
        binary = find_chromium()
        if binary is None:
            print("SKIPPED: chromium not found (apt-get install chromium)")
            sys.exit(SKIP)
        self._profile = tempfile.mkdtemp(prefix="strata-chromium-")
        # fds 3 and 4 in the child: our write end of its input pipe, our read
        # end of its output pipe.
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()

        def setup():
            # Through fresh descriptors first: either pipe end may already be 3 or 4.
            r, w = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        args = [
            binary, "--headless", "--remote-debugging-pipe", "--no-sandbox",
            "--disable-gpu", "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking",
            "--user-data-dir=" + self._profile,
            "--window-size=%d,%d" % (self.width, self.height), "about:blank",
        ]
        self._proc = subprocess.Popen(args, preexec_fn=setup, pass_fds=(3, 4),
                                      stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        targets = self.send("Target.getTargets", _session=False)["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self._session = self.send("Target.attachToTarget", targetId=page["targetId"],
                                  flatten=True, _session=False)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(domain + ".enable")
        self.send("Emulation.setDeviceMetricsOverride", width=self.width, height=self.height,
                  deviceScaleFactor=1, mobile=False)
        return self

    def __exit__(self, *exc):
        try:
            self.send("Browser.close", _session=False)
        except Exception:
            pass
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)
        shutil.rmtree(self._profile, ignore_errors=True)

    # -- the wire ---------------------------------------------------------
    def _read_message(self, deadline):
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("no message from chromium")
            chunk = os.read(self._from_child, 1 << 20)
            if not chunk:
                raise CdpError("chromium closed its pipe (exit %s)" % self._proc.poll())
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def _note_event(self, msg):
        method = msg.get("method")
        params = msg.get("params", {})
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.console.append(params["type"] + ": " + text)
        elif method == "Runtime.exceptionThrown":
            d = params["exceptionDetails"]
            self.console.append("exception: " + d.get("exception", {}).get("description", d["text"]))
        elif method == "Log.entryAdded":
            self.console.append("log: " + params["entry"]["text"])
        self._events.append(msg)

    def send(self, method, _session=True, **params):
        self._next_id += 1
        msg = {"id": self._next_id, "method": method, "params": params}
        if _session:
            msg["sessionId"] = self._session
        os.write(self._to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CdpError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self._note_event(reply)

    def _wait_event(self, method):
        for i, msg in enumerate(self._events):
            if msg.get("method") == method:
                del self._events[: i + 1]
                return msg
        deadline = time.monotonic() + self.timeout
        while True:
            msg = self._read_message(deadline)
            self._note_event(msg)
            if msg.get("method") == method:
                self._events.clear()
                return msg

    # -- the API ----------------------------------------------------------
    def open(self, path):
        self._events.clear()
        url = path if "://" in path else "file://" + os.path.abspath(path)
        self.send("Page.navigate", url=url)
        self._wait_event("Page.loadEventFired")

    def eval(self, expression):
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            d = result["exceptionDetails"]
            raise CdpError("JS exception in %r: %s" % (
                expression[:80], d.get("exception", {}).get("description", d["text"])))
        return result["result"].get("value")

    def wait_for(self, condition, timeout=None):
        deadline = time.monotonic() + (timeout or self.timeout)
        while time.monotonic() < deadline:
            if self.eval("!!(%s)" % condition):
                return
            time.sleep(0.05)
        raise TimeoutError("condition never held: " + condition)

    def _mouse(self, kind, x, y, **extra):
        self.send("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def click(self, x, y):
        self._mouse("mouseMoved", x, y)
        self._mouse("mousePressed", x, y, button="left", clickCount=1)
        self._mouse("mouseReleased", x, y, button="left", clickCount=1)

    def wheel(self, x, y, dy):
        self._mouse("mouseWheel", x, y, deltaX=0, deltaY=dy)

    def drag(self, x0, y0, x1, y1, steps=8):
        self._mouse("mouseMoved", x0, y0)
        self._mouse("mousePressed", x0, y0, button="left", clickCount=1)
        for i in range(1, steps + 1):
            self._mouse("mouseMoved", x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps,
                        button="left", buttons=1)
        self._mouse("mouseReleased", x1, y1, button="left", clickCount=1)

    def key(self, key):
        codes = {"Enter": 13, "Escape": 27, "Backspace": 8, "Tab": 9}
        params = {"key": key, "windowsVirtualKeyCode": codes.get(key, 0)}
        if key == "Enter":
            params["text"] = "\r"
        self.send("Input.dispatchKeyEvent", type="keyDown", **params)
        self.send("Input.dispatchKeyEvent", type="keyUp", **params)

    def type(self, text):
        self.send("Input.insertText", text=text)

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", format="png")["data"]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path
