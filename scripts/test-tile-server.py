#!/usr/bin/env python3
"""A tile server for TileKit's network tests, on 127.0.0.1 only, that injects faults on
demand. It prints its port on the first line of stdout and serves until stdin closes
(so it stops when the test that started it does), or with --until-killed until killed.

  /tiles/{z}/{x}/{y}.png          a real PNG tile (colour from z/x/y), ETag and Last-Modified,
                                  Cache-Control: max-age=MAXAGE (query ?maxage=N, default 3600,
                                  or the whole header with ?cc=no-store, ?cc=no-cache, none
                                  with ?cc=none); ?expires=N adds Expires N seconds from now,
                                  ?expires-raw=V an Expires of V as it is;
                                  If-None-Match / If-Modified-Since answered with 304
  /status/{code}/{z}/{x}/{y}.png  that status code (404, 500, 503 with Retry-After: 7 or
                                  ?retry-after=VALUE, 429 ...)
  /slow/{seconds}/{z}/{x}/{y}.png sleeps, then a tile
  /garbage/{z}/{x}/{y}.png        200 with bytes that are not an image
  /reset/{z}/{x}/{y}.png          closes the connection without answering
  /flaky/{n}/{z}/{x}/{y}.png      500 for the first n requests of each tile, then the tile
  Poison (each a 200 that a cache must not keep):
  /truncated/{z}/{x}/{y}.png      the tile's first half, labelled image/png
  /pnghtml/{z}/{x}/{y}.png        a PNG signature followed by an HTML error page
  /html/{z}/{x}/{y}.png           a real PNG labelled text/html
  /empty/{z}/{x}/{y}.png          no bytes at all
  /huge/{z}/{x}/{y}.png           a small PNG whose IHDR declares 50000x50000 px
  /big/{z}/{x}/{y}.png            9 MB after a PNG signature (?stream=1: no Content-Length,
                                  the end is the connection's close)
  Stalls:
  /stall/{z}/{x}/{y}.png          reads the request and never answers
  /drip/{z}/{x}/{y}.png           headers of a 1000-byte tile, then one byte a second
  PMTiles over HTTP (FILE: a .pmtiles path on this machine):
  /pmtiles/range/NAME.pmtiles?file=FILE         Range answered with 206 and Content-Range, an
                                                ETag from the file's mtime and size (If-Match
                                                ignored: a client must compare ETags itself)
  /pmtiles/ignore-range/NAME.pmtiles?file=FILE  200 with the whole file, whatever the Range
  /pmtiles/truncated/NAME.pmtiles?file=FILE     206 with the first half of the range asked
                                                for (Content-Range says so)
  /pmtiles/slow/NAME.pmtiles?file=FILE          as range, each answer 0.3 s late
  /pmtiles/stall/..., /pmtiles/status-500/...   never answers; that status
  /pmtiles/switch/NAME.pmtiles?file=FILE        answers as the kind /set-mode/ chose
  Switching (one URL whose behaviour a test changes, to poison and then recover a source):
  /set-mode/{kind}                /switch/... then answers as /{kind}/... (tiles, truncated,
                                  pnghtml, html, empty, huge, big, garbage, status-500 ...)
  /stats                          JSON: requests per path, user agents, response statuses, conditional
                                  requests, the peak of concurrent requests, count and time span
  /reset-stats                    clears the statistics
"""
import json
import os
import re
import socket
import struct
import sys
import threading
import time
import zlib
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

lock = threading.Lock()
stats = {"paths": {}, "user_agents": [], "statuses": [], "conditional": 0, "in_flight": 0, "peak": 0, "times": []}
flaky_counts = {}
mode = {"kind": "tiles"}
stopping = threading.Event()
LAST_MODIFIED = "Sat, 28 Nov 2026 12:00:00 GMT"


