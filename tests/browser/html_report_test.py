"""`strata report --format html` in headless Chromium (tests/browser/cdp.py).

usage: html_report_test.py STRATA DATA_DIR OUT_DIR CASE
  gpu       the real H200 capture trace-gpu_matmul-slow_loop_sync: summary and
            findings, table rows against the SQLite file, sort and filter,
            timeline zoom and pan with launch arrows, the CSP blocking a fetch
            and an injected script
  cpu       cpu-cpu_hotspot-slow: the flame graph's click-to-zoom and search
  diagnose  the fixture diagnose-cpu_hotspot-slow (what `strata diagnose` writes
            beside its trace): the verb's verdict, the CPU's hottest
            function and the layer log in the Diagnosis section
  kernels   the real H200 capture kernels-gpu_matmul-slow (strata kernels): the
            kernel sections as ncu prints them, with the grid rule's advice
  torch     trace-torch_train-cpu (a real PyTorch capture, CPU device): the op
            table as torch.profiler's key_averages, and the ops' timeline track
  hostile   the same capture with hostile names (make_traces.py): each one
            shown as text, exactly, and nothing of it run
  compare   `strata compare A B --format html` (slow vs batched) and the per-rank
            page of the same two files: their tables, rows present
  python    tests/browser/nested_calls.py recorded now with `strata cpu` (any
            CPython >= 3.8; SKIPPED without one): the flame graph's "Python
            only" view holds no interpreter frame, "Mixed" holds them
  scale     1M synthetic launches added to the capture: the file stays under
            10 MB and the page draws bins (paint time: bench/html_report_scale.py)
Screenshots go to OUT_DIR/*.png for review. Exit 77 without chromium.
"""

import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402
import make_traces  # noqa: E402
import python_trace  # noqa: E402

strata, data_dir, out_dir, case = sys.argv[1:5]
os.makedirs(out_dir, exist_ok=True)
failures = []


def check(cond, what):
    print(("ok    " if cond else "FAIL  ") + what)
    if not cond:
        failures.append(what)


