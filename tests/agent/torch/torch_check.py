"""Checks libstrata_torch.so and its hook against the torch of this Python.

torch_check.py CHECK --dump TORCH_SPOOL_DUMP --lib LIBSTRATA_TORCH --hook HOOK_DIR --work DIR

Each check runs one program of programs/ with the environment `strata trace`
sets (STRATA_TORCH_DIR, STRATA_TORCH_LIB, PYTHONPATH), reads the spools back
through torch_spool_dump (the import layer's chunk loop) and asserts. Exit 0
pass, 1 fail, 77 skip (no torch).
"""
import argparse
import collections
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RECORDING, CANNOT_HOOK, PROFILER_STARTED, NOTE = 1, 2, 3, 4
SCOPE_FUNCTION, SCOPE_BACKWARD, SCOPE_USER = 0, 1, 7

Op = collections.namedtuple("Op", "tid start end depth seq scope flags ext name shapes stack")


class Spool:
    def __init__(self, path, dump):
        out = subprocess.run([dump, path], check=True, capture_output=True, text=True).stdout
        self.path, self.ops, self.status, self.end = path, [], [], None
        for line in out.splitlines():
            kind, _, rest = line.partition(" ")
            if kind == "status":
                code, _, text = rest.partition(" ")
                self.status.append((int(code), text))
            elif kind == "op":
                fields, name, shapes, stack = rest.split(" ", 8)[:8], *rest.split(" ", 8)[8].split("\t")
                tid, start, end, depth, seq, scope, flags, ext = (int(f) for f in fields)
                self.ops.append(Op(tid, start, end, depth, seq, scope, flags, ext, name, shapes, stack))
            elif kind == "end":
                self.end = rest

    def lines(self, code):
        return [text for c, text in self.status if c == code]


failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)
    return cond


def run(args, program, *argv, env_extra=None, expect_rc=0):
    if os.path.isdir(args.work):
        shutil.rmtree(args.work)
    os.makedirs(args.work)
    env = dict(os.environ)
    env.update({"STRATA_TORCH_DIR": args.work, "STRATA_TORCH_LIB": args.lib,
                "PYTHONPATH": args.hook + os.pathsep + env.get("PYTHONPATH", "")})
    for key in ("STRATA_TORCH_SHAPES", "STRATA_TORCH_STACK", "STRATA_TORCH_VERSION_OVERRIDE", "STRATA_TORCH_FORCE"):
        env.pop(key, None)
    env.update(env_extra or {})
    proc = subprocess.run([sys.executable, os.path.join(HERE, "programs", program)] + list(argv), env=env,
                          capture_output=True, text=True, timeout=150)
    check(proc.returncode == expect_rc, "%s exited %d, expected %d; stderr: %s" % (
        program, proc.returncode, expect_rc, proc.stderr[-2000:]))
    return proc


def torch_major():
    """The major version of the torch this check's python runs."""
    proc = subprocess.run([sys.executable, "-c", "import torch; print(torch.__version__)"],
                          capture_output=True, text=True, timeout=120)
    return int(proc.stdout.strip().split(".")[0]) if proc.returncode == 0 else 0


def spools(args):
    return {os.path.basename(p): Spool(p, args.dump) for p in sorted(glob.glob(os.path.join(args.work, "torch-*.bin")))}


def one_main_status(spool, code=RECORDING):
    """Exactly one recording-or-cannot-hook line per process, the expected one."""
    main = spool.lines(RECORDING) + spool.lines(CANNOT_HOOK)
    check(len(main) == 1, "%s: %d recording/cannot-hook lines: %s" % (spool.path, len(main), spool.status))
    check(len(spool.lines(code)) == 1, "%s: no status %d line: %s" % (spool.path, code, spool.status))


