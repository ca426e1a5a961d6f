"""Helpers shared by the strata cpu accuracy benchmarks (bench/cpu_*.sh)."""
import json
import re
import sqlite3
import statistics


def strata_json(text):
    """The JSON report from `strata cpu --format json` stdout. The target's own
    stdout comes first on the same stream (strata leaves it alone), so decode
    from the first line that opens the report object."""
    m = re.search(r"^\{\s*$", text, re.M)
    if not m:
        raise ValueError("no JSON report in strata's stdout")
    return json.JSONDecoder().raw_decode(text[m.start():])[0]


def _strip_groups(s, open_ch, close_ch):
    out, depth = [], 0
    for c in s:
        if c == open_ch:
            depth += 1
        elif c == close_ch and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def base_name(name):
    """Function base name for matching strata against callgrind: no arguments,
    no template arguments, no return type, no namespaces or classes, no ABI tags
    or clone suffixes. 'void (anonymous namespace)::for_each_word<...>(...)' and
    'for_each_word<cpu_hotspot::...::<lambda(...)> >' both give 'for_each_word'."""
    s = name.replace("(anonymous namespace)", "anon")
    s = s.replace("[abi:cxx11]", "")
    s = re.sub(r"\{lambda\([^)]*\)#\d+\}", "lambda", s)
    s = _strip_groups(s, "<", ">")
    s = _strip_groups(s, "(", ")")
    s = re.sub(r"\s+const$", "", s.strip())
    s = s.split(" ")[-1]          # drop a return type
    s = s.split("::")[-1]
    s = re.sub(r"\.(constprop|isra|part|cold|lto_priv)(\.\d+)*$", "", s)
    return ALIASES.get(s, s)


# glibc symbols at the same address: tools pick either name.
ALIASES = {
    "__memmove_avx_unaligned_erms": "__memcpy_avx_unaligned_erms",
    "__memmove_avx_unaligned": "__memcpy_avx_unaligned",
}


def perf_self(report_text):
    """Per-symbol self samples from `perf report --stdio -q --no-children
    --sort sym -F sample,sym` (rows: 'N  [.] name')."""
    out, total = {}, 0
    for line in report_text.splitlines():
        m = re.match(r"^\s*(\d+)\s+\[(.)\]\s+(.*?)\s*$", line)
        if not m:
            continue
        n = int(m.group(1))
        total += n
        out[m.group(3)] = out.get(m.group(3), 0) + n
    return out, total


def label_function(label):
    """'file:line(function)' -> 'function'."""
    m = re.match(r"^(.*?):(-?\d+)\((.*)\)$", label, re.S)
    return m.group(3) if m else label


def label_file(label):
    m = re.match(r"^(.*?):(-?\d+)\((.*)\)$", label, re.S)
    return m.group(1) if m else ""


def trace_symbol_self(path):
    """Per-function self weight at symbol granularity from a strata trace: each
    sample goes to its innermost frame that is not inlined (strata_cpu_frames.
    inlined = 0) and not a kernel frame, which is how callgrind (without
    --dump-instr) attributes cost: inlined code counts to the function it was
    inlined into. Returns ({function: weight}, total weight)."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    names = dict(db.execute("select id, value from StringIds"))
    stacks = {}
    for sid, depth, inl, kind, fid in db.execute(
        "select s.id, s.depth, f.inlined, f.kind, f.function_id from strata_cpu_stacks s "
        "join strata_cpu_frames f on f.id = s.frame_id order by s.id, s.depth"
    ):
        if sid in stacks:
            continue
        if kind == "kernel" or inl:
            continue
        stacks[sid] = names.get(fid, "?")
    out, total = {}, 0
    for sid, w in db.execute("select stack_id, sum(weight) from strata_cpu_samples group by stack_id"):
        total += w
        fn = stacks.get(sid, "[unknown]") if sid is not None else "[unwind failed]"
        out[fn] = out.get(fn, 0) + w
    return out, total


def callgrind_self(annotate_text):
    """Per-function self Ir from `callgrind_annotate --inclusive=no --threshold=100`.
    callgrind_annotate splits a function by source file (inlined headers), so
    rows are summed by function name. Returns ({function: Ir}, program total)."""
    total = None
    out = {}
    row = re.compile(r"^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$")
    # Only the PROGRAM TOTALS line and the function table: the auto-annotated
    # source that follows has rows of the same shape (per source line).
    in_table = False
    for line in annotate_text.splitlines():
        if "file:function" in line:
            in_table = True
            continue
        m = row.match(line)
        if not m:
            if in_table and line.startswith("---") and out:
                break
            continue
        if in_table is False and "PROGRAM TOTALS" not in line:
            continue
        ir = int(m.group(1).replace(",", ""))
        rest = m.group(2)
        if rest.strip() == "PROGRAM TOTALS":
            total = ir
            continue
        rest = re.sub(r" \[[^\]]*\]$", "", rest)
        _, _, fn = rest.partition(":")
        out[fn] = out.get(fn, 0) + ir
    if total is None:
        raise ValueError("no PROGRAM TOTALS in callgrind_annotate output")
    return out, total


def by_base(weights):
    out = {}
    for fn, w in weights.items():
        b = base_name(fn)
        out[b] = out.get(b, 0) + w
    return out


def median(xs):
    return statistics.median(xs)
