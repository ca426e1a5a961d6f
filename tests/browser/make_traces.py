"""Traces for the HTML report's tests, made from a real fixture with sqlite3
(stdlib), so they keep every table a strata trace has:

  hostile(src, dst)        kernels, CUDA calls and NVTX ranges renamed to the
                           hostile names below (markup, quotes, ']]>', control
                           bytes, invalid UTF-8, U+2028, a 100,000-character name)
  scale(src, dst, n)       n more kernel launches (a cudaLaunchKernel and its
                           kernel each, 2 us apart on one stream): the 1M-launch
                           size check and bench/html_report_scale.py

Run as a script: make_traces.py hostile|scale SRC DST [N].
"""

import shutil
import sqlite3
import sys

# (label, the name as text or as raw bytes). Bytes go in as a BLOB cast to
# TEXT, which is how a C program's invalid UTF-8 reaches SQLite.
HOSTILE = [
    ("script", "</script><script>window.pwned=1</script>"),
    ("markup", "<img src=x onerror=\"window.pwned=2\"><b>bold</b>"),
    ("quotes", "say \"hi\" & 'bye' `tick` ]]><!-- cdata -->"),
    ("control", "ctl\x01\x07\x1b[31mred\x7f"),
    ("utf8", b"bad\xff\xfe\xc3(utf8"),
    ("separators", "line\u2028para\u2029end"),
    ("long", "L" * 100000),
]


def _string_id(db, value):
    next_id = db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM StringIds").fetchone()[0]
    if isinstance(value, bytes):
        db.execute("INSERT INTO StringIds (id, value) VALUES (?, CAST(? AS TEXT))",
                   (next_id, value))
    else:
        db.execute("INSERT INTO StringIds (id, value) VALUES (?, ?)", (next_id, value))
    return next_id


def hostile(src, dst):
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    kernels = [r[0] for r in db.execute("SELECT rowid FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start")]
    calls = [r[0] for r in db.execute(
        "SELECT rowid FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start")]
    ranges = [r[0] for r in db.execute("SELECT rowid FROM NVTX_EVENTS ORDER BY start")]
    if len(kernels) < len(HOSTILE):
        raise SystemExit("%s: needs at least %d kernels" % (src, len(HOSTILE)))
    for i, (_, name) in enumerate(HOSTILE):
        sid = _string_id(db, name)
        db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET demangledName = ?, shortName = ? "
                   "WHERE rowid = ?", (sid, sid, kernels[i]))
        if i < len(calls):
            db.execute("UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET nameId = ? WHERE rowid = ?",
                       (sid, calls[-1 - i]))
        if i < len(ranges):
            if isinstance(name, bytes):
                db.execute("UPDATE NVTX_EVENTS SET text = CAST(? AS TEXT), textId = NULL "
                           "WHERE rowid = ?", (name, ranges[i]))
            else:
                db.execute("UPDATE NVTX_EVENTS SET text = ?, textId = NULL WHERE rowid = ?",
                           (name, ranges[i]))
    db.commit()
    db.close()


def scale(src, dst, n):
    shutil.copyfile(src, dst)
    db = sqlite3.connect(dst)
    k = db.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1").fetchone()
    kcols = [d[0] for d in db.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1").description]
    r = db.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = ?",
                   (k[kcols.index("correlationId")],)).fetchone()
    rcols = [d[0] for d in db.execute("SELECT * FROM CUPTI_ACTIVITY_KIND_RUNTIME LIMIT 1").description]
    t_end = db.execute("SELECT MAX(end) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
    corr0 = db.execute("SELECT MAX(correlationId) FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchone()[0] + 1
    names = [_string_id(db, "synthetic_kernel_%d(float*, int)" % i) for i in range(8)]

    def kernels():
        row = list(k)
        for i in range(n):
            start = t_end + 1000 + i * 2000
            row[kcols.index("start")] = start + 500
            row[kcols.index("end")] = start + 1500
            row[kcols.index("correlationId")] = corr0 + i
            row[kcols.index("demangledName")] = names[i % 8]
            row[kcols.index("shortName")] = names[i % 8]
            row[kcols.index("gridId")] = 1000000 + i
            yield tuple(row)

    def calls():
        row = list(r)
        for i in range(n):
            start = t_end + 1000 + i * 2000
            row[rcols.index("start")] = start
            row[rcols.index("end")] = start + 300
            row[rcols.index("correlationId")] = corr0 + i
            yield tuple(row)

    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%s)" % ",".join("?" * len(kcols)),
                   kernels())
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%s)" % ",".join("?" * len(rcols)),
                   calls())
    db.commit()
    db.close()


if __name__ == "__main__":
    if sys.argv[1] == "hostile":
        hostile(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "scale":
        scale(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        raise SystemExit("usage: make_traces.py hostile|scale SRC DST [N]")
