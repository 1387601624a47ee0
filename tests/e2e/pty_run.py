#!/usr/bin/env python3
import os, pty, sys, time, select, signal
# pty_run.py TIMEOUT INPUT CMD...: run CMD as the session leader of a new pseudo-terminal (so it
# holds the terminal's foreground, as in an interactive shell), type INPUT after 1 s, print what the
# terminal showed; exit with CMD's status, or 124 if it did not end in TIMEOUT seconds.
timeout, data, cmd = float(sys.argv[1]), sys.argv[2].encode().decode('unicode_escape').encode('latin-1'), sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(cmd[0], cmd)
t0, typed, out = time.time(), False, b''
while True:
    if not typed and time.time() - t0 > 1.0:
        os.write(fd, data); typed = True
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try: chunk = os.read(fd, 4096)
        except OSError: chunk = b''
        out += chunk
    w, st = os.waitpid(pid, os.WNOHANG)
    if w == pid:
        sys.stdout.write(out.decode(errors='replace'))
        sys.exit(os.waitstatus_to_exitcode(st) if hasattr(os, 'waitstatus_to_exitcode') else st >> 8)
    if time.time() - t0 > timeout:
        sys.stdout.write(out.decode(errors='replace'))
        os.kill(pid, signal.SIGKILL); os.waitpid(pid, 0)
        sys.exit(124)
