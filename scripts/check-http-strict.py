#!/usr/bin/env python3
"""Strict HTTP/1.1 framing (RFC 9112) and early body limits of `tilekit serve`, over raw
sockets on 127.0.0.1: every request that nginx rejects gets 400 and a closed connection
(a smuggled request after it is never answered), an unknown transfer coding is refused
at once, bodies over the limit get 413 before they are read (and before any
`100 Continue`), and well-formed requests (keep-alive, pipelining, chunked, HTTP/1.0)
still work. Fast: for `make test`.

Where RFC 9112 leaves a choice, TileKit takes nginx's strict one, as issue 11 asks: a NUL
or bare CR in a field may also be replaced by a space (RFC 9110 §5.5, RFC 9112 §2.2), and
Content-Length with Transfer-Encoding may also be read by the chunked framing alone
(RFC 9112 §6.1) as long as the connection is closed after the answer; here all get 400.
Missing or doubled Host and differing Content-Lengths are a MUST-400 in the RFC itself.

usage: check-http-strict.py TILEKIT
"""
import os
import select
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attacklib import HOST, Checks, exchange, make_projects, parse_responses, start_server, stop_server, tile_of  # noqa: E402

checks = Checks()
PNG = b"\x89PNG\r\n\x1a\n"


def describe(responses, closed, first, raw):
    shown = ", ".join(repr(r) for r in responses) or f"no response ({len(raw)} bytes: {raw[:60]!r})"
    timing = f", first byte after {first * 1000:.0f} ms" if first is not None else ""
    return f"got {shown}; connection {'closed' if closed else 'left open'}{timing}"


def rejected(name, port, request, statuses=(400,), wait=3.0):
    """The request gets one of `statuses` as its only response, and the server closes the
    connection (RFC 9112 §9.6 lets it, and after a framing error it must: what follows on
    the connection cannot be trusted)."""
    responses, closed, first, raw = exchange(port, request, wait=wait, expect=1, quiet_after=1.0)
    finals = [r for r in responses if r.status >= 200]
    ok = len(finals) == 1 and finals[0].status in statuses and closed and not any(r.status == 100 for r in responses)
    checks.check(name, ok, describe(responses, closed, first, raw))
    return responses, closed, raw


