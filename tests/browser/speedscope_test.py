"""strata's exports opened in speedscope's own app in headless Chromium (issue 22
item 6): the speedscope and Chrome-trace files load, with the tracks and frames
the trace holds on screen.

  speedscope_test.py CASE STRATA DATA_DIR OUT_DIR

CASE is one of:
  cpu     tests/data/cpu-cpu_hotspot-slow exported as speedscope JSON: one track
          per thread, the hottest function (by the export's own weights) first
          in the sandwich table;
  chrome  tests/data/trace-gpu_matmul-slow_loop_sync exported as a Chrome trace:
          one track per thread and stream, the hottest kernel (strata report's
          cuda_gpu_kern_sum) and the launches on them;
  python  a Python program (nested_calls.py) recorded with `strata cpu`: the
          export shows cProfile's view (Python functions, no interpreter frames
          under them); --native shows the mixed stacks, interpreter and all.

speedscope's app is the npm package `speedscope` (dist/release/index.html runs
offline: #localProfilePath=F.js loads F.js, which hands the file over with
speedscope.loadFileFromBase64). It is found in $STRATA_SPEEDSCOPE_DIR or where
scripts/install-deps puts it; without it, or without Chromium, the test exits
77 (SKIPPED) with the reason. Screenshots are left in OUT_DIR for review.
"""
import base64
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import python_trace  # noqa: E402
from strata_case import StrataCase  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
# Frames of CPython's interpreter loop and C API that the mixed view shows
# under every Python frame; the Python view has none of them.
INTERPRETER = re.compile(r"_PyEval_|PyEval_|_PyObject_|PyObject_Vectorcall|_PyFunction_|"
                         r"\bpython3\.\d+\b|libpython")


def speedscope_index():
    default = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                           "strata", "speedscope-1.25.0")
    root = os.environ.get("STRATA_SPEEDSCOPE_DIR") or default
    index = os.path.join(root, "node_modules", "speedscope", "dist", "release", "index.html")
    if not os.path.isfile(index):
        print("SKIPPED: speedscope's app not found at %s (scripts/install-deps installs it; "
              "or set STRATA_SPEEDSCOPE_DIR)" % index)
        sys.exit(cdp.SKIP)
    return index


class Case(StrataCase):
    pass


def loader_for(profile_path, out_dir):
    """F.js beside the screenshots: speedscope runs it with a <script> tag."""
    name = os.path.basename(profile_path)
    data = base64.b64encode(open(profile_path, "rb").read()).decode()
    loader = os.path.join(out_dir, name + ".load.js")
    with open(loader, "w") as f:
        f.write("speedscope.loadFileFromBase64(%s, %s);\n" % (json.dumps(name), json.dumps(data)))
    return loader


# The toolbar's middle: "NAME (i/n)", or "NAME" alone for a single track.
TOOLBAR = re.compile(r"Sandwich\n([^\n]*?)(?: \((\d+)/(\d+)\))?\n")


def open_profile(b, index, loader, view=None):
    url = "file://" + index + "#localProfilePath=" + loader
    if view:
        url += "&view=" + view
    b.open("about:blank")  # a new hash alone fires no load event
    b.open(url)
    b.wait_for("/Sandwich\\n.+\\n/.test(document.body.innerText)", timeout=60)
    time.sleep(0.5)  # the flame chart draws on the next frames


def toolbar(b):
    """(track name, index, count) from the toolbar's 'NAME (i/n)'."""
    m = TOOLBAR.search(b.eval("document.body.innerText"))
    if not m:
        return (None, 0, 0)
    return (m.group(1), int(m.group(2) or 1), int(m.group(3) or 1))


def sandwich_names(b):
    """The sandwich table's symbol names, in its order (rows of Total, Self, Symbol Name)."""
    text = b.eval("document.body.innerText")
    if "Symbol Name" not in text:
        return []
    lines = [ln.strip() for ln in text.split("Symbol Name", 1)[1].strip("\n").split("\n")]
    return [lines[i + 2] for i in range(0, len(lines) - 2, 3)]


