"""Records nested_calls.py with `strata cpu` for the browser tests, with a
CPython whose frames strata names (docs/cli.md: 3.8-3.13 read from the
interpreter's memory, later ones from perf maps); older ones give no
Python frames, so there is no Python view to check and the test is SKIPPED
with that reason. $STRATA_TEST_PYTHON names the interpreter; else the first
python3.13, python3.12 or python3 on PATH that is new enough."""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def python_with_frames():
    candidates = [os.environ.get("STRATA_TEST_PYTHON"), shutil.which("python3.13"),
                  shutil.which("python3.12"), shutil.which("python3"), sys.executable]
    for py in filter(None, candidates):
        p = subprocess.run([py, "-c", "import sys; print(sys.version_info >= (3, 8))"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if p.returncode == 0 and p.stdout.strip() == "True":
            return py
    return None


def record(strata, out_dir):
    """The trace's path; exits 77 with the reason where it cannot be made."""
    py = python_with_frames()
    if py is None:
        print("SKIPPED: no CPython >= 3.8 (whose frames strata names) found; "
              "set STRATA_TEST_PYTHON")
        sys.exit(SKIP)
    trace = os.path.join(out_dir, "nested_calls.sqlite")
    p = subprocess.run([strata, "cpu", "--force", "-o", trace, "--", py,
                        os.path.join(HERE, "nested_calls.py")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0 or not os.path.exists(trace):
        print("SKIPPED: strata cpu could not record %s here: %s" % (py, p.stderr.strip()[-300:]))
        sys.exit(SKIP)
    # What strata said (notes on samples lost, stacks cut, names missing):
    # a failing check prints it (what_strata_said).
    with open(os.path.join(out_dir, "strata-cpu.stderr"), "w") as f:
        f.write("%s: %s\n%s" % (py, " ".join(p.args), p.stderr))
    return trace


def what_strata_said(out_dir):
    """The command and stderr of record()'s `strata cpu`, for a failing check."""
    with open(os.path.join(out_dir, "strata-cpu.stderr")) as f:
        return f.read()
