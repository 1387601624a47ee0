#!/usr/bin/env python3
"""binfile.py: make test inputs out of tipc's binary files (engine/io/binfile.h: an 8-byte magic,
the payload, an FNV-1a 64 checksum of everything before it). Python 3 stdlib only.

  binfile.py poison FILE [VALUE]
      Set the last float32 before the checksum to VALUE (default nan) and write the matching
      checksum: a "valid" file holding a broken model. In a checkpoint that float is the last BN
      running variance, in an inference.tipc the classifier's last bias.
  binfile.py scale MODEL.tipc FACTOR
      Multiply every weight of an inference.tipc (the last `nweights` floats, the u64 at byte 80)
      by FACTOR and redo the checksum: finite weights whose outputs overflow to inf and NaN.
  binfile.py old IN.ckpt OUT.ckpt
      Write IN (a version 4 checkpoint) in the layout of the version before the run section
      (engine/io/checkpoint.h): version 2 for an fp32 file, version 3 for one with the
      mixed-precision section; the run section dropped, the checksum redone. Byte for byte what an
      older tipc wrote for the same training."""
import struct
import sys

RUN_ID = 48   # bytes of the run id in a version 4 checkpoint's run section (then AMP flag, reserved)


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def with_checksum(payload):
    return bytes(payload) + struct.pack("<Q", fnv1a64(bytes(payload)))


def poison(path, value):
    buf = bytearray(open(path, "rb").read())
    if len(buf) < 8 + 4 + 8 or buf[:4] != b"TIPC":
        sys.exit("%s: not a tipc binary file" % path)
    struct.pack_into("<f", buf, len(buf) - 12, value)
    open(path, "wb").write(with_checksum(buf[:-8]))


def scale(path, factor):
    buf = bytearray(open(path, "rb").read())
    if buf[:8] != b"TIPCINF1":
        sys.exit("%s: not a tipc inference model" % path)
    n = struct.unpack_from("<Q", buf, 80)[0]
    start = len(buf) - 8 - 4 * n
    w = struct.unpack_from("<%df" % n, buf, start)
    struct.pack_into("<%df" % n, buf, start, *[x * factor for x in w])
    open(path, "wb").write(with_checksum(buf[:-8]))


def old(src, dst):
    buf = bytearray(open(src, "rb").read())
    if buf[:8] != b"TIPCCKP1" or struct.unpack_from("<I", buf, 8)[0] != 4:
        sys.exit("%s: not a version 4 tipc checkpoint" % src)
    pos = 8 + 136                                   # magic, version 1 header, version 2 position
    amp = struct.unpack_from("<I", buf, pos + RUN_ID)[0]
    out = buf[:pos] + buf[pos + RUN_ID + 8:-8]      # without the run section and the checksum
    struct.pack_into("<I", out, 8, 3 if amp else 2)
    open(dst, "wb").write(with_checksum(out))


def main():
    a = sys.argv[1:]
    if len(a) in (2, 3) and a[0] == "poison":
        poison(a[1], float(a[2]) if len(a) == 3 else float("nan"))
    elif len(a) == 3 and a[0] == "scale":
        scale(a[1], float(a[2]))
    elif len(a) == 3 and a[0] == "old":
        old(a[1], a[2])
    else:
        sys.exit("usage: binfile.py poison FILE [VALUE] | scale MODEL.tipc FACTOR | old IN.ckpt OUT.ckpt")


main()
