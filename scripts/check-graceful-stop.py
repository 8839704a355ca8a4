#!/usr/bin/env python3
"""A graceful stop of `tilekit serve` on SIGTERM, with slow work in flight: a large static
render being drawn, another one being read slowly by a client with a small receive window
(most of its bytes still in the server), a game stream, an idle keep-alive connection and
a tile whose upstream stalls. The server must stop accepting new connections at once
(connect refused within 0.5 s), finish the in-flight responses (every byte arrives), end
the stream at once and cleanly (its last chunk, then close, within 2 s: a stream never
finishes by itself, so waiting for it only delays the exit), close the idle connection,
and exit 0 within the grace deadline (10 s) + 2 s, the stalled tile notwithstanding.

usage: check-graceful-stop.py TILEKIT
"""
import os
import select
import signal
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attacklib import HOST, Checks, info, make_projects, parse_responses, start_server, start_upstream, stop_server  # noqa: E402

checks = Checks()
GRACE = 10.0
RENDER = "/maps/park/static/-73.9712,40.7680,15/2048x2048@3x.png"


class Connection(threading.Thread):
    """Sends one raw request and reads until the server closes (or 30 s): the bytes, when
    the first and last arrived, whether it ended by EOF."""

    def __init__(self, port, request, receive_buffer=None, read_size=65536, pause=0.0):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.connect((HOST, port))
        self.sock.sendall(request)
        self.read_size, self.pause = read_size, pause
        self.data, self.first, self.last, self.eof, self.error, self.ended = b"", None, None, False, None, None
        self.start()

    def ended_after(self, instant):
        """Seconds from `instant` to the end of the connection, or None while it lasts."""
        return None if self.ended is None else self.ended - instant

    def state(self, instant):
        if self.ended is None:
            return "still open"
        return f"{'closed' if self.eof else self.error or 'ended'} {self.ended - instant:.1f} s after SIGTERM"

    def run(self):
        deadline = time.monotonic() + 30
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([self.sock], [], [], 0.2)
                if not ready:
                    continue
                chunk = self.sock.recv(self.read_size)
                if not chunk:
                    self.eof = True
                    break
                now = time.monotonic()
                self.first = self.first or now
                self.last = now
                self.data += chunk
                if self.pause:
                    time.sleep(self.pause)
        except OSError as error:
            self.error = type(error).__name__
        finally:
            self.ended = time.monotonic()
            self.sock.close()


def whole_png(connection):
    responses = parse_responses(connection.data, until_close=connection.eof)[0]
    if not responses:
        return False, f"no response ({len(connection.data)} bytes, {connection.error or 'eof' if connection.eof else 'open'})"
    r = responses[0]
    ok = r.status == 200 and r.complete and r.body[:4] == b"\x89PNG" and r.body[-8:-4] == b"IEND"
    return ok, f"{r}, ends with IEND: {r.body[-8:-4] == b'IEND'}" + (f", {connection.error}" if connection.error else "")


def main():
    tilekit = os.path.abspath(sys.argv[1])
    upstream, upstream_port = start_upstream()
    with tempfile.TemporaryDirectory(prefix="tilekit-stop-") as folder:
        projects = make_projects(folder, upstream_port)
        server, port = start_server(tilekit, projects, folder)
        try:
            head = b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            stream = Connection(port, b"GET /maps/park/play?loop=1&time-warp=4" + head)
            deadline = time.monotonic() + 5
            while b"event: position" not in stream.data and time.monotonic() < deadline:
                time.sleep(0.05)
            # One render at a time (a render budget of 1 must pass too): first the one the
            # slow reader takes, and once its bytes flow, the one in flight at SIGTERM.
            slow_reader = Connection(port, b"GET " + RENDER.replace("15/", "15.2/").encode() + head,
                                     receive_buffer=8192, read_size=4096, pause=0.02)
            asked = time.monotonic()
            while slow_reader.first is None and slow_reader.ended is None and time.monotonic() < asked + 15:
                time.sleep(0.02)
            waited = time.monotonic() - asked
            render = Connection(port, b"GET " + RENDER.encode() + head)
            # Opened last, so that no idle or upstream timeout of the server ends them first.
            idle = Connection(port, b"GET /health" + head)
            stalled = Connection(port, b"GET /maps/stalled/12/1205/1539.png" + head)
            time.sleep(0.3)  # the render has started
            info(f"before SIGTERM: the slow reader's first byte came after {waited:.1f} s; stream {len(stream.data)} bytes, "
                 f"slow reader {len(slow_reader.data)}, render {len(render.data)}, idle {len(idle.data)}")

            sent = time.monotonic()
            server.send_signal(signal.SIGTERM)
            refused_after = None
            while time.monotonic() - sent < 2.0:
                probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                probe.settimeout(0.2)
                try:
                    probe.connect((HOST, port))
                except ConnectionRefusedError:
                    refused_after = time.monotonic() - sent
                    break
                except OSError:
                    pass
                finally:
                    probe.close()
                time.sleep(0.05)
            checks.check("after SIGTERM new connections are refused within 0.5 s",
                         refused_after is not None and refused_after <= 0.5,
                         f"refused after {refused_after * 1000:.0f} ms" if refused_after is not None else "still accepted after 2 s")

            try:
                code = server.wait(timeout=GRACE + 2 - (time.monotonic() - sent))
            except Exception:
                code = None
            exited_after = time.monotonic() - sent
            for connection in (stream, idle, stalled, render, slow_reader):
                connection.join(timeout=max(0.5, sent + GRACE + 3 - time.monotonic()))
            checks.check(f"the process exits 0 within the grace deadline + 2 s ({GRACE + 2:.0f} s)", code == 0,
                         f"exit status {code} after {exited_after:.1f} s" if code is not None else f"still running after {exited_after:.1f} s")

            ok, detail = whole_png(render)
            checks.check("the in-flight render completes: 200, every byte, a whole PNG", ok, detail)
            ok, detail = whole_png(slow_reader)
            checks.check("the in-flight response to a slow reader arrives in full", ok,
                         detail + f", last byte {((slow_reader.last or sent) - sent):.1f} s after SIGTERM")
            responses = parse_responses(stream.data, until_close=stream.eof)[0]
            clean = bool(responses) and responses[0].complete and stream.eof
            checks.check("the game stream is ended at once and cleanly: its last chunk, then close, within 2 s",
                         clean and stream.ended_after(sent) is not None and stream.ended_after(sent) <= 2.0,
                         f"{len(stream.data)} bytes, terminal chunk {'seen' if clean else 'missing'}, {stream.state(sent)}")
            checks.check("the idle keep-alive connection is closed by the exit",
                         idle.eof and idle.ended_after(sent) is not None and idle.ended_after(sent) <= GRACE + 2, idle.state(sent))
            stalled_responses = parse_responses(stalled.data, until_close=stalled.eof)[0]
            checks.check("the stalled-upstream request ends (an answer or a close) by the exit",
                         stalled.ended_after(sent) is not None and stalled.ended_after(sent) <= GRACE + 2,
                         f"{stalled_responses or 'no answer'}, {stalled.state(sent)}")
        finally:
            code = stop_server(server, timeout=5)
            upstream.stdin.close()
            upstream.wait(timeout=10)
        log = open(os.path.join(folder, "access.log")).read()
        info("server log tail: " + " | ".join(log.strip().splitlines()[-4:]))
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
