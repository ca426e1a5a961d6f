"""Reads and checks manifest.json, the planted-bottleneck suite's list of workloads,
and expands its commands. Used by tests/examples/planted_check.py and
bench/diagnose_planted.py, so that both read the suite one way.

  load(planted_dir) -> list of workload dicts (ManifestError names what is wrong)
  command(workload, "command" | "fixed_command", bin_dir, planted_dir, python) -> argv
"""
import json
import os

# strata diagnose's rule names (docs/diagnose.md); null means "no finding".
KNOWN_RULES = {
    "cpu.hotspot", "cpu.off_cpu", "gpu.launch_sync", "gpu.host_between_launches",
    "gpu.launch_bound", "gpu.pageable_copy", "kernel.small_grid", "kernel.memory_bound",
    "kernel.compute_bound", "kernel.latency_bound", "kernel.occupancy", "cpu.kernel_time",
}
KINDS = {"native", "python", "torch"}
FIELDS = {"name": str, "kind": str, "plants": str, "command": list,
          "fixed_command": (list, type(None)), "expected_first_rule": (str, type(None)),
          "needs_gpu": bool, "needs_torch": bool}
PLACEHOLDERS = ("{bin}", "{planted}", "{python}")


class ManifestError(ValueError):
    pass


def _check(workload, where):
    for field, kind in FIELDS.items():
        if field not in workload:
            raise ManifestError(f"{where}: no '{field}'")
        if not isinstance(workload[field], kind):
            raise ManifestError(f"{where}: '{field}' has the wrong type")
    extra = set(workload) - set(FIELDS)
    if extra:
        raise ManifestError(f"{where}: unknown field(s) {sorted(extra)}")
    if workload["kind"] not in KINDS:
        raise ManifestError(f"{where}: kind must be one of {sorted(KINDS)}")
    rule = workload["expected_first_rule"]
    if rule is not None and rule not in KNOWN_RULES:
        raise ManifestError(f"{where}: unknown rule '{rule}'")
    # Healthy workloads have nothing to fix; planted ones must have a fixed twin.
    if (rule is None) != (workload["fixed_command"] is None):
        raise ManifestError(f"{where}: fixed_command must be null exactly when "
                            "expected_first_rule is null")
    if workload["kind"] == "torch" and not workload["needs_torch"]:
        raise ManifestError(f"{where}: a torch workload needs torch")
    for key in ("command", "fixed_command"):
        argv = workload[key]
        if argv is None:
            continue
        if not argv or not all(isinstance(a, str) and a for a in argv):
            raise ManifestError(f"{where}: '{key}' must be a list of non-empty strings")
        # The program is a built binary or a script of this directory run by {python}.
        first = argv[0] if workload["kind"] == "native" else " ".join(argv[:2])
        expected = "{bin}/" if workload["kind"] == "native" else "{python} {planted}/"
        if not first.startswith(expected):
            raise ManifestError(f"{where}: '{key}' must start with {expected!r}")
    if workload["fixed_command"] is not None and \
            workload["fixed_command"][:len(workload["command"])] != workload["command"]:
        raise ManifestError(f"{where}: fixed_command must be command plus flags")


def load(planted_dir):
    path = os.path.join(planted_dir, "manifest.json")
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError) as error:
        raise ManifestError(f"{path}: {error}") from None
    workloads = document.get("workloads") if isinstance(document, dict) else None
    if document.get("version") != 1 or not isinstance(workloads, list) or not workloads:
        raise ManifestError(f"{path}: expected version 1 and a non-empty 'workloads' list")
    names = set()
    for i, workload in enumerate(workloads):
        where = f"{path}: workload {i + 1}"
        if not isinstance(workload, dict):
            raise ManifestError(f"{where}: not an object")
        _check(workload, where)
        if workload["name"] in names:
            raise ManifestError(f"{where}: name '{workload['name']}' used twice")
        names.add(workload["name"])
    return workloads


def command(workload, key, bin_dir, planted_dir, python):
    """The workload's command (key "command" or "fixed_command") as an argv, or None."""
    argv = workload[key]
    if argv is None:
        return None
    values = {"{bin}": bin_dir, "{planted}": planted_dir, "{python}": python}
    out = []
    for arg in argv:
        for placeholder, value in values.items():
            arg = arg.replace(placeholder, value)
        out.append(arg)
    return out