def png(z, x, y, size=256):
    """A solid PNG whose colour encodes the tile, so tests can tell tiles apart."""
    r, g, b = (x * 37) % 256, (y * 59) % 256, (z * 23) % 256
    raw = b"".join(b"\x00" + bytes([r, g, b]) * size for _ in range(size))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def declared_png(width, height):
    """A small PNG whose header declares width x height; its data is one row (a decoder
    that trusted the header would allocate width * height * 4 bytes first)."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"\x00" * (width + 1), 9)) + chunk(b"IEND", b""))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urlparse(self.path)
        parts = [p for p in url.path.split("/") if p]
        query = parse_qs(url.query)
        if parts in (["stats"], ["reset-stats"]) or parts[:1] == ["set-mode"]:  # bookkeeping is not counted
            return self.route(parts, query)
        with lock:
            stats["paths"][url.path] = stats["paths"].get(url.path, 0) + 1
            stats["user_agents"].append(self.headers.get("User-Agent", ""))
            if self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since"):
                stats["conditional"] += 1
            stats["in_flight"] += 1
            stats["peak"] = max(stats["peak"], stats["in_flight"])
            stats["times"].append(time.monotonic())
        try:
            self.route(parts, query)
        finally:
            with lock:
                stats["in_flight"] -= 1

    def send(self, status, body=b"", headers=None):
        if not self.path.startswith(("/stats", "/reset-stats", "/set-mode")):
            with lock:
                stats["statuses"].append(status)
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def tile(self, z, x, y, query):
        etag = f'"{z}-{x}-{y}"'
        headers = {"Content-Type": "image/png", "ETag": etag, "Last-Modified": LAST_MODIFIED}
        control = query.get("cc", [f"max-age={query.get('maxage', ['3600'])[0]}"])[0]
        if control != "none":
            headers["Cache-Control"] = control
        if "expires" in query:  # an offset in seconds from now
            headers["Expires"] = formatdate(time.time() + float(query["expires"][0]), usegmt=True)
        if "expires-raw" in query:  # sent as it is ("0", garbage)
            headers["Expires"] = query["expires-raw"][0]
        if self.headers.get("If-None-Match") == etag or self.headers.get("If-Modified-Since") == LAST_MODIFIED:
            self.send(304, b"", {k: v for k, v in headers.items() if k != "Content-Type"})
        else:
            self.send(200, png(z, x, y), headers)

    def pmtiles(self, kind, query):
        """A file answered to range requests, well or in one of the ways servers get it wrong."""
        if kind == "switch":
            with lock:
                kind = mode["kind"]
        path = query.get("file", [""])[0]
        if not path.endswith(".pmtiles") or not os.path.isfile(path):
            return self.send(404, b"no such file")
        if kind.startswith("status-"):
            code = int(kind[7:])
            return self.send(code, b"error page", {"Retry-After": "7"} if code in (429, 503) else {})
        if kind == "stall":
            while not stopping.wait(0.1):
                pass
            return
        if kind == "slow":
            time.sleep(0.3)
        with open(path, "rb") as f:
            data = f.read()
        status = os.stat(path)
        headers = {"Content-Type": "application/octet-stream", "ETag": f'"{status.st_mtime_ns:x}-{status.st_size:x}"'}
        wanted = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
        if kind == "ignore-range" or not wanted:
            return self.send(200, data, headers)
        first, last = int(wanted.group(1)), min(int(wanted.group(2)), len(data) - 1)
        if first >= len(data) or first > last:
            return self.send(416, b"", {"Content-Range": f"bytes */{len(data)}"})
        body = data[first:last + 1]
        if kind == "truncated":
            body = body[:max(1, len(body) // 2)]
            last = first + len(body) - 1
        return self.send(206, body, headers | {"Content-Range": f"bytes {first}-{last}/{len(data)}"})

    def route(self, parts, query):
        try:
            if parts == ["stats"]:
                with lock:
                    body = json.dumps({k: v for k, v in stats.items() if k != "times"} | {"count": len(stats["times"]),
                                      "span": (stats["times"][-1] - stats["times"][0]) if len(stats["times"]) > 1 else 0}).encode()
                return self.send(200, body, {"Content-Type": "application/json"})
            if parts == ["reset-stats"]:
                with lock:
                    stats.update({"paths": {}, "user_agents": [], "statuses": [], "conditional": 0, "peak": 0, "times": []})
                    flaky_counts.clear()
                return self.send(200, b"ok")
            if parts[:1] == ["set-mode"] and len(parts) == 2:
                with lock:
                    mode["kind"] = parts[1]
                return self.send(200, b"ok")
            if parts[:1] == ["pmtiles"] and len(parts) == 3:
                return self.pmtiles(parts[1], query)
            z, x, y = int(parts[-3]), int(parts[-2]), int(parts[-1].split(".")[0].split("@")[0])
            kind = parts[0]
            if kind == "switch":
                with lock:
                    kind = mode["kind"]
                if kind.startswith("status-"):
                    parts = ["status", kind[7:]] + parts[1:]
                    kind = "status"
            if kind == "truncated":
                body = png(z, x, y)
                return self.send(200, body[:len(body) // 2], {"Content-Type": "image/png"})
            if kind == "pnghtml":
                body = b"\x89PNG\r\n\x1a\n<html><body><h1>502 Bad Gateway</h1></body></html>"
                return self.send(200, body, {"Content-Type": "image/png"})
            if kind == "html":
                return self.send(200, png(z, x, y), {"Content-Type": "text/html; charset=utf-8"})
            if kind == "empty":
                return self.send(200, b"", {"Content-Type": "image/png"})
            if kind == "huge":
                return self.send(200, declared_png(50000, 50000), {"Content-Type": "image/png"})
            if kind == "big":
                body = b"\x89PNG\r\n\x1a\n" + b"\x00" * (9 << 20)
                if query.get("stream") == ["1"]:
                    self.send_response(200)
                    self.send_header("Content-Type", "image/png")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.close_connection = True
                    with lock:
                        stats["statuses"].append(200)
                    for start in range(0, len(body), 65536):
                        self.wfile.write(body[start:start + 65536])
                    return
                return self.send(200, body, {"Content-Type": "image/png"})
            if kind == "stall":
                while not stopping.wait(0.1):
                    pass
                return
            if kind == "drip":
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", "1000")
                self.end_headers()
                body = png(z, x, y)
                try:
                    for i in range(1000):
                        if stopping.wait(1):
                            return
                        self.wfile.write(body[i:i + 1])
                        self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):  # the client gave up, as it should
                    pass
                return
            if kind == "tiles":
                return self.tile(z, x, y, query)
            if kind == "status":
                code = int(parts[1])
                headers = {"Retry-After": query.get("retry-after", ["7"])[0]} if code in (429, 503) else {}
                return self.send(code, b"error page", headers)
            if kind == "slow":
                time.sleep(float(parts[1]))
                return self.tile(z, x, y, query)
            if kind == "garbage":
                return self.send(200, b"<html>this is not a tile</html>", {"Content-Type": "image/png"})
            if kind == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
                self.connection.close()
                return
            if kind == "flaky":
                key = (z, x, y)
                with lock:
                    flaky_counts[key] = flaky_counts.get(key, 0) + 1
                    attempt = flaky_counts[key]
                if attempt <= int(parts[1]):
                    return self.send(500, b"try again")
                return self.tile(z, x, y, query)
        except (ValueError, IndexError):
            pass
        self.send(400, b"bad path")


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    if "--until-killed" in sys.argv:  # for shell scripts, which stop it with kill
        server.serve_forever()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # until the test closes our stdin
    stopping.set()  # ends stalls and drips
    server.shutdown()


if __name__ == "__main__":
    main()