def report(trace, name):
    out = os.path.join(out_dir, name + ".html")
    r = subprocess.run([strata, "report", trace, "--format", "html", "-o", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("strata report failed (%d): %s" % (r.returncode, r.stderr))
    return out


def open_page(b, path):
    b.open(path)
    b.wait_for("window.strataReport && window.strataReport.ready")


def no_errors(b):
    errors = [c for c in b.console if c.startswith("exception") or "error" in c.lower()]
    check(not errors, "no script error on the console: %s" % errors[:3])


def table_texts(b, report_id, column):
    return b.eval("""Array.from(document.querySelectorAll('.pane[data-report="%s"] tbody tr'))
        .map(r => r.children[%d].textContent)""" % (report_id, column))


def summary_cards(b):
    """The run summary's cards, {label: value}."""
    return dict(b.eval("""Array.from(document.querySelectorAll('#summary .card'))
        .map(c => [c.children[0].textContent, c.children[1].textContent])"""))


def strata_stdout(*args):
    """What `strata ARGS` prints on stdout (it must succeed)."""
    return subprocess.run([strata, *args], capture_output=True, text=True, check=True).stdout


def show_tab(b, report_id):
    b.eval("document.querySelector('.tabs button[data-report=\"%s\"]').click()" % report_id)


def case_gpu(b):
    trace = os.path.join(data_dir, "trace-gpu_matmul-slow_loop_sync", "trace.sqlite")
    page = report(trace, "gpu")
    db = sqlite3.connect(trace)
    kernels = db.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    names = db.execute("SELECT COUNT(DISTINCT demangledName) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    api_names = db.execute("SELECT COUNT(DISTINCT nameId) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0]
    open_page(b, page)
    no_errors(b)
    ids = b.eval("Array.from(document.querySelectorAll('main > section')).map(s => s.id)")
    check(ids[:2] == ["summary", "diagnosis"], "summary and diagnosis come first: %s" % ids)
    check("timeline" in ids and "tables" in ids, "tables and timeline present")
    summary = summary_cards(b)
    check(summary.get("Kernels") == str(kernels), "summary kernels %s == %d" % (summary.get("Kernels"), kernels))
    findings = b.eval("Array.from(document.querySelectorAll('#diagnosis .finding .cause')).map(e => e.textContent)")
    check(len(findings) >= 1 and all(f for f in findings), "diagnosis findings shown: %s" % findings)
    b.screenshot(os.path.join(out_dir, "gpu-top.png"))

    kern = table_texts(b, "cuda_gpu_kern_sum", 0)
    check(len(kern) == names, "kernel table rows %d == distinct kernels %d" % (len(kern), names))
    show_tab(b, "cuda_api_sum")
    api = table_texts(b, "cuda_api_sum", 0)
    check(len(api) == api_names, "API table rows %d == distinct calls %d" % (len(api), api_names))
    # Sort by "Num Calls" ascending then descending; the column's numbers follow.
    col = b.eval("""Array.from(document.querySelectorAll('.pane[data-report="cuda_api_sum"] th'))
        .findIndex(th => th.textContent === 'Num Calls')""")
    check(col >= 0, "API table has Num Calls")
    head = "document.querySelectorAll('.pane[data-report=\"cuda_api_sum\"] th')[%d]" % col
    b.eval(head + ".click()")
    first = [int(x.replace(",", "")) for x in table_texts(b, "cuda_api_sum", col)]
    check(first == sorted(first, reverse=True), "sorted descending by Num Calls: %s" % first[:5])
    b.eval(head + ".click()")
    second = [int(x.replace(",", "")) for x in table_texts(b, "cuda_api_sum", col)]
    check(second == sorted(second), "then ascending: %s" % second[:5])
    name_col = len(b.eval("Array.from(%s.parentNode.children).map(x=>1)" % head)) - 1
    wanted = "cudaDeviceSynchronize"
    b.eval("""(() => { const f = document.querySelector('.pane[data-report="cuda_api_sum"] input.filter');
        f.focus(); f.select(); })()""")
    b.type("devicesync")
    rows = table_texts(b, "cuda_api_sum", name_col)
    check(rows == [wanted], "filter 'devicesync' keeps %s: %s" % (wanted, rows))
    count = b.eval("document.querySelector('.pane[data-report=\"cuda_api_sum\"] .count').textContent")
    check(count.startswith("1 of %d" % api_names), "count line: %s" % count)
    b.eval("document.getElementById('tables').scrollIntoView()")
    b.screenshot(os.path.join(out_dir, "gpu-tables.png"))

    # Timeline: wheel zoom around the pointer, drag to pan, arrows once zoomed in.
    b.eval("document.getElementById('timeline').scrollIntoView()")
    box = b.eval("(() => { const r = document.querySelector('#timeline canvas').getBoundingClientRect();"
                 " return [r.left, r.top, r.width, r.height]; })()")
    full = b.eval("strataReport.timeline.view()")
    x, y = box[0] + 230 + (box[2] - 230) * 0.6, box[1] + 40
    for _ in range(6):
        b.wheel(x, y, -400)
    b.wait_for("strataReport.timeline.view()[1] - strataReport.timeline.view()[0] < %f" % ((full[1] - full[0]) / 20))
    zoomed = b.eval("strataReport.timeline.view()")
    check(zoomed[0] > full[0], "wheel zoomed in around the pointer: %s" % zoomed)
    b.drag(x, y, x - 200, y)
    b.wait_for("strataReport.timeline.view()[0] > %f" % zoomed[0])
    panned = b.eval("strataReport.timeline.view()")
    check(abs((panned[1] - panned[0]) - (zoomed[1] - zoomed[0])) < 1e-3 * (zoomed[1] - zoomed[0]),
          "drag pans without zooming: %s" % panned)
    # One launch and its kernel: with so few on screen the arrow is drawn.
    first_kernel = b.eval("""(() => { const t = JSON.parse(document.getElementById('strata-data').textContent).timeline;
        return t.tracks.find(x => x.kind === 'gpu').events.s[0]; })()""")
    b.eval("strataReport.timeline.setView(%f, %f)" % (first_kernel - 5e4, first_kernel + 1.5e5))
    check(b.eval("strataReport.timeline.arrowsDrawn()") >= 1, "launch arrows drawn when zoomed in")
    b.screenshot(os.path.join(out_dir, "gpu-timeline.png"))

    # The policy: no network, and no script but the page's own.
    fetched = b.eval("fetch('https://example.com/').then(() => 'loaded', e => 'blocked')")
    check(fetched == "blocked", "CSP blocks fetch: %s" % fetched)
    local = b.eval("fetch('gpu.html').then(() => 'loaded', e => 'blocked')")
    check(local == "blocked", "CSP blocks a local fetch: %s" % local)
    b.eval("(() => { const s = document.createElement('script'); s.textContent = 'window.injected = 1';"
           " document.body.appendChild(s); })()")
    check(b.eval("window.injected === undefined"), "CSP blocks an injected inline script")
    csp = b.eval("document.querySelector('meta[http-equiv=\"Content-Security-Policy\"]').content")
    check("default-src 'none'" in csp and "unsafe-inline" not in csp, "policy: %s" % csp)


def case_cpu(b):
    trace = os.path.join(data_dir, "cpu-cpu_hotspot-slow", "trace.sqlite")
    open_page(b, report(trace, "cpu"))
    no_errors(b)
    check(b.eval("!!document.getElementById('flame')"), "flame graph section present")
    rows = b.eval("document.querySelectorAll('.pane[data-report=\"cpu\"] tbody tr').length")
    check(rows > 0, "CPU function table has rows: %d" % rows)
    b.eval("document.getElementById('flame').scrollIntoView()")
    box = b.eval("(() => { const r = document.querySelector('#flame canvas').getBoundingClientRect();"
                 " return [r.left, r.top, r.width, r.height]; })()")
    b.screenshot(os.path.join(out_dir, "cpu-flame.png"))
    row = b.eval("strataReport.flame.rowHeight")
    # Find a frame at depth 2 and click it: the graph zooms to it.
    target = None
    for fx in range(5, 95, 5):
        px = box[2] * fx / 100
        name = b.eval("strataReport.flame.frameAt(%f, %f)" % (px, row * 2.5))
        if name:
            target = (px, name)
            break
    check(target is not None, "a frame at depth 2")
    if target:
        b.click(box[0] + target[0], box[1] + row * 2.5)
        b.wait_for("strataReport.flame.focusName() === %s" % json.dumps(target[1]))
        check(b.eval("strataReport.flame.focusName()") == target[1], "click zoomed to %s" % target[1])
        b.screenshot(os.path.join(out_dir, "cpu-flame-zoomed.png"))
        b.eval("document.querySelector('#flame .toolbar button').click()")
        check(b.eval("strataReport.flame.focusName()") == "all", "reset zooms out to the root")
    b.eval("document.querySelector('#flame input.flame-search').focus()")
    b.type("main")
    b.wait_for("strataReport.flameMatchedShare !== undefined")
    share = b.eval("strataReport.flameMatchedShare")
    check(0.5 < share <= 1.0, "search 'main' matches most of the profile: %s" % share)
    found = b.eval("document.querySelector('#flame .count').textContent")
    check(found.startswith("matched"), "search result line: %s" % found)
    b.screenshot(os.path.join(out_dir, "cpu-flame-search.png"))


def case_diagnose(b):
    trace = os.path.join(data_dir, "diagnose-cpu_hotspot-slow", "trace.sqlite")
    open_page(b, report(trace, "diagnose"))
    no_errors(b)
    text = b.eval("document.getElementById('diagnosis').innerText")
    lines = [ln for ln in text.split("\n") if ln.strip()]
    check(any(ln.startswith("Verdict: the time is on the CPU") for ln in lines),
          "the verdict line says the CPU: %s" % lines[1:2])
    check("normalize_line_slow(std::string const&)" in text,
          "the tutorial's hot spot is named, as the CPU table names it")
    for layer in ("baseline", "cpu", "timeline", "ops", "kernels"):
        check(any(ln.startswith("Layer %s: " % layer) for ln in lines), "layer %s logged" % layer)
    check("No finding:" not in text, "no GPU 'No finding' line under a CPU verdict")
    b.eval("document.getElementById('diagnosis').scrollIntoView()")
    b.screenshot(os.path.join(out_dir, "diagnose.png"))


def case_kernels(b):
    trace = os.path.join(data_dir, "kernels-gpu_matmul-slow", "trace.sqlite")
    open_page(b, report(trace, "kernels"))
    no_errors(b)
    expected = strata_stdout("report", trace, "--report", "kernels")
    text = b.eval("(() => { const p = document.querySelector('#kernels pre');"
                  " return p ? p.textContent : null; })()")
    check(text is not None, "a kernel sections block")
    check(text is not None and text.strip() == expected.strip(),
          "the sections are `strata report --report kernels`' text, exactly")
    check(text is not None and "Section: GPU Speed Of Light Throughput" in text,
          "ncu's section name")
    check(text is not None and "16 blocks on" in text and "132 multiprocessors" in text,
          "the tutorial's 16-block grid on the H200's 132 SMs")
    summary = summary_cards(b)
    check(summary.get("Profiled kernel launches", "0") != "0",
          "summary counts the profiled launches: %s" % summary.get("Profiled kernel launches"))
    b.eval("document.getElementById('kernels').scrollIntoView()")
    b.screenshot(os.path.join(out_dir, "kernels.png"))


def case_torch(b):
    trace = os.path.join(data_dir, "trace-torch_train-cpu", "trace.sqlite")
    open_page(b, report(trace, "torch"))
    no_errors(b)
    expected = json.loads(strata_stdout("report", trace, "--report", "op_sum", "--format",
                                        "json"))["op_sum"]
    names = table_texts(b, "op_sum", 0)
    check(names == [r["Name"] for r in expected],
          "op table: %d rows in the report's order (%s...)" % (len(names), names[:2]))
    ops = sqlite3.connect(trace).execute("SELECT COUNT(*) FROM strata_torch_ops").fetchone()[0]
    tracks = b.eval("""(() => { const t = JSON.parse(document.getElementById('strata-data')
        .textContent).timeline; return t.tracks.map(x => [x.name, x.count]); })()""")
    check(["PyTorch ops", ops] in tracks, "a PyTorch ops track of %d ops: %s" % (ops, tracks))
    b.eval("document.getElementById('timeline').scrollIntoView()")
    b.screenshot(os.path.join(out_dir, "torch-timeline.png"))


def case_hostile(b):
    src = os.path.join(data_dir, "trace-gpu_matmul-slow_loop_sync", "trace.sqlite")
    trace = os.path.join(out_dir, "hostile.sqlite")
    make_traces.hostile(src, trace)
    page = report(trace, "hostile")
    raw = open(page, "rb").read()
    check(raw.count(b"</script>") == 2, "only the page's own two blocks end in </script>")
    check(b"window.pwned" in raw, "the hostile text is in the file (escaped)")
    open_page(b, page)
    no_errors(b)
    check(b.eval("window.pwned === undefined"), "no hostile name ran")
    check(b.eval("document.querySelectorAll('img, b, main script').length") == 0,
          "no element was made from a name")
    kern = set(table_texts(b, "cuda_gpu_kern_sum", len(b.eval(
        "Array.from(document.querySelectorAll('.pane[data-report=\"cuda_gpu_kern_sum\"] th'))")) - 1))
    for label, name in make_traces.HOSTILE:
        if isinstance(name, bytes):
            expected = "bad\ufffd\ufffd\ufffd(utf8"
            shown = [k for k in kern if k.startswith("bad")]
            check(shown == [expected] or (shown and "\ufffd" in shown[0] and shown[0].endswith("(utf8")),
                  "%s: invalid UTF-8 replaced: %r" % (label, shown))
        elif label == "control":
            shown = [k for k in kern if k.startswith("ctl")]
            # Shown as strata's text output shows them (\xNN); never raw.
            check(shown == ["ctl\\x01\\x07\\x1b[31mred\\x7f"],
                  "%s: control bytes shown escaped: %r" % (label, shown))
        else:
            check(name in kern, "%s: shown exactly as text (%d chars)" % (label, len(name)))
    b.screenshot(os.path.join(out_dir, "hostile.png"))
    show_tab(b, "cuda_gpu_kern_sum")
    b.eval("document.getElementById('tables').scrollIntoView()")
    b.screenshot(os.path.join(out_dir, "hostile-tables.png"))


def case_compare(b):
    a = os.path.join(data_dir, "trace-gpu_matmul-slow_loop_sync", "trace.sqlite")
    bb = os.path.join(data_dir, "trace-gpu_matmul-batched", "trace.sqlite")
    page = os.path.join(out_dir, "compare.html")
    with open(page, "wb") as f:
        r = subprocess.run([strata, "compare", a, bb, "--format", "html"], stdout=f)
    check(r.returncode == 0, "compare --format html exits 0")
    open_page(b, page)
    no_errors(b)
    tabs = b.eval("Array.from(document.querySelectorAll('.tabs button')).map(x => x.dataset.report)")
    check("wall" in tabs and "cuda_gpu_kern_sum" in tabs, "compare tabs: %s" % tabs)
    show_tab(b, "cuda_gpu_kern_sum")
    rows = table_texts(b, "cuda_gpu_kern_sum", 0)
    check(len(rows) >= 1, "kernels side by side: %d rows" % len(rows))
    b.screenshot(os.path.join(out_dir, "compare.png"))
    r = subprocess.run([strata, "report", a, bb, "--format", "html", "-o",
                        os.path.join(out_dir, "ranks.html")], capture_output=True)
    check(r.returncode == 0, "per-rank page exits 0")
    open_page(b, os.path.join(out_dir, "ranks.html"))
    no_errors(b)
    rows = table_texts(b, "rank_sum", 0)
    check(len(rows) == 2, "rank_sum: one row per file: %d" % len(rows))
    b.screenshot(os.path.join(out_dir, "ranks.png"))


def flame_search(b, term):
    """The share of the samples the flame graph's search matches for `term`."""
    b.eval("""(() => { const s = document.querySelector('#flame input.flame-search');
        s.value = %s; s.dispatchEvent(new Event('input')); })()""" % json.dumps(term))
    return b.eval("document.querySelector('#flame .count').textContent")


def case_python(b):
    trace = python_trace.record(strata, out_dir)
    open_page(b, report(trace, "python"))
    no_errors(b)
    views = b.eval("""Array.from(document.querySelectorAll('#flame input[name=flameview]'))
        .map(r => [r.value, r.checked])""")
    check(views == [["python", True], ["mixed", False]],
          "the flame graph offers Python only (shown first) and Mixed: %s" % views)
    b.eval("document.getElementById('flame').scrollIntoView()")
    python_leaf = flame_search(b, "leaf_work")
    check(python_leaf.startswith("matched") and not python_leaf.startswith("matched 0.0%"),
          "Python only: leaf_work found (%s)" % python_leaf)
    python_eval = flame_search(b, "_PyEval_EvalFrameDefault")
    check(python_eval.startswith("matched 0.0%"),
          "Python only: no interpreter frame (%s)" % python_eval)
    b.screenshot(os.path.join(out_dir, "python-flame-python.png"))
    b.eval("document.querySelector('#flame input[value=mixed]').click()")
    mixed_eval = flame_search(b, "_PyEval_EvalFrameDefault")
    check(mixed_eval.startswith("matched") and not mixed_eval.startswith("matched 0.0%"),
          "Mixed: the interpreter's frames are there (%s)" % mixed_eval)
    mixed_leaf = flame_search(b, "leaf_work")
    check(not mixed_leaf.startswith("matched 0.0%"), "Mixed: leaf_work too (%s)" % mixed_leaf)
    b.screenshot(os.path.join(out_dir, "python-flame-mixed.png"))
    # cProfile's columns: ncalls tottime percall cumtime percall filename:lineno(function)
    functions = table_texts(b, "cpu", 6)
    check(bool(functions) and functions[0].endswith("nested_calls.py:6(leaf_work)"),
          "the CPU function table, as pstats prints it, leads with leaf_work: %s" % functions[:1])
    no_errors(b)


def case_scale(b):
    src = os.path.join(data_dir, "trace-gpu_matmul-slow_loop_sync", "trace.sqlite")
    trace = os.path.join(out_dir, "scale-1m.sqlite")
    make_traces.scale(src, trace, 1_000_000)
    page = report(trace, "scale-1m")
    size = os.path.getsize(page)
    check(size < 10 * 1000 * 1000, "1M launches: %d bytes < 10 MB" % size)
    os.remove(trace)
    open_page(b, page)
    no_errors(b)
    summary = summary_cards(b)
    check(int(summary["Kernels"]) > 1_000_000, "summary counts every kernel: %s" % summary["Kernels"])
    b.eval("document.getElementById('timeline').scrollIntoView()")
    b.screenshot(os.path.join(out_dir, "scale-timeline.png"))
    v = b.eval("strataReport.timeline.view()")
    b.eval("strataReport.timeline.setView(%f, %f)" % (v[1] * 0.5, v[1] * 0.5 + v[1] / 5000))
    no_errors(b)
    b.screenshot(os.path.join(out_dir, "scale-timeline-zoomed.png"))


with cdp.Browser() as browser:
    {"gpu": case_gpu, "cpu": case_cpu, "diagnose": case_diagnose, "kernels": case_kernels,
     "torch": case_torch, "hostile": case_hostile, "compare": case_compare,
     "python": case_python,
     "scale": case_scale}[case](browser)
    if failures:
        print("console:", "\n".join(browser.console[-20:]))
if failures:
    sys.exit("%d check(s) failed" % len(failures))