def remove_dup_nodes(ops):
    """torch's EventList._remove_dup_nodes: a child with its parent's name, the parent's only child, is merged."""
    parent, children = {}, collections.defaultdict(list)
    for tid in set(o.tid for o in ops):
        stack = []
        for i in sorted((i for i, o in enumerate(ops) if o.tid == tid), key=lambda i: (ops[i].start, ops[i].depth)):
            while stack and ops[stack[-1]].depth >= ops[i].depth:
                stack.pop()
            if stack:
                parent[i] = stack[-1]
                children[stack[-1]].append(i)
            stack.append(i)
    drop = {i for i, p in parent.items() if ops[p].name == ops[i].name and len(children[p]) == 1}
    return [o for i, o in enumerate(ops) if i not in drop], parent


def check_nesting(ops, parent):
    bad = [(ops[p].name, ops[c].name) for c, p in parent.items()
           if not (ops[p].start <= ops[c].start and ops[c].end <= ops[p].end and ops[p].depth + 1 == ops[c].depth)]
    check(not bad, "children outside their parent or with a depth not the parent's + 1: %s" % bad[:5])
    roots = [o for i, o in enumerate(ops) if i not in parent and o.depth != 0]
    # An op of depth > 0 without a parent in the list: its parent began before the list's window.
    return roots