def step_track(b, key):
    """speedscope's keys: n the next track, p the previous."""
    before = toolbar(b)[1]
    b.eval("window.dispatchEvent(new KeyboardEvent('keypress', {key: %r}))" % key)
    b.wait_for("!document.body.innerText.includes('(%d/')" % before)
    time.sleep(0.2)


def every_track(b, case, label):
    """Walks the tracks in the sandwich view: [(name, names shown)]; a screenshot of each."""
    tracks = []
    while toolbar(b)[1] > 1:  # speedscope opens on the file's activeProfileIndex
        step_track(b, "p")
    name, i, n = toolbar(b)
    while True:
        b.wait_for("document.body.innerText.includes('Symbol Name')")
        tracks.append((name, sandwich_names(b)))
        b.screenshot(os.path.join(case.out, "%s-sandwich-%d.png" % (label, i)))
        if i >= n:
            return tracks
        step_track(b, "n")
        name, i, n = toolbar(b)


def speedscope_top_self(doc, profile_index=0):
    """The frame with the most self weight in one profile of a speedscope file."""
    frames = doc["shared"]["frames"]
    p = doc["profiles"][profile_index]
    self_w = {}
    if p["type"] == "sampled":
        for stack, w in zip(p["samples"], p["weights"]):
            if stack:
                self_w[stack[-1]] = self_w.get(stack[-1], 0) + w
    else:  # evented: time between events at the top of the stack
        stack, last = [], p["startValue"]
        for e in p["events"]:
            if stack:
                self_w[stack[-1]] = self_w.get(stack[-1], 0) + e["at"] - last
            last = e["at"]
            if e["type"] == "O":
                stack.append(e["frame"])
            else:
                stack.pop()
    top = max(self_w, key=self_w.get)
    return frames[top]["name"]


def cpu_case(index, strata, data, out):
    case = Case(strata, out)
    trace = os.path.join(data, "cpu-cpu_hotspot-slow", "trace.sqlite")
    path = os.path.join(out, "cpu_hotspot.speedscope.json")
    case.run("export", trace, "--format", "speedscope", "--force", "-o", path)
    doc = json.load(open(path))
    active = doc.get("activeProfileIndex", 0)
    hottest = speedscope_top_self(doc, active)
    with cdp.Browser() as b:
        loader = loader_for(path, out)
        open_profile(b, index, loader)
        b.screenshot(os.path.join(out, "cpu-time_order.png"))
        name, shown, count = toolbar(b)
        case.check(count == len(doc["profiles"]),
                   "tracks: %d on screen, %d in the file" % (count, len(doc["profiles"])))
        want = doc["profiles"][active]["name"]
        case.check(name == want and shown == active + 1,
                   "track %d %r shown first, the file's active profile %r" % (shown, name, want))
        open_profile(b, index, loader, "sandwich")
        names = sandwich_names(b)
        b.screenshot(os.path.join(out, "cpu-sandwich.png"))
        case.check(bool(names) and names[0] == hottest,
                   "hottest function first in the sandwich: %r (want %r)" % (
                       names[:1], hottest))
        case.check(any("normalize_line_slow" in n for n in names),
                   "the seed's hot spot normalize_line_slow is listed")
        case.check(not [m for m in b.console if m.startswith("exception")],
                   "no exception in speedscope: %s" % [m for m in b.console
                                                       if m.startswith("exception")])
    case.finish()


