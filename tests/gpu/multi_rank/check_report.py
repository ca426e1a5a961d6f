"""Checks `strata report A B --format json` against what the test programs did.

  check_report.py exchange REPORT.json PROGRAM.log
  check_report.py allreduce REPORT.json PROGRAM.log

REPORT.json is one JSON object keyed by the names of the reports asked for
(rank_sum, collective_sum, straggler_sum); PROGRAM.log the programs' KEY=VALUE lines (rank=... first). Exits 1 with
a line per failed check.
"""
import json
import re
import sys


def program_lines(path):
    by_rank = {}
    for line in open(path, errors="replace"):
        if not line.startswith("rank="):
            continue
        kv = dict(re.findall(r"(\w+)=(\S+)", line))
        by_rank[int(kv["rank"])] = kv
    return by_rank


def main():
    mode, report_path, log_path = sys.argv[1:4]
    reports = json.load(open(report_path))
    programs = program_lines(log_path)
    failures = []

    def check(ok, message):
        print(("ok    " if ok else "FAIL  ") + message)
        if not ok:
            failures.append(message)

    ranks = reports["rank_sum"]
    check(len(ranks) == 2 and len(programs) == 2,
          f"two ranks in the report ({len(ranks)}) and in the log ({len(programs)})")
    by_rank = {row["Rank"]: row for row in ranks}
    if mode == "exchange":
        for r, kv in sorted(programs.items()):
            row = by_rank.get(r, {})
            want = int(kv["expected_kernels"])
            check(row.get("Kernels") == want, f"rank {r}: {row.get('Kernels')} kernels, want {want}")
            check(row.get("NCCL Kernels") == 0, f"rank {r}: no NCCL kernels")
            check(row.get("Devices") == "0", f"rank {r}: device 0 ({row.get('Devices')})")
    else:
        collectives = reports["collective_sum"]
        for r, kv in sorted(programs.items()):
            row = by_rank.get(r, {})
            want = int(kv["allreduce_steps"])
            check(row.get("NCCL Kernels") == want,
                  f"rank {r}: {row.get('NCCL Kernels')} NCCL kernels, want {want}")
        devices = {row.get("Devices") for row in ranks}
        check(len(devices) == 2 or all(r.get("Host") != ranks[0].get("Host") for r in ranks[1:]),
              f"each rank on its own GPU ({sorted(map(str, devices))}; device ids are per process, "
              "so under CUDA_VISIBLE_DEVICES both may read 0)")
        kv = programs[0]
        slow, late, delay_ns = int(kv["slow_rank"]), int(kv["late"]), float(kv["delay_ms"]) * 1e6
        top = collectives[0] if collectives else {}
        check(top.get("Collective") == "AllReduce" and top.get("Instance") == late,
              f"longest delay at AllReduce {late} ({top.get('Collective')} {top.get('Instance')})")
        check(top.get("Last Rank") == slow, f"straggler rank {slow} ({top.get('Last Rank')})")
        got = top.get("Delay (ns)", 0)
        check(abs(got - delay_ns) <= 0.1 * delay_ns,
              f"delay {got / 1e6:.3f} ms within 10 % of {delay_ns / 1e6:.3f} ms")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
