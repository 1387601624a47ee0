#!/usr/bin/env python3
"""poison.py FILE [VALUE]: set the last float32 before a tipc binary file's 8-byte FNV-1a checksum
(engine/io/binfile.h) to VALUE (default nan) and write the matching checksum, so the file is
"valid" and holds a broken model: in a checkpoint that float is the last BN running variance, in
an inference.tipc the classifier's last bias. Python 3 stdlib only."""
import struct
import sys


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: poison.py FILE [VALUE]")
    path = sys.argv[1]
    value = float(sys.argv[2]) if len(sys.argv) == 3 else float("nan")
    buf = bytearray(open(path, "rb").read())
    if len(buf) < 8 + 4 + 8 or buf[:4] != b"TIPC":
        sys.exit("%s: not a tipc binary file" % path)
    struct.pack_into("<f", buf, len(buf) - 12, value)
    struct.pack_into("<Q", buf, len(buf) - 8, fnv1a64(bytes(buf[:-8])))
    open(path, "wb").write(buf)


main()
