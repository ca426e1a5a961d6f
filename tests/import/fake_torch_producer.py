# A stand-in for libstrata_torch (no torch needed): writes torch-PID.bin
# (spool format 1.3: strings, torch-status, torch-ops) into $STRATA_RUN_DIR,
# the directory `strata trace` reads them from, so the golden case
# live-trace-torch_fake checks ingest -> trace -> op_sum end to end. Op stamps
# are CLOCK_MONOTONIC offsets from one reading, so the table is exact.
import os, struct, time, zlib
d = os.environ["STRATA_RUN_DIR"]
pid = os.getpid()
now = time.monotonic_ns()
hdr = b"STRATASP" + struct.pack("<HHIIIqqI", 1, 3, 48, pid, 1, now, time.time_ns(), 0)
hdr += struct.pack("<I", zlib.crc32(hdr))
chunks = []
def chunk(kind, payload):
    head = struct.pack("<II", kind, len(payload))
    crc = zlib.crc32(head + payload)
    b = struct.pack("<I", 0xA97C5AD3) + head + struct.pack("<I", crc) + payload
    b += b"\0" * ((-len(b)) % 8)
    chunks.append(b)
names = {1: b"aten::mm", 2: b"aten::linear", 3: b"step"}
p = struct.pack("<II", len(names), 0) + b"".join(struct.pack("<QI", i, len(t)) + t for i, t in names.items())
chunk(2, p)
chunk(14, struct.pack("<II", 1, 0) + b"recorded by a fake producer (torch 0.0)")
tid = pid
ops = b""
def op(s, e, name, depth, scope=0, ext=0):
    return struct.pack("<QQQqIIIHBB", now + s, now + e, ext, -1, name, 0, 0, depth, scope, 0)
for i in range(3):
    base = i * 10000
    ops += op(base, base + 9000, 3, 0, 7)
    ops += op(base + 100, base + 8000, 2, 1, 0, 2 * i + 1)
    ops += op(base + 200, base + 7000, 1, 2, 0, 2 * i + 2)
chunk(13, struct.pack("<IIqQqQ", tid, 1, 0, 0, 0, 0) + ops)
with open(os.path.join(d, "torch-%d.bin" % pid), "wb") as f:
    f.write(hdr + b"".join(chunks))
