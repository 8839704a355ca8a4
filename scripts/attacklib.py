"""What the attack checks share (check-http-strict.py, check-starvation.py,
check-graceful-stop.py, soak.py): a small map project built with the standard library only,
`tilekit serve` and the fault-injecting upstream started on 127.0.0.1, raw-socket HTTP that
parses exactly what came back, latency figures, and PASS/FAIL lines closed by
`N passed, N failed`.

Every loop here is bounded in count and time, and every target is 127.0.0.1.
"""
import importlib.util
import json
import math
import os
import resource
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOST = "127.0.0.1"
# Loopback source addresses, one per kind of client, so that a server may limit
# connections per client address (as it should) and still be fair to the normal client:
# on a real network the attacker and the normal client are not one address either.
SOURCES = {"client": "127.0.0.2", "idle": "127.0.0.3", "streams": "127.0.0.4", "renders": "127.0.0.5", "stalled": "127.0.0.6"}
PARK_BOUNDS = (-73.99, 40.76, -73.95, 40.80)  # west, south, east, north
PARK_ZOOMS = range(13, 17)


class Checks:
    """One `PASS name: detail` or `FAIL name: detail` line per check (the detail is what was
    measured or received, printed either way), and the closing `N passed, N failed`."""

    def __init__(self):
        self.passed = 0
        self.failed = []

    def check(self, name, condition, detail=""):
        if condition:
            self.passed += 1
        else:
            self.failed.append(name)
        print(("PASS " if condition else "FAIL ") + name + (f": {detail}" if detail != "" else ""), flush=True)
        return condition

    def summary(self):
        if self.failed:
            print("failed: " + "; ".join(self.failed))
        print(f"{self.passed} passed, {len(self.failed)} failed", flush=True)
        return 1 if self.failed else 0


def info(text):
    print("     " + text, flush=True)


# MARK: - Limits

def raise_nofile():
    """Lifts this process's soft open-file limit to its hard limit (the attacks open a few
    thousand sockets; children such as slowhttptest inherit it). Returns the new limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def _server_limits():
    # Runs in the child before exec: the server gets the hard limit as its soft one, so
    # a connection cap it derives from RLIMIT_NOFILE is well above the attacks' counts.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


# MARK: - The map project

def tile_of(lon, lat, z):
    """The XYZ tile holding a WGS84 point (Web Mercator, as mercantile.tile)."""
    n = 1 << z
    x = int((lon + 180.0) / 360.0 * n)
    lat_r = math.radians(lat)
    y = int((1.0 - math.log(math.tan(lat_r) + 1.0 / math.cos(lat_r)) / math.pi) / 2.0 * n)
    return z, min(max(x, 0), n - 1), min(max(y, 0), n - 1)


def park_tiles(zooms=PARK_ZOOMS):
    """Every tile of the park's bounding box at the given zooms: the tiles the MBTiles holds."""
    west, south, east, north = PARK_BOUNDS
    tiles = []
    for z in zooms:
        _, x0, y0 = tile_of(west, north, z)
        _, x1, y1 = tile_of(east, south, z)
        tiles += [(z, x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)]
    return tiles


