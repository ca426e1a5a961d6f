# strata's PyTorch hook (docs/torch-ops.md). `strata trace` puts this
# directory first on PYTHONPATH, so every Python process of the traced
# command runs it at startup. It never imports torch itself: it waits for the
# program's `import torch`, then (for a torch version strata has checked)
# registers libstrata_torch.so's RecordFunction callbacks, which record every
# op into $STRATA_TORCH_DIR/torch-PID.bin. Each process writes exactly one
# recording or cannot-hook status line there. A Python process that ends
# without importing torch leaves the empty marker python-notorch-PID.
#
# Nothing here may break the program: every failure becomes a status line.
import os
import sys

_TORCH_CHECKED = ((1, 13), (2, 11))  # the torch versions strata has run against (inclusive)
_RECORDING, _CANNOT_HOOK, _PROFILER_STARTED, _NOTE = 1, 2, 3, 4
_state = {"lib": None, "profiler_noted": False, "torch_seen": False}


def _chain_sitecustomize():
    """Runs the sitecustomize this one shadows (a venv's, the program's, the distribution's)."""
    here = os.path.dirname(os.path.abspath(__file__))
    import importlib.machinery
    try:
        # importlib.util's own function, without importlib.util: that module
        # imports contextlib, collections and functools, ~5 ms at the start
        # of every Python process of a program that never needs them.
        from importlib._bootstrap import module_from_spec
    except ImportError:
        from importlib.util import module_from_spec
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # as site.py does for a failing sitecustomize
        print("Error in sitecustomize; set PYTHONVERBOSE for traceback:\n%s: %s" % (type(e).__name__, e),
              file=sys.stderr)


def _lib():
    if _state["lib"] is None:
        import ctypes
        lib = ctypes.CDLL(os.environ["STRATA_TORCH_LIB"])
        lib.strata_torch_note.argtypes = (ctypes.c_int, ctypes.c_char_p)
        lib.strata_torch_last_error.restype = ctypes.c_char_p
        _state["lib"] = lib
    return _state["lib"]


def _note(status, text):
    _lib().strata_torch_note(status, text.encode("utf-8", "replace"))


def _version_tuple(text):
    parts = []
    for piece in text.split("+")[0].split(".")[:2]:
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        parts.append(int(digits or 0))
    while len(parts) < 2:
        parts.append(0)
    return tuple(parts)


def _checked(version):
    low, high = _TORCH_CHECKED
    return low <= _version_tuple(version) <= high


def _calibrate(lib, torch):
    """Finds RecordFunction's sequence-number offset: two autograd-recording aten::mul under a probe."""
    if lib.strata_torch_calibrate_begin() != 0:
        return -1
    try:
        t = torch.ones(1, requires_grad=True)
        t.mul(2), t.mul(3)
    finally:
        offset = lib.strata_torch_calibrate_end()
    return offset


def _on_torch_imported(torch):
    _state["torch_seen"] = True
    version = os.environ.get("STRATA_TORCH_VERSION_OVERRIDE") or str(torch.__version__)
    forced = os.environ.get("STRATA_TORCH_FORCE") == "1"
    cuda = getattr(torch.version, "cuda", None)
    if not _checked(version) and not forced:
        why = "torch %s is not a version strata has checked (%d.%d to %d.%d)" % (
            (version,) + _TORCH_CHECKED[0] + _TORCH_CHECKED[1])
        if cuda:
            # nsys's --pytorch=autograd-nvtx mechanism: NVTX ranges per op, which the CUDA agent's
            # NVTX layer records. It synchronizes nothing here; it only adds ranges.
            torch.autograd.profiler.emit_nvtx().__enter__()
            _note(_RECORDING, "recorded as NVTX ranges by torch.autograd.profiler.emit_nvtx(): %s; "
                  "STRATA_TORCH_FORCE=1 tries the RecordFunction callback" % why)
        else:
            _note(_CANNOT_HOOK, "not recorded: %s; STRATA_TORCH_FORCE=1 tries anyway" % why)
        return
    lib = _lib()
    offset = _calibrate(lib, torch)
    rc = lib.strata_torch_register()
    if rc != 0:
        _note(_CANNOT_HOOK, "not recorded: %s (torch %s)" % (lib.strata_torch_last_error().decode(), version))
        return
    _note(_RECORDING, "recorded by a RecordFunction callback (torch %s%s)" % (
        version, ", not a checked version: STRATA_TORCH_FORCE=1" if not _checked(version) else ""))
    if offset < 0:
        _note(_NOTE, "no autograd sequence numbers: RecordFunction's layout was not recognized, so "
              "backward ops are not linked to their forward ops")
    _watch_program_profiler(torch)
    _flush_in_workers(lib)


def _watch_program_profiler(torch):
    """One status line when the program starts torch.profiler / autograd.profiler itself."""
    ap = torch.autograd.profiler
    real = getattr(ap, "_enable_profiler", None)
    if real is None:
        return

    def _enable_profiler(config, activities, *args, **kwargs):
        if not _state["profiler_noted"]:
            _state["profiler_noted"] = True
            with_cuda = any("CUDA" in str(a) for a in (activities or ()))
            _note(_PROFILER_STARTED, "the program started torch.profiler (%s); strata keeps recording its ops%s" % (
                "CPU+CUDA" if with_cuda else "CPU",
                "; while it runs its CUDA activity goes to torch.profiler (a second CUPTI subscriber), not "
                "strata" if with_cuda else ""))
        return real(config, activities, *args, **kwargs)

    ap._enable_profiler = _enable_profiler


def _flush_in_workers(lib):
    """DataLoader workers leave through os._exit, which skips atexit: finish at multiprocessing's exit."""
    try:
        import multiprocessing.util as mpu
        mpu.register_after_fork(lib, lambda l: mpu.Finalize(None, l.strata_torch_finish, exitpriority=-100))
    except Exception:
        pass


def _at_exit():
    if _state["lib"] is not None:
        _state["lib"].strata_torch_stop_stacks()
    if "torch" not in sys.modules and not _state["torch_seen"]:
        try:
            open(os.path.join(os.environ["STRATA_TORCH_DIR"], "python-notorch-%d" % os.getpid()), "w").close()
        except OSError:
            pass


class _TorchWatcher:
    """A meta_path finder: lets the real finders load torch, then runs the hook after its module ran."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module):
            real_exec(module)
            try:
                _on_torch_imported(module)
            except Exception as e:
                try:
                    _note(_CANNOT_HOOK, "not recorded: the hook failed: %s: %s" % (type(e).__name__, e))
                except Exception:
                    pass

        spec.loader.exec_module = exec_module
        return spec


def _install():
    if not os.environ.get("STRATA_TORCH_DIR") or not os.environ.get("STRATA_TORCH_LIB"):
        return
    if "torch" in sys.modules:  # imported by a chained sitecustomize
        try:
            _on_torch_imported(sys.modules["torch"])
        except Exception as e:
            _note(_CANNOT_HOOK, "not recorded: the hook failed: %s: %s" % (type(e).__name__, e))
    else:
        sys.meta_path.insert(0, _TorchWatcher())
    import atexit
    atexit.register(_at_exit)


_install()
_chain_sitecustomize()
