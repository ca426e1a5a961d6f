#!/usr/bin/env python3
"""Writes the python_stack fuzzer's seeds: one valid memory image per
version (3.8-3.11) as fuzz/python_stack_fuzzer.cc reads it (byte 0: version,
then memory at 0x10000 with _PyRuntime first), a thread 4242 running three
frames. Offsets: src/sampler/python_stack.cc's tables."""
import os, struct

BASE = 0x10000
L = {
  8:  dict(head=32, threads=8, next=8, tid=176, frame=24, back=24, code=32, lasti=104,
           first=40, file=104, name=112, table=120),
  11: dict(head=40, threads=16, next=8, ntid=160, cframe=56, back=48, code=32, prev=56,
           entry=68, first=72, file=112, name=120, qual=128, table=136, adaptive=184),
}
L[9] = L[8]
L[10] = dict(L[8], lasti=96)

def image(minor):
    l = L[minor]
    mem = bytearray(0x4000)
    def p64(at, v): struct.pack_into("<Q", mem, at - BASE, v)
    def p32(at, v): struct.pack_into("<I", mem, at - BASE, v)
    def put(at, b): mem[at - BASE:at - BASE + len(b)] = b
    interp, tstate, pthread, frames, codes, strs, ctype = (BASE + x for x in
        (0x100, 0x200, 0x400, 0x800, 0x1000, 0x2000, 0x3000))
    p64(BASE + l["head"], interp)
    p64(interp + l["threads"], tstate)
    if "ntid" in l:
        p64(tstate + l["ntid"], 4242)
        p64(tstate + l["cframe"], tstate + 0x100)
        p64(tstate + 0x100 + 8, frames)
    else:
        p64(tstate + l["tid"], pthread)
        p32(pthread + 0x2d0, 4242)
        p64(tstate + l["frame"], frames)
    p64(ctype + 24, ctype + 0x80)
    put(ctype + 0x80, b"code\0")
    def string(at, text):
        p64(at + 16, len(text)); p32(at + 32, (1 << 2) | (1 << 5) | (1 << 6)); put(at + 48, text)
        return at
    filename = string(strs + 0x300, b"prog.py")
    for i, name in enumerate([b"hot", b"middle", b"<module>"]):
        f, c = frames + i * 0x100, codes + i * 0x200
        p64(f + l["code"], c)
        p64(f + l["back"], f + 0x100 if i < 2 else 0)
        p64(c + 8, ctype)
        n = string(strs + i * 0x100, name)
        p64(c + l["name"], n)
        if "qual" in l: p64(c + l["qual"], n)
        p64(c + l["file"], filename)
        p32(c + l["first"], 10 * (i + 1))
        t = bytes([0xd9, 0, 0, 0xd9, 0, 0]) if minor == 11 else bytes([4, 1, 4, 1])
        p64(c + 0x100 + 16, len(t)); put(c + 0x100 + 32, t)
        p64(c + l["table"], c + 0x100)
        if "prev" in l:
            p64(f + l["prev"], c + l["adaptive"] + 4); put(f + l["entry"], b"\1")
        else:
            p32(f + l["lasti"], 4)
    return bytes([minor - 8]) + bytes(mem)

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "python_stack")
for minor in (8, 9, 10, 11):
    with open(os.path.join(here, "image-3.%d" % minor), "wb") as out:
        out.write(image(minor))
