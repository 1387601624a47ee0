#!/usr/bin/env python3
"""httpd.py: a real local HTTP server for the prepare tests (python3 stdlib only).

usage: httpd.py ROOT PORTFILE LOGFILE
Binds 127.0.0.1 on a free port, writes the port to PORTFILE, serves files of ROOT and appends one
line per request to LOGFILE: "GET /kind/name range=<Range header or ->". Paths:
  /files/NAME     the file, honouring "Range: bytes=N-" with 206 (like a normal server)
  /cut/NAME       without Range: announces the full length, sends half, drops the connection;
                  with Range: 206 and the rest (so a client can resume)
  /norange/NAME   ignores Range and always answers 200 with the whole file
  /slow/NAME      sends 64 bytes, then one byte every 0.5 s (for low-speed timeouts)
  /redirect/N     302 to /redirect/N+1, forever
  /endless/NAME   200 without a length, then the file over and over until the client hangs up
  /trickle/NAME   200 without a length, then the file at 1200 bytes/s (120 bytes every 0.1 s), over
                  and over until the client hangs up (above curl's low-speed limit, never ending)
anything else or a missing file: 404.
"""
import http.server
import os
import socket
import sys
import time


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # keep stderr quiet; the test reads LOGFILE
        pass

    def log_request_line(self):
        with open(self.server.logfile, "a") as f:
            f.write("GET %s range=%s\n" % (self.path, self.headers.get("Range", "-")))

    def send_body(self, code, data, total, start=0, length=None):
        self.send_response(code)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data) if length is None else length))
        if code == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, total - 1, total))
        self.end_headers()

    def do_GET(self):
        self.log_request_line()
        kind, _, name = self.path.lstrip("/").partition("/")
        if kind == "redirect":
            n = int(name or "0")
            self.send_response(302)
            self.send_header("Location", "/redirect/%d" % (n + 1))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path = os.path.join(self.server.root, os.path.basename(name))
        if kind not in ("files", "cut", "norange", "slow", "endless", "trickle") or not os.path.isfile(path):
            body = b"not found\n"
            self.send_response(404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        with open(path, "rb") as f:
            data = f.read()
        if kind in ("endless", "trickle"):
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            try:
                while True:
                    if kind == "endless":
                        self.wfile.write(data)
                        continue
                    for i in range(0, len(data), 120):
                        self.wfile.write(data[i:i + 120])
                        self.wfile.flush()
                        time.sleep(0.1)
            except (BrokenPipeError, ConnectionResetError, OSError):
                return
        rng = self.headers.get("Range")
        start = 0
        if rng and kind != "norange" and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_body(206, data[start:], len(data), start)
            self.wfile.write(data[start:])
            return
        self.send_body(200, data, len(data))
        try:
            if kind == "cut":
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
            elif kind == "slow":
                self.wfile.write(data[:64])
                self.wfile.flush()
                for b in data[64:]:
                    time.sleep(0.5)
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
            else:
                self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request, client_address):  # clients hanging up mid-transfer is the point
        pass


def main():
    root, portfile, logfile = sys.argv[1:4]
    srv = Server(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    srv.root, srv.logfile = root, logfile
    open(logfile, "a").close()
    with open(portfile + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(portfile + ".tmp", portfile)
    srv.serve_forever()


if __name__ == "__main__":
    main()
