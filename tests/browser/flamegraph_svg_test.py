"""strata's SVG flame graph in headless Chromium (issue 22 item 4): click to
zoom, Reset Zoom, search with highlight and the matched share, as
flamegraph.pl's; names stay text; a Python program's graph is as tall as its
Python stacks.

  flamegraph_svg_test.py CASE STRATA DATA_DIR OUT_DIR

CASE:
  zoom     tests/data/cpu-cpu_hotspot-slow: a click zooms (the frame fills the
           width, callers fade, the rest hides), Reset Zoom undoes it;
  search   the same graph: "/" with a term, ?s=TERM, Escape; the matched share
           equals the folded export's share of samples whose stack matches;
  hostile  the fixture with a function renamed to markup and script: it shows
           as text, runs nothing, and is found by search;
  python   a Python program recorded with `strata cpu`: the graph's height
           follows the Python stacks (--native's follows the interpreter's).

Exits 77 (SKIPPED) without Chromium. Screenshots are left in OUT_DIR.
"""
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import python_trace  # noqa: E402
from strata_case import StrataCase  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
HOSTILE = "]]></script><script>window.pwned=1</script><b onmouseover='window.pwned=2'>\"&x"


class Case(StrataCase):
    def __init__(self, strata, data, out):
        super().__init__(strata, out)
        self.data = data

    def export(self, trace, name, fmt, *flags):
        path = os.path.join(self.out, name)
        self.run("export", trace, "--format", fmt, "--force", "-o", path, *flags)
        return path


