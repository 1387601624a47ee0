#!/usr/bin/env python3
"""flood.py PORT SRC N SECS: a slowloris client for the rendezvous tests. Opens N idle TCP
connections from address SRC to 127.0.0.1:PORT (sending nothing, or one header byte every few
seconds with --drip, or with --lines S a request line at once and then one header line every S
seconds), re-opens those the server closes, and stops by itself after SECS seconds.
Re-opening is limited to 300 connections a second. Prints 'opened O closed C max_held H max_life L'
(closed = connections the server ended; held = connections open for more than 1 s at once;
life = the longest a connection lived, closed by the server or still open at the end, in seconds)."""
import resource, select, socket, sys, time

port, src, n, secs = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
drip = '--drip' in sys.argv
lines = float(sys.argv[sys.argv.index('--lines') + 1]) if '--lines' in sys.argv else 0
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, n + 64)), hard))
socks, born, fed, opened, closed, max_held, max_life = [], {}, {}, 0, 0, 0, 0.0
end = time.time() + secs
last_drip = time.time()

def connect():
    s = socket.socket()
    s.bind((src, 0))
    s.settimeout(1)
    try:
        s.connect(('127.0.0.1', port))
    except OSError:
        s.close()
        return None
    s.setblocking(False)
    if lines:
        try:
            s.send(b'GET /kv/job/node/0 HTTP/1.1\r\n')
        except OSError:
            pass
    return s

while time.time() < end:
    t = time.time()
    budget = n if opened == 0 else 60   # the first wave at once, then 300/s at most
    while len(socks) < n and budget > 0 and time.time() < end:
        s = connect()
        if s is None:
            break
        socks.append(s)
        born[s] = fed[s] = time.time()
        opened += 1
        budget -= 1
    max_held = max(max_held, sum(1 for s in socks if t - born[s] > 1.0))
    r, _, _ = select.select(socks, [], [], 0.2) if socks else ([], [], time.sleep(0.2))
    for s in r:
        try:
            data = s.recv(4096)
        except OSError:
            data = b''
        if not data:
            closed += 1
            max_life = max(max_life, time.time() - born[s])
            socks.remove(s)
            del born[s], fed[s]
            s.close()
    time.sleep(max(0.0, 0.2 - (time.time() - t)))
    if drip and time.time() - last_drip > 3:
        last_drip = time.time()
        for s in socks:
            try:
                s.send(b'G')
            except OSError:
                pass
    if lines:
        for s in socks:
            if time.time() - fed[s] >= lines:
                fed[s] = time.time()
                try:
                    s.send(b'X-Trickle: %d\r\n' % int(time.time()))
                except OSError:
                    pass
for s in socks:
    max_life = max(max_life, time.time() - born[s])
    s.close()
print('opened %d closed %d max_held %d max_life %.1f' % (opened, closed, max_held, max_life))