def _upstream_module():
    spec = importlib.util.spec_from_file_location("test_tile_server", os.path.join(ROOT, "scripts", "test-tile-server.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its server starts only under __main__
    return module


def make_projects(folder, upstream_port=None, stall_seconds=86400):
    """Writes the maps the checks serve into `folder` and returns their map.json paths:
    `park`, an MBTiles base of the park (z13-16, a distinct PNG per tile, so each has its own
    ETag), overzoomed to 18, with a game (three points of interest and the Game Test route);
    and, when an upstream port is given, `stalled`, a remote layer whose upstream answers
    nothing for `stall_seconds` (the test tile server's /slow/ mode)."""
    png = _upstream_module().png
    db = sqlite3.connect(os.path.join(folder, "park.mbtiles"))
    db.executescript("CREATE TABLE metadata (name TEXT, value TEXT);"
                     "CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB);"
                     "CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);")
    west, south, east, north = PARK_BOUNDS
    db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "park"), ("format", "png"), ("minzoom", "13"), ("maxzoom", "16"),
                                                         ("bounds", f"{west},{south},{east},{north}")])
    for z, x, y in park_tiles():
        db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (z, x, (1 << z) - 1 - y, png(z, x, y)))
    db.commit()
    db.close()
    shutil.copy(os.path.join(ROOT, "Examples", "central-park", "game-test.gpx"), os.path.join(folder, "walk.gpx"))
    pois = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": lon_lat},
         "properties": {"kind": kind, "title": title, "id": ident}}
        for ident, kind, title, lon_lat in [("goblin", "monster", "Goblin", [-73.971870, 40.767769]),
                                            ("store", "store", "Store", [-73.969950, 40.766430]),
                                            ("quest", "quest", "Quest", [-73.972100, 40.766200])]]}
    with open(os.path.join(folder, "pois.geojson"), "w") as f:
        json.dump(pois, f)
    park = {"name": "park", "title": "Park", "attribution": "TileKit attack checks",
            "center": [-73.9712, 40.7680], "zoom": 15, "minzoom": 12, "maxzoom": 18, "bounds": list(PARK_BOUNDS),
            "layers": [{"id": "base", "title": "Base", "type": "tiles", "source": "park.mbtiles", "native-maxzoom": 16,
                        "fallback": "#e8dcc0"}],
            "game": {"pois": "pois.geojson", "routes": {"walk": "walk.gpx"}, "speed": 1.4, "tick": 1, "time-warp": 4,
                     "autoplay": "walk"}}
    paths = [os.path.join(folder, "park.json")]
    with open(paths[0], "w") as f:
        json.dump(park, f)
    if upstream_port is not None:
        stalled = {"name": "stalled", "title": "Stalled upstream", "minzoom": 0, "maxzoom": 18,
                   "layers": [{"id": "upstream", "type": "remote", "user-agent": "TileKit attack checks",
                               "source": f"http://{HOST}:{upstream_port}/slow/{stall_seconds}/{{z}}/{{x}}/{{y}}.png"}]}
        paths.append(os.path.join(folder, "stalled.json"))
        with open(paths[1], "w") as f:
            json.dump(stalled, f)
    return paths


# MARK: - Processes

def start_upstream():
    """The fault-injecting tile server; it stops when its stdin closes. Returns (process, port)."""
    # Its stderr is dropped: a stalled answer that finally comes after TileKit gave up
    # prints a BrokenPipe traceback, which says nothing about TileKit.
    process = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "test-tile-server.py")],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return process, int(process.stdout.readline())


def start_server(tilekit, projects, folder, extra=(), descriptors=None):
    """`tilekit serve` on 127.0.0.1 with a free port and the hard open-file limit (or
    `descriptors`, soft and hard), its access log in folder/access.log. Returns (process,
    port); exits if it does not start in 20 s."""
    log = open(os.path.join(folder, "access.log"), "w")
    limits = _server_limits if descriptors is None else (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors)))
    process = subprocess.Popen([tilekit, "serve", *projects, "--host", HOST, "--port", "0", "--json", *extra],
                               stdout=subprocess.PIPE, stderr=log, text=True, preexec_fn=limits,
                               start_new_session=True)  # a signal to the checks' process group is not a stop
    ready, _, _ = select.select([process.stdout], [], [], 20)
    line = process.stdout.readline() if ready else ""
    if not line:
        process.kill()
        sys.exit("tilekit serve did not start: " + open(os.path.join(folder, "access.log")).read()[-2000:])
    return process, json.loads(line)["port"]


def stop_server(process, timeout=15):
    """SIGTERM, then SIGKILL if it has not exited within `timeout`. Returns the exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return "killed after %d s" % timeout
    return process.returncode


def rss_mb(pid, field="VmRSS"):
    """VmRSS (or VmHWM, the peak) of a process in MiB from /proc, None once it has gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def open_fds(pid):
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


# MARK: - Raw HTTP

class Response:
    def __init__(self, status, reason, headers, body, complete):
        self.status = status
        self.reason = reason
        self.headers = headers  # [(lower-case name, value)]
        self.body = body
        self.complete = complete  # False: the connection ended inside the body

    def header(self, name):
        return next((v for k, v in self.headers if k == name), None)

    def __repr__(self):
        return f"{self.status} {self.reason} ({len(self.body)} bytes{'' if self.complete else ', cut'})"


