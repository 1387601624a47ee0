#!/usr/bin/env python3
# screen.py FILE: what a terminal shows after the bytes in FILE (a pty's output): '\r' returns to the
# line's start, ESC[K erases to its end, other escape sequences (colours) draw nothing; one screen
# line per output line. For tests that check nothing is glued to a progress bar.
import re, sys
data = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
lines, cur, col, i = [], [], 0, 0
esc = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])")
while i < len(data):
    c = data[i]
    if c == "\x1b":
        m = esc.match(data, i)
        if m:
            if m.group(2) == "K":
                del cur[col:]
            i = m.end()
            continue
    if c == "\r":
        col = 0
    elif c == "\n":
        lines.append("".join(cur))
        cur, col = [], 0
    else:
        if col < len(cur):
            cur[col] = c
        else:
            cur.extend(" " * (col - len(cur)))
            cur.append(c)
        col += 1
    i += 1
if cur:
    lines.append("".join(cur))
sys.stdout.write("\n".join(lines) + "\n")