def check_train(args):
    counts_file = os.path.join(args.work + "-profiler.txt")
    run(args, "train.py", counts_file, args.device)
    found = spools(args)
    if not check(len(found) == 1, "one spool expected, found %s" % list(found)):
        return
    spool = next(iter(found.values()))
    one_main_status(spool)
    check(len(spool.lines(PROFILER_STARTED)) == 1, "one profiler-started line expected: %s" % spool.status)
    check(spool.end == "clean", "spool end: %s" % spool.end)
    ops = spool.ops
    check(all(o.flags == 0 for o in ops), "unfinished ops in a clean run")
    exts = [o.ext for o in ops]
    check(all(exts) and len(set(exts)) == len(exts), "external ids must be non-zero and unique")
    # Same window, same names and counts as torch.profiler.
    # The my_step trees inside torch.profiler's window (INNER), after torch's dup-node rule, by tree.
    window = [o for o in ops if o.name == "INNER"]
    if not check(len(window) == 1, "one INNER scope expected, got %d" % len(window)):
        return
    lo, hi = window[0].start, window[0].end
    inside = [o for o in ops if lo <= o.start and o.end <= hi]
    merged_all, parent = remove_dup_nodes(inside)
    kept = set(id(o) for o in merged_all)

    def in_step(i):
        while i is not None:
            if inside[i].name == "my_step":
                return True
            i = parent.get(i)
        return False

    merged = [o for i, o in enumerate(inside) if id(o) in kept and in_step(i)]
    ours = collections.Counter(o.name for o in merged)
    prof = {}
    for line in open(counts_file):
        name, count = line.rstrip("\n").rsplit("\t", 1)
        prof[name] = int(count)
    diff = {k: (ours.get(k, 0), prof.get(k, 0)) for k in set(ours) | set(prof) if ours.get(k, 0) != prof.get(k, 0)}
    # torch 1.13's events have whole-microsecond times: a zero-length aten::resolve_conj next to another
    # one with the same microsecond range is nested under it by the profiler's tree building and then
    # merged away by its dup-node rule. Seen as one call fewer on the profiler's side, now and then.
    artifacts = {k: v for k, v in diff.items() if k in ("aten::resolve_conj", "aten::resolve_neg")
                 and 0 < v[0] - v[1] <= 2}
    if artifacts:
        print("note: the profiler merged zero-length neighbours: %s" % artifacts)
    diff = {k: v for k, v in diff.items() if k not in artifacts}
    # torch 1.13's profiler, on a loaded machine, also lists an op twice with the same whole-microsecond
    # times (aten::div_ 4 against 3 calls) or builds its tree so that a call falls outside its step
    # (aten::mse_loss_backward 5 or 4 against 6): seen in 8 of 36 runs beside a sanitizer build, where our
    # counts were the calls the program makes (3 steps). So on torch 1.x a count at most two off, for at
    # most two names, is noted, not failed; torch 2.x (the GPU machine) must agree exactly.
    if torch_major() < 2:
        near = {k: v for k, v in diff.items() if abs(v[0] - v[1]) <= 2}
        if near and len(near) <= 2:
            print("note: torch 1.x profiler counts differ by at most two: %s" % near)
            diff = {k: v for k, v in diff.items() if k not in near}
    check(not diff, "op counts differ from torch.profiler's (ours, profiler): %s" % diff)
    check(len(ours) >= 15, "too few op names in the window: %s" % sorted(ours))
    check_nesting(inside, parent)
    # The whole spool nests too.
    _, all_parent = remove_dup_nodes(ops)
    check_nesting(ops, all_parent)
    # Scopes and threads.
    steps = [o for o in ops if o.name == "my_step"]
    check(len(steps) == 3 and all(o.scope == SCOPE_USER for o in steps), "3 my_step user scopes expected")
    other = [o for o in ops if o.name == "thread2_step"]
    check(len(other) == 2, "2 thread2_step scopes expected, got %d" % len(other))
    check(not other or other[0].tid != steps[0].tid, "the second thread's ops must be on its own tid")
    check(any(o.name == "Optimizer.step#SGD.step" for o in ops), "the optimizer step scope is missing")
    backward = [o for o in ops if o.name == "AddmmBackward0"]
    check(backward and all(o.scope == SCOPE_BACKWARD for o in backward),
          "AddmmBackward0 must be recorded with the backward scope")
    autograd = [o for o in ops if o.name.startswith("autograd::engine::evaluate_function")]
    forward_tids = {o.tid for o in ops if o.name == "aten::addmm"}
    # CPU graphs run backward on the caller's thread; CUDA graphs on the engine's device thread.
    if args.device == "cuda":
        check(backward and all(o.tid not in forward_tids for o in backward),
              "backward ops must be on the autograd engine's thread")
    check(autograd, "autograd::engine::evaluate_function scopes missing")
    # Sequence numbers link backward nodes to forward ops.
    fwd_seq = {(o.tid, o.seq) for o in ops if o.name == "aten::addmm" and o.seq >= 0}
    fwd_seq_any = {o.seq for o in ops if o.name == "aten::addmm" and o.seq >= 0}
    check(backward and all(o.seq >= 0 and o.seq in fwd_seq_any for o in backward),
          "every AddmmBackward0's seq must be an aten::addmm's: %s vs %s" % (
              sorted(o.seq for o in backward)[:8], sorted(fwd_seq_any)[:8]))
    check(len(fwd_seq) >= len(backward) // 2, "too few aten::addmm with sequence numbers")


def check_stack(args):
    run(args, "plain.py", env_extra={"STRATA_TORCH_SHAPES": "1", "STRATA_TORCH_STACK": "3"})
    found = spools(args)
    if not check(len(found) == 1, "one spool expected, found %s" % list(found)):
        return
    spool = next(iter(found.values()))
    one_main_status(spool)
    mm = [o for o in spool.ops if o.name == "aten::mm"]
    check(len(mm) == 5, "5 aten::mm expected, got %d" % len(mm))
    check(all(o.shapes == "[[8, 16], [16, 4]]" for o in mm), "aten::mm shapes: %s" % {o.shapes for o in mm})
    check(all("plain.py(10): <module>" in o.stack for o in mm), "aten::mm stack: %s" % {o.stack for o in mm})
    relu = [o for o in spool.ops if o.name == "aten::relu"]
    check(relu and all("plain.py(10): <module>" in o.stack for o in relu), "aten::relu stack")
    scope = [o for o in spool.ops if o.name == "user_scope"]
    check(len(scope) == 1 and scope[0].scope == SCOPE_USER, "user_scope missing")


def check_dataloader(args):
    pid_file = args.work + "-pids.txt"
    run(args, "dataloader.py", pid_file)
    found = spools(args)
    workers = [int(p) for p in open(pid_file).read().split()]
    check(len(workers) == 2, "2 worker pids expected: %s" % workers)
    for pid in workers:
        name = "torch-%d.bin" % pid
        if not check(name in found, "no spool of worker %d: %s" % (pid, list(found))):
            continue
        spool = found[name]
        one_main_status(spool)
        check(spool.end == "clean", "worker spool end: %s" % spool.end)
        items = [o for o in spool.ops if o.name == "getitem"]
        check(len(items) == 8, "worker %d: 8 getitem scopes expected, got %d" % (pid, len(items)))
        check(all(o.tid == pid for o in items), "worker %d: getitem on the worker's main thread" % pid)
    check(len(found) == 3, "the parent's and two workers' spools expected: %s" % list(found))


def check_notorch(args):
    proc = run(args, "notorch.py")
    check(proc.stdout.strip() == "45", "the program's output changed: %r" % proc.stdout)
    markers = glob.glob(os.path.join(args.work, "python-notorch-*"))
    check(len(markers) == 1, "one python-notorch marker expected: %s" % markers)
    check(not glob.glob(os.path.join(args.work, "torch-*.bin")), "no torch spool expected")
    # The hook shadows the program's own sitecustomize (a venv's, the distribution's): it must
    # still run, once, after the hook installed itself.
    own = args.work + "-own-site"
    shutil.rmtree(own, ignore_errors=True)
    os.makedirs(own)
    with open(os.path.join(own, "sitecustomize.py"), "w") as f:
        f.write("import os, sys\n"
                "open(os.path.join(os.path.dirname(__file__), 'ran-%d' % os.getpid()), 'w').close()\n"
                "print('own sitecustomize: %s' % __name__, file=sys.stderr)\n")
    proc = run(args, "notorch.py", env_extra={"PYTHONPATH": args.hook + os.pathsep + own})
    check(proc.stdout.strip() == "45", "the program's output changed: %r" % proc.stdout)
    ran = glob.glob(os.path.join(own, "ran-*"))
    check(len(ran) == 1, "the program's own sitecustomize should run once: %s" % ran)
    check("own sitecustomize: sitecustomize" in proc.stderr,
          "the program's sitecustomize should run as module sitecustomize: %r" % proc.stderr)
    shutil.rmtree(own, ignore_errors=True)


def check_version(args):
    import torch
    proc = run(args, "plain.py", env_extra={"STRATA_TORCH_VERSION_OVERRIDE": "3.1.0"})
    check(proc.stdout.startswith("ok"), "the program did not run on: %r" % proc.stdout)
    found = spools(args)
    if not check(len(found) == 1, "one spool expected, found %s" % list(found)):
        return
    spool = next(iter(found.values()))
    if torch.version.cuda:
        one_main_status(spool, RECORDING)
        check("emit_nvtx" in spool.lines(RECORDING)[0], "the NVTX fallback line: %s" % spool.status)
    else:
        one_main_status(spool, CANNOT_HOOK)
        text = (spool.lines(CANNOT_HOOK) or [""])[0]
        check("torch 3.1.0 is not a version strata has checked (1.13 to 2.11)" in text, "cannot-hook line: %r" % text)
    check(not spool.ops, "no ops expected from an unchecked version")
    # STRATA_TORCH_FORCE=1 records anyway.
    run(args, "plain.py", env_extra={"STRATA_TORCH_VERSION_OVERRIDE": "3.1.0", "STRATA_TORCH_FORCE": "1"})
    spool = next(iter(spools(args).values()))
    one_main_status(spool, RECORDING)
    check(any(o.name == "aten::mm" for o in spool.ops), "forced: aten::mm expected")


def check_crash(args):
    run(args, "crash.py", expect_rc=-11)
    found = spools(args)
    if not check(len(found) == 1, "one spool expected, found %s" % list(found)):
        return
    spool = next(iter(found.values()))
    one_main_status(spool)
    check(spool.end == "signal 11", "the spool must end with the signal: %s" % spool.end)
    adds = [o for o in spool.ops if o.name == "aten::add" and o.flags == 0]
    check(len(adds) == 10, "10 finished aten::add expected, got %d" % len(adds))
    muls = [o for o in spool.ops if o.name == "aten::mul" and o.flags == 0]
    check(len(muls) == 1, "the finished aten::mul before the crash expected")
    open_ops = [o for o in spool.ops if o.name == "open_at_crash"]
    check(len(open_ops) == 1 and open_ops[0].flags == 1, "open_at_crash must be written unfinished: %s" % open_ops)


def check_cli(args):
    """strata trace sets the hook's environment with torch in --trace only, and checks its two flags."""
    probe = ("import os, json; print(json.dumps({k: os.environ.get(k) for k in ('STRATA_RUN_DIR', "
             "'STRATA_TORCH_DIR', 'STRATA_TORCH_LIB', 'PYTHONPATH', 'STRATA_TORCH_SHAPES', 'STRATA_TORCH_STACK')}))")
    import json
    os.makedirs(args.work, exist_ok=True)

    def trace(*flags):
        out = os.path.join(args.work, "t.sqlite")
        proc = subprocess.run([args.strata, "trace", "--stats", "false", "--force", "-o", out] + list(flags) +
                              ["--", sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                              cwd=args.work, env=dict(os.environ, STRATA_TORCH_STACK="9", PYTHONPATH="/old"))
        lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
        return proc, json.loads(lines[-1]) if lines else {}

    proc, env = trace("--record-shapes", "--with-stack")
    check(proc.returncode == 0, "strata trace exited %d: %s" % (proc.returncode, proc.stderr))
    check(env.get("STRATA_TORCH_DIR") and env.get("STRATA_TORCH_DIR") == env.get("STRATA_RUN_DIR"),
          "STRATA_TORCH_DIR must be the run dir: %s" % env)
    check(os.path.basename(env.get("STRATA_TORCH_LIB") or "") == "libstrata_torch.so", "STRATA_TORCH_LIB: %s" % env)
    hook = (env.get("PYTHONPATH") or "").split(":")
    check(len(hook) == 2 and os.path.isfile(os.path.join(hook[0], "sitecustomize.py")) and hook[1] == "/old",
          "PYTHONPATH must be the hook's directory, then the old value: %s" % env.get("PYTHONPATH"))
    check(env.get("STRATA_TORCH_SHAPES") == "1" and env.get("STRATA_TORCH_STACK") == "5",
          "--record-shapes / --with-stack: %s" % env)
    proc, env = trace("--with-stack=3")
    check(env.get("STRATA_TORCH_STACK") == "3" and env.get("STRATA_TORCH_SHAPES") is None, "--with-stack=3: %s" % env)
    proc, env = trace("--trace", "cuda,nvtx")
    check(proc.returncode == 0 and env.get("STRATA_TORCH_DIR") is None and env.get("STRATA_TORCH_STACK") is None
          and env.get("PYTHONPATH") == "/old", "without torch in --trace no hook may be set: %s" % env)
    proc, _ = trace("--with-stack=99")
    check(proc.returncode == 2 and "strata: --with-stack=99: use 1 to 64 Python frames" in proc.stderr,
          "--with-stack=99: %d %s" % (proc.returncode, proc.stderr))
    proc, _ = trace("--trace", "cuda", "--record-shapes")
    check(proc.returncode == 2 and "need torch in --trace" in proc.stderr, "--record-shapes without torch: %s" % proc.stderr)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("check", choices=["train", "stack", "dataloader", "notorch", "version", "crash", "cli"])
    parser.add_argument("--dump", required=True)
    parser.add_argument("--lib", required=True)
    parser.add_argument("--hook", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--strata", help="the strata executable (check cli)")
    args = parser.parse_args()
    try:
        import torch  # noqa: F401
    except Exception as e:
        print("SKIP: no torch in %s (%s)" % (sys.executable, e))
        return 77
    globals()["check_" + args.check](args)
    print("%s: %s" % (args.check, "FAILED (%d)" % len(failures) if failures else "ok"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