def parse_responses(data, heads=(), until_close=True):
    """Splits the bytes a connection received into responses (1xx interim ones included).
    Bodies follow Content-Length or chunked framing; a response with neither runs to the
    end (complete only if `until_close`: the connection has ended). `heads`: the indices,
    among final responses, of those that answer HEAD (no body whatever the headers say).
    Returns (responses, leftover bytes that are not a whole response)."""
    responses, rest, final_index = [], data, 0
    while rest:
        end = rest.find(b"\r\n\r\n")
        if end < 0:
            break
        lines = rest[:end].split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
            break
        status = int(parts[1])
        reason = parts[2].decode("latin-1") if len(parts) > 2 else ""
        headers = []
        for line in lines[1:]:
            name, _, value = line.partition(b":")
            headers.append((name.strip().lower().decode("latin-1"), value.strip().decode("latin-1")))
        body_start = end + 4
        fields = dict(headers)
        is_head = status >= 200 and final_index in heads
        if status >= 200:
            final_index += 1
        if 100 <= status < 200 or status in (204, 304) or is_head:
            responses.append(Response(status, reason, headers, b"", True))
            rest = rest[body_start:]
            continue
        if "chunked" in fields.get("transfer-encoding", "").lower():
            body, position, complete = b"", body_start, False
            while True:
                line_end = rest.find(b"\r\n", position)
                if line_end < 0:
                    break
                try:
                    size = int(rest[position:line_end].split(b";")[0], 16)
                except ValueError:
                    break
                if size == 0:
                    trailer_end = rest.find(b"\r\n\r\n", line_end)
                    if trailer_end < 0 and rest[line_end:line_end + 4] != b"\r\n\r\n":
                        break
                    position = (trailer_end if trailer_end >= 0 else line_end) + 4
                    complete = True
                    break
                if len(rest) < line_end + 2 + size + 2:
                    body += rest[line_end + 2:line_end + 2 + size]
                    position = len(rest)
                    break
                body += rest[line_end + 2:line_end + 2 + size]
                position = line_end + 2 + size + 2
            responses.append(Response(status, reason, headers, body, complete))
            rest = rest[position:] if complete else b""
            if not complete:
                break
            continue
        if "content-length" in fields and fields["content-length"].isdigit():
            length = int(fields["content-length"])
            body = rest[body_start:body_start + length]
            responses.append(Response(status, reason, headers, body, len(body) == length))
            rest = rest[body_start + length:]
            continue
        responses.append(Response(status, reason, headers, rest[body_start:], until_close))
        rest = b""
    return responses, rest


def exchange(port, data, wait=3.0, expect=1, heads=(), quiet_after=0.5):
    """Sends raw bytes on a fresh connection and reads what comes back until the server
    closes it, or `wait` seconds pass, or `expect` final responses have arrived and nothing
    more comes for `quiet_after` seconds (so a response that should not come has its
    chance to). Returns (responses, closed, seconds to the first byte or None, raw bytes)."""
    sock = socket.create_connection((HOST, port), timeout=wait)
    started = time.monotonic()
    received, first, closed = b"", None, False
    try:
        sock.sendall(data)
    except OSError:
        pass
    deadline = started + wait
    quiet_since = None
    while time.monotonic() < deadline:
        finals = [r for r in parse_responses(received, heads, until_close=False)[0] if r.status >= 200 and r.complete]
        if len(finals) >= expect:
            quiet_since = quiet_since or time.monotonic()
            if time.monotonic() - quiet_since >= quiet_after:
                break
        timeout = min(deadline, quiet_since + quiet_after if quiet_since else deadline) - time.monotonic()
        ready, _, _ = select.select([sock], [], [], max(0.0, timeout))
        if not ready:
            continue
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, OSError):
            closed = True
            break
        if not chunk:
            closed = True
            break
        if first is None:
            first = time.monotonic() - started
        received += chunk
        quiet_since = None
    sock.close()
    return parse_responses(received, heads, until_close=closed)[0], closed, first, received


def get(port, path, timeout=10.0, headers=None, method="GET", source=None):
    """One request on a fresh connection (from the loopback address `source` if given):
    (status, headers dict, body, seconds) or raises."""
    import http.client
    started = time.monotonic()
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout, source_address=(source, 0) if source else None)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body, time.monotonic() - started
    finally:
        connection.close()


class KeepAlive:
    """A keep-alive client that reconnects when the server closes (the reconnection counts
    in the request's time, as a browser would feel it)."""

    def __init__(self, port, timeout=5.0, source=None):
        import http.client
        self.port, self.timeout, self.module = port, timeout, http.client
        self.source = (source, 0) if source else None
        self.connection = None

    def request(self, path, headers=None):
        for attempt in (0, 1):
            if self.connection is None:
                self.connection = self.module.HTTPConnection(HOST, self.port, timeout=self.timeout, source_address=self.source)
            try:
                self.connection.request("GET", path, headers=headers or {})
                response = self.connection.getresponse()
                body = response.read()
                if response.getheader("connection", "").lower() == "close":
                    self.close()
                return response.status, body
            except (self.module.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as error:
                self.close()
                if attempt:
                    raise error
            except Exception:
                self.close()
                raise

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]


def ms(seconds):
    return f"{seconds * 1000:.1f} ms" if seconds == seconds else "n/a"