def folded_share(folded_path, pattern):
    """Share (%) of the samples whose stack holds a frame matching `pattern`."""
    rx = re.compile(pattern)
    total = hit = 0
    for line in open(folded_path, encoding="utf-8", errors="replace"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        n = int(count)
        total += n
        if any(rx.search(f) for f in stack.split(";")):
            hit += n
    return 100.0 * hit / total if total else 0.0


FRAMES_JS = """Array.from(fg.frames, function (f) {
  var r = f.rect.getBoundingClientRect();
  return {name: f.name, cls: f.g.getAttribute('class') || '', x: +f.rect.getAttribute('x'),
          w: +f.rect.getAttribute('width'), y: f.y, ox: f.x, ow: f.w, fill: f.rect.getAttribute('fill'),
          label: f.text.textContent, cx: r.x + r.width / 2, cy: r.y + r.height / 2};
})"""


def frames(b):
    return b.eval(FRAMES_JS)


def open_svg(b, path, query=""):
    b.open("file://" + os.path.abspath(path) + query)
    b.wait_for("typeof fg !== 'undefined' && fg.frames.length > 0")


def center_of(b, element_id):
    return b.eval("(function(){var r=document.getElementById(%r).getBoundingClientRect();"
                  "return [r.x + r.width / 2, r.y + r.height / 2];})()" % element_id)


def zoom_case(c):
    trace = os.path.join(c.data, "cpu-cpu_hotspot-slow", "trace.sqlite")
    svg = c.export(trace, "cpu_hotspot.svg", "svg")
    with cdp.Browser() as b:
        open_svg(b, svg)
        before = frames(b)
        plot = b.eval("fg.plot")
        b.screenshot(os.path.join(c.out, "zoom-0-before.png"))
        # The widest frame of the hot spot that has callers and is not full width.
        target = max((f for f in before if "normalize_line_slow" in f["name"]),
                     key=lambda f: f["w"])
        c.check(target["w"] < plot - 1, "normalize_line_slow starts narrower than the graph")
        b.click(target["cx"], target["cy"])
        after = frames(b)
        z = next(f for f in after if f["ox"] == target["ox"] and f["y"] == target["y"])
        c.check(abs(z["w"] - plot) < 0.1, "clicked frame fills the width (%.1f of %.1f px)" % (
            z["w"], plot))
        parents = [f for f in after if f["cls"] == "parent"]
        c.check(parents and all(f["y"] > target["y"] and abs(f["w"] - plot) < 0.1 for f in parents),
                "its %d callers span the width, faded" % len(parents))
        hidden = [f for f in after if f["cls"] == "hide"]
        c.check(len(hidden) > 0, "%d frames off its path hidden" % len(hidden))
        inside = [f for f in after if f["cls"] == "" and f["y"] < target["y"]]
        ratio = plot / target["w"]
        c.check(all(abs(f["w"] - f["ow"] * ratio) < 0.1 for f in inside),
                "its %d callees scaled by %.2f" % (len(inside), ratio))
        c.check(z["label"] and z["name"].startswith(z["label"].rstrip(".")),
                "its label shows its name (%r)" % z["label"][:40])
        c.check(b.eval("document.getElementById('unzoom').getAttribute('class')") == "",
                "Reset Zoom shown")
        b.screenshot(os.path.join(c.out, "zoom-1-zoomed.png"))
        x, y = center_of(b, "unzoom")
        b.click(x, y)
        reset = frames(b)
        c.check(all(abs(f["w"] - f["ow"]) < 0.01 and f["cls"] == "" for f in reset),
                "Reset Zoom restores every frame")
        c.check(b.eval("document.getElementById('unzoom').getAttribute('class')") == "hide",
                "Reset Zoom hidden again")
        # A zoom link: ?x=&y= opens zoomed on that frame.
        open_svg(b, svg, "?x=%.2f&y=%.2f" % (target["ox"] + 0.01, target["y"]))
        z = next(f for f in frames(b) if f["ox"] == target["ox"] and f["y"] == target["y"])
        c.check(abs(z["w"] - plot) < 0.1, "?x=&y= opens zoomed on the frame")
        c.check(not [m for m in b.console if m.startswith("exception")],
                "no script exception: %s" % b.console)
    c.finish()


def search_case(c):
    trace = os.path.join(c.data, "cpu-cpu_hotspot-slow", "trace.sqlite")
    svg = c.export(trace, "cpu_hotspot.svg", "svg")
    folded = c.export(trace, "cpu_hotspot.folded", "folded")
    term = "normalize_line|Rng::next"
    want = folded_share(folded, term)
    with cdp.Browser() as b:
        open_svg(b, svg)
        # The UI path: "/" opens the prompt; the test supplies its answer.
        b.eval("window.prompt = function () { return %r; }; 0" % term)
        b.key("/")
        b.wait_for("document.getElementById('matched').getAttribute('class') === ''")
        text = b.eval("document.getElementById('matched').textContent")
        m = re.match(r"Matched: ([\d.]+)%$", text)
        c.check(m is not None, "matched share shown: %r" % text)
        got = float(m.group(1)) if m else -1
        # Frames narrower than 0.1 px are not drawn, as in flamegraph.pl.
        c.check(abs(got - want) < 0.5, "matched %.1f%%, the folded stacks say %.1f%%" % (got, want))
        marked = [f for f in frames(b) if f["fill"] == "rgb(230,0,230)"]
        rx = re.compile(term)
        c.check(marked and all(rx.search(f["name"]) for f in marked),
                "%d matching frames highlighted, no other" % len(marked))
        c.check(b.eval("document.getElementById('search').textContent") == "Reset Search",
                "the Search button offers Reset Search")
        b.screenshot(os.path.join(c.out, "search-1-matched.png"))
        # Hovering names the frame.
        b.send("Input.dispatchMouseEvent", type="mouseMoved", x=marked[0]["cx"], y=marked[0]["cy"])
        details = b.eval("document.getElementById('details').textContent")
        c.check(details.startswith("Function: " + marked[0]["name"]), "hover: %r" % details[:60])
        b.key("Escape")
        c.check(not [f for f in frames(b) if f["fill"] == "rgb(230,0,230)"],
                "Escape clears the highlight")
        c.check(b.eval("document.getElementById('matched').getAttribute('class')") == "hide",
                "and the matched share")
        # A search link: ?s=TERM searches on load; a term that is no regexp is plain text.
        open_svg(b, svg, "?s=make_lines%5C(")
        text = b.eval("document.getElementById('matched').textContent")
        want = folded_share(folded, r"make_lines\(")
        got = float(text.split()[1][:-1]) if text.startswith("Matched: ") else -1
        c.check(want > 0 and abs(got - want) < 0.5,
                "?s=make_lines\\(: %r (folded: %.1f%%)" % (text, want))
        b.screenshot(os.path.join(c.out, "search-2-link.png"))
        c.check(b.eval("fg_search('(') >= 0"), "an invalid regexp is searched as text")
        c.check(not [m for m in b.console if m.startswith("exception")],
                "no script exception: %s" % b.console)
    c.finish()


def hostile_case(c):
    trace = os.path.join(c.out, "hostile.sqlite")
    shutil.copy(os.path.join(c.data, "cpu-cpu_hotspot-slow", "trace.sqlite"), trace)
    db = sqlite3.connect(trace)
    n = db.execute("UPDATE StringIds SET value = ? WHERE value LIKE '%normalize_line_slow%'",
                   (HOSTILE,)).rowcount
    db.commit()
    db.close()
    c.check(n > 0, "renamed %d function names" % n)
    svg = c.export(trace, "hostile.svg", "svg")
    with cdp.Browser() as b:
        open_svg(b, svg)
        names = [f["name"] for f in frames(b)]
        c.check(HOSTILE in names, "the hostile name is a frame's name, byte for byte")
        c.check(b.eval("document.querySelectorAll('script').length") == 1,
                "one script element: the graph's own")
        c.check(b.eval("document.querySelectorAll('b').length") == 0, "no element from a name")
        target = next(f for f in frames(b) if f["name"] == HOSTILE)
        b.send("Input.dispatchMouseEvent", type="mouseMoved", x=target["cx"], y=target["cy"])
        b.click(target["cx"], target["cy"])
        b.eval("fg_search(%r)" % "pwned")
        c.check(b.eval("typeof window.pwned") == "undefined", "nothing in a name ran")
        c.check(b.eval("document.getElementById('matched').textContent") != "Matched: 0.0%",
                "search finds the hostile name")
        b.screenshot(os.path.join(c.out, "hostile.png"))
    c.finish()


def svg_height(path):
    m = re.search(r'<svg [^>]*height="(\d+)"', open(path, encoding="utf-8").read())
    return int(m.group(1))


def python_case(c):
    trace = python_trace.record(c.strata, c.out)
    py = c.export(trace, "nested_calls.svg", "svg")
    native = c.export(trace, "nested_calls.native.svg", "svg", "--native")
    folded = c.export(trace, "nested_calls.folded", "folded")
    depth = max(len(line.rpartition(" ")[0].split(";")) for line in open(folded))
    # Title and margins (36 + 24 px) and one 16 px row per level, the root "all" included.
    want = 36 + (depth + 1) * 16 + 24
    c.check(svg_height(py) <= want, "Python view: %d px for stacks %d deep (at most %d px)" % (
        svg_height(py), depth, want))
    c.check(svg_height(py) < svg_height(native),
            "--native is taller (%d px): the interpreter's frames" % svg_height(native))
    with cdp.Browser() as b:
        open_svg(b, py)
        names = [f["name"] for f in frames(b)]
        drawn = any("leaf_work" in n for n in names)
        c.check(drawn, "leaf_work drawn")
        if not drawn:
            print("drawn instead: %s" % ", ".join(sorted(set(names))[:40]))
            print(python_trace.what_strata_said(c.out))
        c.check(not [n for n in names if "_PyEval" in n or "PyObject_" in n],
                "no interpreter frame drawn")
        b.eval("fg_search('leaf_work')")
        b.screenshot(os.path.join(c.out, "python.png"))
        open_svg(b, native)
        b.screenshot(os.path.join(c.out, "python-native.png"))
    c.finish()


def main():
    cases = {"zoom": zoom_case, "search": search_case, "hostile": hostile_case,
             "python": python_case}
    if len(sys.argv) != 5 or sys.argv[1] not in cases:
        sys.exit(__doc__)
    which, strata, data, out = sys.argv[1:]
    if cdp.find_chromium() is None:
        print("SKIPPED: chromium not found (apt-get install chromium)")
        sys.exit(cdp.SKIP)
    cases[which](Case(os.path.abspath(strata), os.path.abspath(data), os.path.abspath(out)))


if __name__ == "__main__":
    main()