def chrome_case(index, strata, data, out):
    case = Case(strata, out)
    trace = os.path.join(data, "trace-gpu_matmul-slow_loop_sync", "trace.sqlite")
    path = os.path.join(out, "gpu_matmul.trace.json")
    case.run("export", trace, "--format", "chrome", "--force", "-o", path)
    events = json.load(open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    threads = {(e["pid"], e["tid"]) for e in events if e.get("ph") in ("X", "B")}
    kern = json.loads(case.run("report", trace, "--report", "cuda_gpu_kern_sum", "--format",
                               "json"))["cuda_gpu_kern_sum"]
    kernel = max(kern, key=lambda r: r["Total Time (ns)"])["Name"]
    api = json.loads(case.run("report", trace, "--report", "cuda_api_sum", "--format",
                              "json"))["cuda_api_sum"]
    launch = next(r["Name"] for r in api if r["Name"].startswith("cudaLaunchKernel"))
    with cdp.Browser() as b:
        loader = loader_for(path, out)
        open_profile(b, index, loader)
        b.screenshot(os.path.join(out, "chrome-time_order.png"))
        _, _, count = toolbar(b)
        case.check(count == len(threads),
                   "tracks: %d on screen, %d threads and streams with events in the file" % (
                       count, len(threads)))
        open_profile(b, index, loader, "sandwich")
        tracks = every_track(b, case, "chrome")
        # speedscope's trace-event importer names a frame "NAME {ARGS as JSON}"
        # when the event has args (strata's carry the correlation id, as
        # Kineto's do), so a call is found by its name before the args.
        def called(names, call):
            return any(n == call or n.startswith(call + " {") for n in names)
        with_kernel = [t for t, names in tracks if any(kernel in n for n in names)]
        with_launch = [t for t, names in tracks if called(names, launch)]
        case.check(bool(with_kernel), "kernel %s... on a track (%s)" % (kernel[:40], with_kernel))
        case.check(bool(with_launch), "%s on a track (%s)" % (launch, with_launch))
        case.check(not set(with_kernel) & set(with_launch),
                   "kernels and the calls that launch them on different tracks")
    case.finish()


def python_case(index, strata, data, out):
    case = Case(strata, out)
    trace = python_trace.record(strata, out)
    views = {}
    for view, flags in (("python", []), ("native", ["--native"])):
        path = os.path.join(out, "nested_calls.%s.speedscope.json" % view)
        case.run("export", trace, "--format", "speedscope", "--force", "-o", path, *flags)
        views[view] = (path, json.load(open(path)))

    # The file itself: in the Python view no interpreter frame sits above a
    # Python function in any stack.
    doc = views["python"][1]
    names = [f["name"] for f in doc["shared"]["frames"]]
    named = any("leaf_work" in n for n in names)
    case.check(named, "leaf_work is a frame of the Python view")
    if not named:
        print(python_trace.what_strata_said(out))
    interp = [n for n in names if INTERPRETER.search(n)]
    case.check(not interp, "no interpreter frame in the Python view's file: %s" % interp[:5])

    with cdp.Browser() as b:
        for view, (path, doc) in views.items():
            loader = loader_for(path, out)
            open_profile(b, index, loader)
            b.screenshot(os.path.join(out, "python-%s-time_order.png" % view))
            open_profile(b, index, loader, "sandwich")
            tracks = every_track(b, case, "python-" + view)
            shown = [n for _, ns in tracks for n in ns]
            interp = [n for n in shown if INTERPRETER.search(n)]
            if view == "python":
                # (--native: the interpreter's own functions fill the visible rows.)
                case.check(any("leaf_work" in n for n in shown), "python view: leaf_work on screen")
                case.check(not interp, "python view: no interpreter frame on screen: %s" % interp[:5])
                case.check(any("leaf_work" in n for n in shown[:3]),
                           "python view: leaf_work among the top 3 by self time: %s" % shown[:3])
            else:
                case.check(bool(interp), "--native: the interpreter's frames are shown (%s)" %
                           interp[:3])
    case.finish()


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("cpu", "chrome", "python"):
        sys.exit(__doc__)
    which, strata, data, out = sys.argv[1:]
    if cdp.find_chromium() is None:
        print("SKIPPED: chromium not found (apt-get install chromium)")
        sys.exit(cdp.SKIP)
    index = speedscope_index()
    {"cpu": cpu_case, "chrome": chrome_case, "python": python_case}[which](
        index, os.path.abspath(strata), os.path.abspath(data), os.path.abspath(out))


if __name__ == "__main__":
    main()
