#!/usr/bin/env python3
"""ckpt_diff.py A.ckpt B.ckpt [PART [RTOL]]: compare two tipc checkpoints (python3 stdlib only).

Reads the layout of engine/io/checkpoint.c: magic "TIPCCKP1", a 120-byte header (version, dtype,
struct ckpt_meta, nparams at byte 104, nstats at 112; version 2 adds 16 bytes of mid-epoch position,
version 3 (mixed precision) 24 more: precision and the loss scaler's 4 floats; version 4 puts the
56-byte run section (run id, AMP flag) after the position, then the 24 AMP bytes when the flag is
set), then f32 parameters, momentum and BN running statistics, then an 8-byte checksum; the file
size must agree. PART is params (default), mom or stats. Prints one line: element count, max
|a-b|, the largest element-wise relative difference |a-b| / max(|a|, |b|) and ||a-b||_2 / ||b||_2.
With RTOL: exit 1 when that element-wise relative difference exceeds RTOL anywhere. Exit 1 (with a
message) on a malformed file. Not a checksum check (tipc itself verifies those when it loads a
checkpoint).

PART `same`: exit 0 when the two files are byte for byte the same but for the run id (and so the
checksum): the same training, written by two runs."""
import math
import struct
import sys
from array import array

RUN_ID = 48                # bytes of the run id in a version 4 run section
RUN_SECTION = RUN_ID + 8   # the id, the AMP flag, reserved


def load(path, part):
    try:
        with open(path, "rb") as f:
            buf = f.read()
    except OSError as e:
        sys.exit("%s: %s" % (path, e.strerror))
    if buf[:8] != b"TIPCCKP1" or len(buf) < 8 + 120 + 8:
        sys.exit("%s: not a tipc checkpoint" % path)
    version, dtype = struct.unpack_from("<II", buf, 8)
    nparams, nstats = struct.unpack_from("<QQ", buf, 8 + 104)
    hdr = {1: 120, 2: 136, 3: 160}.get(version, 0)
    if version == 4 and len(buf) >= 8 + 136 + RUN_SECTION:
        hdr = 136 + RUN_SECTION + (24 if struct.unpack_from("<I", buf, 8 + 136 + RUN_ID)[0] else 0)
    if not hdr or dtype != 0 or len(buf) != 8 + hdr + 4 * (2 * nparams + nstats) + 8:
        sys.exit("%s: unexpected checkpoint layout (version %d, dtype %d, %d bytes)" % (path, version, dtype, len(buf)))
    if part == "same":
        return bytes(buf[:-8]) if version < 4 else bytes(buf[:8 + 136]) + bytes(buf[8 + 136 + RUN_ID:-8])
    off = {"params": 0, "mom": nparams, "stats": 2 * nparams}[part]
    n = nstats if part == "stats" else nparams
    a = array("f")
    a.frombytes(buf[8 + hdr + 4 * off:8 + hdr + 4 * (off + n)])
    if sys.byteorder != "little":
        a.byteswap()
    return a


def main():
    if len(sys.argv) not in (3, 4, 5) or (len(sys.argv) >= 4 and sys.argv[3] not in ("params", "mom", "stats", "same")):
        sys.exit("usage: ckpt_diff.py A.ckpt B.ckpt [params|mom|stats [RTOL]|same]")
    part = sys.argv[3] if len(sys.argv) >= 4 else "params"
    rtol = float(sys.argv[4]) if len(sys.argv) == 5 else None
    a, b = load(sys.argv[1], part), load(sys.argv[2], part)
    if part == "same":
        if a != b:
            sys.exit("%s and %s differ (besides their run ids)" % (sys.argv[1], sys.argv[2]))
        return
    if len(a) != len(b):
        sys.exit("%s: %d values in %s, %d in %s" % (part, len(a), sys.argv[1], len(b), sys.argv[2]))
    max_abs = max_rel = 0.0
    d2 = b2 = 0.0
    for x, y in zip(a, b):
        d = abs(x - y)
        m = max(abs(x), abs(y))
        if d > max_abs:
            max_abs = d
        if d > 0 and d / m > max_rel:
            max_rel = d / m
        d2 += d * d
        b2 += y * y
    print("%s: n=%d max_abs=%.3e max_rel=%.3e l2_rel=%.3e" % (part, len(a), max_abs, max_rel, math.sqrt(d2 / b2) if b2 else 0.0))
    if rtol is not None and max_rel > rtol:
        sys.exit(1)


main()