def framing(port, tile):
    tile_path = "/maps/park/%d/%d/%d.png" % tile
    rejected("HTTP/1.1 without Host -> 400, closed", port, b"GET /health HTTP/1.1\r\nUser-Agent: attack\r\n\r\n")
    rejected("two Host headers -> 400, closed", port,
             b"GET /maps/park.json HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n")

    # CL.TE smuggling: a front end that honours Content-Length passes everything as one
    # body; a back end that honours chunked sees a second request. Neither may happen.
    smuggled = b"GET /maps/smuggled.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    body = b"0\r\n\r\n" + smuggled
    request = (b"POST /maps/park/static/auto/64x64.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/geo+json\r\n"
               b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n" % len(body)) + body
    responses, closed, raw = rejected("Content-Length with Transfer-Encoding -> 400, closed", port, request)
    checks.check("the smuggled pipelined request after it is not answered",
                 len([r for r in responses if r.status >= 200]) <= 1 and b"smuggled" not in raw,
                 f"{len(responses)} response(s): {responses}")

    body = b'{"type":"FeatureCollection","features":[]}'
    rejected("two different Content-Length headers -> 400, closed", port,
             b"POST /maps/park/static/auto/64x64.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/geo+json\r\n"
             b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(body), len(body) + 7) + body + b"1234567")
    # RFC 9112 §6.3: a request whose final transfer coding is not chunked cannot be framed:
    # 400 and close (§6.1 also allows 501 for a coding the server does not know). Promptly.
    rejected("unknown Transfer-Encoding -> 400/501 within 2 s, closed", port,
             b"POST /maps/park/static/auto/64x64.png HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: x-tilekit-unknown\r\n\r\n"
             b"5\r\nhello\r\n0\r\n\r\n", statuses=(400, 501), wait=2.0)
    rejected("NUL in a header value -> 400, closed", port,
             b"GET " + tile_path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Attack: a\x00b\r\n\r\n")
    rejected("bare CR in a header -> 400, closed", port,
             b"GET " + tile_path.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Attack: a\rInjected: b\r\n\r\n")
    path_with_nul = tile_path.encode() + b"\x00.txt"
    responses, _, raw = rejected("NUL in the request line -> 400, closed", port,
                                 b"GET " + path_with_nul + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    checks.check("NUL in the request line: no tile served", PNG not in raw, f"{len(raw)} bytes, PNG inside: {PNG in raw}")


def body_limits(port):
    # Expect: 100-continue with a body over the limit: the final status at once, never
    # `100 Continue` (RFC 9110 §10.1.1: the server may answer the final status instead).
    head = (b"POST /maps/park/static/auto/64x64.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/geo+json\r\n"
            b"Content-Length: 5000000\r\nExpect: 100-continue\r\n\r\n")
    responses, closed, first, raw = exchange(port, head, wait=2.0, expect=1, quiet_after=0.3)
    checks.check("Expect: 100-continue with 5 MB -> 413/417, no 100 Continue",
                 bool(responses) and responses[0].status in (413, 417) and b"100 Continue" not in raw and b" 100 " not in raw[:16],
                 describe(responses, closed, first, raw))

    # 200 MB announced, headers only: 413 must come before the body is sent, within 1 s.
    head = (b"POST /maps/park/static/auto/64x64.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/geo+json\r\n"
            b"Content-Length: 209715200\r\n\r\n")
    responses, closed, first, raw = exchange(port, head, wait=1.0, expect=1, quiet_after=0.0)
    finals = [r for r in responses if r.status >= 200]
    checks.check("Content-Length 200 MB -> 413 within 1 s, before the body",
                 bool(finals) and finals[0].status == 413 and first is not None and first < 1.0,
                 describe(responses, closed, first, raw))

    endless_chunked(port)


def endless_chunked(port, limit_bytes=16 << 20, seconds=10.0):
    """Sends 64 KiB chunks without end: the server must answer 413 and close after its body
    limit (1 MiB by default). The loop stops at 16 MiB sent or 10 s, whichever first; a
    small send buffer keeps what sits in kernel buffers from hiding the cut."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    sock.connect((HOST, port))
    sock.setblocking(False)
    pending = (b"POST /maps/park/static/auto/64x64.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/geo+json\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n")
    chunk = b"10000\r\n" + b" " * 0x10000 + b"\r\n"
    sent, received, closed, reset = 0, b"", False, False
    started = time.monotonic()
    while time.monotonic() - started < seconds and not closed:
        if not pending and sent < limit_bytes and not reset:
            pending = chunk
        ready_read, ready_write, _ = select.select([sock], [sock] if pending else [], [], 0.2)
        if ready_read:
            try:
                data = sock.recv(65536)
            except OSError:
                data, reset = b"", True
            closed = not data
            received += data
        if ready_write and pending and not closed:
            try:
                n = sock.send(pending)
                sent += n
                pending = pending[n:]
            except BlockingIOError:
                pass
            except OSError:
                reset = True  # the server closed: read what it said before that
                pending = b""
    sock.close()
    elapsed = time.monotonic() - started
    finals = [r for r in parse_responses(received, until_close=closed)[0] if r.status >= 200]
    checks.check("endless chunked upload is cut: 413 and close before 16 MiB are sent",
                 bool(finals) and finals[0].status == 413 and closed and sent < limit_bytes,
                 f"sent {sent / 1048576:.1f} MiB in {elapsed:.1f} s; got {finals or received[:60]}; "
                 f"connection {'reset' if reset else 'closed' if closed else 'left open'}")


def read_until_final(sock, data=b"", seconds=10.0):
    """Reads one connection until a whole final response has arrived (or it closes, or
    `seconds` pass). Returns (responses, still open)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if any(r.status >= 200 and r.complete for r in parse_responses(data, until_close=False)[0]):
            return parse_responses(data, until_close=False)[0], True
        ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = sock.recv(65536)
        if not chunk:
            return parse_responses(data)[0], False
        data += chunk
    return parse_responses(data, until_close=False)[0], True


def well_formed(port, tile):
    tile_path = b"/maps/park/%d/%d/%d.png" % tile
    sock = socket.create_connection((HOST, port), timeout=5)
    answers, kept = [], True
    for _ in range(2):
        sock.sendall(b"GET " + tile_path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        responses, kept = read_until_final(sock, seconds=5)
        answers.append((responses[0].status, responses[0].body[:8] == PNG) if responses else None)
        if not kept:
            break
    sock.close()
    checks.check("keep-alive: two GETs on one connection, both 200 PNG", answers == [(200, True)] * 2 and kept,
                 f"(status, is PNG) {answers}, connection {'kept' if kept else 'closed'}")

    pipelined = (b"GET " + tile_path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                 b"GET /maps/park.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                 b"HEAD " + tile_path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                 b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    responses, closed, first, raw = exchange(port, pipelined, wait=5.0, expect=4, heads=(2,), quiet_after=0.3)
    ok = (len(responses) == 4 and responses[0].status == 200 and responses[0].body[:8] == PNG and responses[1].status == 200
          and b'"tiles"' in responses[1].body and responses[2].status == 200 and responses[2].body == b""
          and responses[3].status == 200 and responses[3].body.strip() == b"ok" and not closed)
    checks.check("pipelined GET, GET, HEAD, GET: four answers in order, connection kept", ok,
                 describe(responses, closed, first, raw))

    body = b'{"type":"Feature","geometry":{"type":"Point","coordinates":[-73.97,40.77]},"properties":{}}'
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:20], body[20:])) + b"0\r\n\r\n"
    responses, closed, first, raw = exchange(port, b"POST /maps/park/static/auto/64x64.png HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                             b"Content-Type: application/geo+json\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked,
                                             wait=10.0, expect=1, quiet_after=0.2)
    checks.check("a well-formed chunked POST is read and answered 200", len(responses) == 1 and responses[0].status == 200
                 and responses[0].body[:8] == PNG, describe(responses, closed, first, raw))

    # Expect: 100-continue within the limit: the interim 100, then the body is read.
    sock = socket.create_connection((HOST, port), timeout=10)
    sock.sendall(b"POST /maps/park/static/auto/64x64.png HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/geo+json\r\n"
                 b"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n" % len(body))
    interim, deadline = b"", time.monotonic() + 2
    while b"\r\n\r\n" not in interim and time.monotonic() < deadline:
        ready, _, _ = select.select([sock], [], [], 0.1)
        data = sock.recv(4096) if ready else b""
        if ready and not data:
            break
        interim += data
    sock.sendall(body)
    responses, _ = read_until_final(sock, interim, seconds=10)
    sock.close()
    checks.check("Expect: 100-continue with a small body: 100 Continue, then 200",
                 [r.status for r in responses] == [100, 200] and responses[1].body[:8] == PNG, f"{responses}")

    responses, closed, first, raw = exchange(port, b"GET /health HTTP/1.0\r\n\r\n", wait=3.0, expect=1, quiet_after=0.2)
    checks.check("HTTP/1.0 without Host is fine -> 200", len(responses) == 1 and responses[0].status == 200,
                 describe(responses, closed, first, raw))


def main():
    tilekit = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory(prefix="tilekit-strict-") as folder:
        projects = make_projects(folder)
        server, port = start_server(tilekit, projects, folder)
        tile = tile_of(-73.9712, 40.7680, 15)
        try:
            framing(port, tile)
            body_limits(port)
            well_formed(port, tile)
            alive = server.poll() is None
            if alive:
                responses, closed, first, raw = exchange(port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", wait=3.0, quiet_after=0.0)
                alive = bool(responses) and responses[0].status == 200
            checks.check("the server is still up and answering after all of this", alive,
                         f"exit status {server.poll()}" if server.poll() is not None else "")
        finally:
            code = stop_server(server)
        log = open(os.path.join(folder, "access.log")).read()
        checks.check("the smuggled request never reached the handler (access log)", "smuggled" not in log,
                     [line for line in log.splitlines() if "smuggled" in line][:2] or "not in the log")
        if code != 0:
            print(f"     (server exit status {code})")
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
