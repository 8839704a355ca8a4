#!/usr/bin/env python3
"""No client can starve `tilekit serve`: all at once, on 127.0.0.1, 64 open game streams,
1,000 idle connections, 32 of the largest static renders the route allows, 64 requests
for tiles whose upstream stalls, and slowhttptest with 1,500 slowloris connections; while
they run, a normal client measures cached tiles (p99 < 50 ms over 2,000 requests),
/health (p99 < 10 ms) and fresh connections (each answered within 100 ms). Renders over
the render budget must get 503 with Retry-After within 1 s; the game streams must keep
flowing; afterwards the server answers and its memory is back near where it started.

Each kind of client comes from its own loopback address (the normal client from
127.0.0.2, slowhttptest from 127.0.0.1, ...), so a per-client connection limit is fair
game. Needs slowhttptest (Debian; `bash scripts/install-deps.sh slowhttptest`). Finishes
in under 3 minutes; every loop is bounded in count and time.

usage: check-starvation.py TILEKIT
"""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attacklib import (HOST, SOURCES, Checks, KeepAlive, get, info, make_projects, ms, open_fds, park_tiles, percentile,  # noqa: E402
                       raise_nofile, rss_mb, start_server, start_upstream, stop_server)

checks = Checks()
STREAMS, IDLE, RENDERS, STALLED, SLOWLORIS = 64, 1000, 32, 64, 1500
TILE_REQUESTS, HEALTH_REQUESTS, FRESH_PROBES = 2000, 300, 40
RENDER_PATH = "/maps/park/static/{lon:.4f},40.7680,15/2048x2048@3x.png"  # the largest the route allows
MEMORY_GUARD_MB = 12 * 1024  # the machine is shared: a server past this is killed (and fails)


class Streams:
    """Game streams read by one thread: per stream, its status line, how many `position`
    events came and when the last one did."""

    def __init__(self, port, count):
        self.sockets, self.status, self.events, self.last = [], {}, {}, {}
        self.stopping = threading.Event()
        self.failed_to_open = 0
        for i in range(count):
            try:
                sock = socket.create_connection((HOST, port), timeout=2, source_address=(SOURCES["streams"], 0))
                sock.sendall(b"GET /maps/park/play?loop=1&time-warp=4 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
                sock.setblocking(False)
                self.sockets.append(sock)
            except OSError:
                self.failed_to_open += 1
        self.tails = {s: b"" for s in self.sockets}
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        import selectors
        selector = selectors.DefaultSelector()
        for sock in self.sockets:
            selector.register(sock, selectors.EVENT_READ)
        while not self.stopping.is_set() and selector.get_map():
            for key, _ in selector.select(timeout=0.2):
                sock = key.fileobj
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:
                    selector.unregister(sock)
                    self.status.setdefault(sock, "closed before a status line")
                    continue
                text = self.tails[sock] + data
                if sock not in self.status and b"\r\n" in text:
                    self.status[sock] = text.split(b"\r\n", 1)[0].decode("latin-1")
                found = text.count(b"event: position")
                if found:
                    self.events[sock] = self.events.get(sock, 0) + found
                    self.last[sock] = time.monotonic()
                self.tails[sock] = text[-32:]
        selector.close()

    def close(self):
        self.stopping.set()
        self.thread.join(timeout=5)
        for sock in self.sockets:
            sock.close()


class Idle:
    """Connections that send nothing, opened without blocking (a full accept queue must not
    stall the attack itself)."""

    def __init__(self, port, count):
        self.sockets = []
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind((SOURCES["idle"], 0))
            sock.setblocking(False)
            sock.connect_ex((HOST, port))
            self.sockets.append(sock)

    def still_open(self):
        """How many the server has not closed (a closed one reads EOF)."""
        import select
        open_count = 0
        for sock in self.sockets:
            try:
                readable, _, _ = select.select([sock], [], [], 0)
                if not readable:
                    open_count += 1
                elif sock.recv(1, socket.MSG_PEEK):
                    open_count += 1
            except OSError:
                pass
        return open_count

    def close(self):
        for sock in self.sockets:
            sock.close()


class Requests:
    """Requests sent together from threads (released at once by a barrier), each result
    (status, Retry-After, seconds, body bytes) or (error text, None, seconds, 0)."""

    def __init__(self, port, paths, timeout, source):
        self.results = [None] * len(paths)
        self.connections = []
        self.lock = threading.Lock()
        barrier = threading.Barrier(len(paths))
        self.threads = [threading.Thread(target=self.one, args=(port, i, path, timeout, source, barrier), daemon=True)
                        for i, path in enumerate(paths)]
        for thread in self.threads:
            thread.start()

    def one(self, port, index, path, timeout, source, barrier):
        connection = http.client.HTTPConnection(HOST, port, timeout=timeout, source_address=(source, 0))
        with self.lock:
            self.connections.append(connection)
        barrier.wait()
        started = time.monotonic()
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            self.results[index] = (response.status, response.getheader("Retry-After"), time.monotonic() - started, len(body))
        except Exception as error:  # a timeout or a reset is a result too
            self.results[index] = (type(error).__name__, None, time.monotonic() - started, 0)

    def wait(self, deadline):
        for thread in self.threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))

    def abort(self):
        with self.lock:
            for connection in self.connections:
                try:
                    if connection.sock is not None:
                        connection.sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass


class Slowloris:
    """slowhttptest in slow-headers mode; its status blocks (every 5 s) are read as they
    come. `established_peak`: connected + closed at most, the connections it got (a server
    that closes slow ones early has them counted as closed)."""

    def __init__(self, port, connections, seconds):
        self.connected_peak, self.established_peak, self.unavailable_seen, self.lines = 0, 0, False, []
        self.connected = 0
        # stdbuf -oL: into a pipe its stdio buffers 4 KB, and its status blocks (every 5 s)
        # then came only when that filled, about 15 s in: a check made at 14.7 s saw none.
        self.process = subprocess.Popen(["stdbuf", "-oL", "slowhttptest", "-H", "-c", str(connections), "-i", "10", "-r", "500", "-l", str(seconds),
                                         "-x", "24", "-p", "3", "-u", f"http://{HOST}:{port}/maps/park.json"],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        for line in self.process.stdout:
            line = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", line).strip()
            self.lines.append(line)
            if line.startswith("connected:"):
                self.connected = int(line.split()[-1])
                self.connected_peak = max(self.connected_peak, self.connected)
            if line.startswith("closed:"):
                self.established_peak = max(self.established_peak, self.connected + int(line.split()[-1]))
            if line.startswith("service available:") and line.endswith("NO"):
                self.unavailable_seen = True

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.thread.join(timeout=2)


class MemoryGuard:
    """Samples the server's RSS every 0.5 s; kills it past MEMORY_GUARD_MB."""

    def __init__(self, server):
        self.server, self.peak, self.killed = server, 0.0, False
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()

    def watch(self):
        started = time.monotonic()
        while not self.stopping.wait(0.5):
            rss = rss_mb(self.server.pid)
            if rss is None or self.server.poll() is not None:
                info(f"the server exited {time.monotonic() - started:.1f} s into the attack, status {self.server.poll()}")
                return
            self.peak = max(self.peak, rss)
            if rss > MEMORY_GUARD_MB and self.server.poll() is None:
                self.killed = True
                self.server.kill()
                return

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=2)


def cached_tile_latencies(port, paths, count, cap_seconds):
    client, latencies, errors = KeepAlive(port, timeout=5.0, source=SOURCES["client"]), [], []
    deadline = time.monotonic() + cap_seconds
    for i in range(count):
        if time.monotonic() > deadline:
            break
        started = time.monotonic()
        try:
            status, body = client.request(paths[i % len(paths)])
            if status != 200 or body[:4] != b"\x89PNG":
                errors.append(status)
        except Exception as error:
            errors.append(type(error).__name__)
        latencies.append(time.monotonic() - started)
    client.close()
    return latencies, errors


def health_latencies(port, count, cap_seconds):
    client, latencies, errors = KeepAlive(port, timeout=5.0, source=SOURCES["client"]), [], []
    deadline = time.monotonic() + cap_seconds
    for _ in range(count):
        if time.monotonic() > deadline:
            break
        started = time.monotonic()
        try:
            status, body = client.request("/health")
            if status != 200 or body.strip() != b"ok":
                errors.append(status)
        except Exception as error:
            errors.append(type(error).__name__)
        latencies.append(time.monotonic() - started)
    client.close()
    return latencies, errors


def fresh_connection_probes(port, count, spacing, cap_seconds, since):
    """A new TCP connection per probe, GET /health: seconds to the whole answer, and when
    each probe began (seconds after `since`). The probes run in a process of their own: in
    this one, 100 client threads waking at once (the stalled tiles' answers) hold Python's
    lock long enough to add tens of milliseconds that are not the server's."""
    command = [sys.executable, os.path.abspath(__file__), "--probe", str(port), str(count), str(spacing), str(cap_seconds)]
    began = time.monotonic()
    output = subprocess.run(command, capture_output=True, text=True, timeout=cap_seconds + 30).stdout
    results = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    times = [r["seconds"] for r in results]
    errors = [r["error"] for r in results if r["error"] is not None]
    offsets = [began - since + r["at"] for r in results]
    return times, errors, offsets


def probe_main(port, count, spacing, cap_seconds):
    """`--probe`: the fresh-connection probes, one JSON line each."""
    began = time.monotonic()
    for _ in range(count):
        if time.monotonic() > began + cap_seconds:
            break
        at, error = time.monotonic() - began, None
        try:
            status, _, _, seconds = get(port, "/health", timeout=2.0, source=SOURCES["client"])
            error = None if status == 200 else status
        except Exception as failure:
            seconds, error = 2.0, type(failure).__name__
        print(json.dumps({"at": at, "seconds": seconds, "error": error}), flush=True)
        time.sleep(spacing)
    return 0


def summarize(values):
    return (f"p50 {ms(percentile(values, 50))}, p90 {ms(percentile(values, 90))}, p99 {ms(percentile(values, 99))}, "
            f"max {ms(max(values)) if values else 'n/a'} over {len(values)}")


def attack(port, server, tile_paths):
    pid = server.pid
    rss_before = rss_mb(pid)
    latencies, _ = cached_tile_latencies(port, tile_paths, 300, 20)
    info(f"before the attack: cached tiles {summarize(latencies)}; RSS {rss_before:.0f} MB; {open_fds(pid)} fds")

    guard = MemoryGuard(server)
    started = time.monotonic()
    slowloris = Slowloris(port, SLOWLORIS, 120)
    idle = Idle(port, IDLE)
    streams = Streams(port, STREAMS)
    renders = Requests(port, [RENDER_PATH.format(lon=-73.9712 + i * 0.0005) for i in range(RENDERS)], timeout=100,
                       source=SOURCES["renders"])
    stalled_tiles = [f"/maps/stalled/12/{1200 + i % 8}/{1530 + i // 8}.png" for i in range(STALLED)]
    stalled = Requests(port, stalled_tiles, timeout=60, source=SOURCES["stalled"])
    info(f"attack opened in {time.monotonic() - started:.1f} s: {len(streams.sockets)} streams ({streams.failed_to_open} refused), "
         f"{len(idle.sockets)} idle, {RENDERS} renders, {STALLED} stalled-upstream requests, slowhttptest -c {SLOWLORIS}")
    # slowhttptest opens 500 connections a second: let it reach 1,500
    time.sleep(max(0.0, started + 4.0 - time.monotonic()))

    probes_a, probe_errors_a, offsets_a = fresh_connection_probes(port, FRESH_PROBES // 2, 0.25, 10, started)
    tiles, tile_errors = cached_tile_latencies(port, tile_paths, TILE_REQUESTS, 30)
    health, health_errors = health_latencies(port, HEALTH_REQUESTS, 10)
    probes_b, probe_errors_b, offsets_b = fresh_connection_probes(port, FRESH_PROBES // 2, 0.25, 10, started)
    measured_until = time.monotonic()
    info(f"measured for {measured_until - started:.1f} s after the attack began; server RSS now {rss_mb(pid) or 0:.0f} MB, "
         f"{open_fds(pid)} fds; slowhttptest had at most {slowloris.connected_peak} connected at once"
         f"{', and reported the service unavailable' if slowloris.unavailable_seen else ''}")

    checks.check(f"cached tiles under attack: p99 < 50 ms, no errors, all {TILE_REQUESTS} done",
                 len(tiles) == TILE_REQUESTS and not tile_errors and percentile(tiles, 99) < 0.050,
                 f"{summarize(tiles)}; {len(tile_errors)} errors {sorted(set(map(str, tile_errors)))[:4]}")
    checks.check(f"/health under attack: p99 < 10 ms, no errors, all {HEALTH_REQUESTS} done",
                 len(health) == HEALTH_REQUESTS and not health_errors and percentile(health, 99) < 0.010,
                 f"{summarize(health)}; {len(health_errors)} errors {sorted(set(map(str, health_errors)))[:4]}")
    probes, probe_errors = probes_a + probes_b, probe_errors_a + probe_errors_b
    slow = [f"{ms(t)} at {at:.1f} s" for t, at in zip(probes, offsets_a + offsets_b) if t >= 0.050]
    checks.check(f"fresh connections during slowloris: each of {FRESH_PROBES} answered within 100 ms",
                 len(probes) == FRESH_PROBES and not probe_errors and max(probes, default=9) < 0.100,
                 f"{summarize(probes)}; {len(probe_errors)} errors {sorted(set(map(str, probe_errors)))[:4]}"
                 + (f"; over 50 ms: {', '.join(slow)} after the attack began" if slow else ""))
    checks.check("slowhttptest got its 1,500 connections (the attack really ran)", slowloris.established_peak >= SLOWLORIS * 0.9,
                 f"connected + closed at most {slowloris.established_peak}, connected at most {slowloris.connected_peak}")

    now = time.monotonic()
    flowing = [s for s in streams.sockets if streams.events.get(s, 0) >= 10 and now - streams.last.get(s, 0) < 3.0]
    statuses = sorted(set(streams.status.values()))
    counts = sorted(streams.events.get(s, 0) for s in streams.sockets)
    checks.check(f"all {STREAMS} game streams kept flowing (>= 10 events each, the last < 3 s ago)", len(flowing) == STREAMS,
                 f"{len(flowing)} flowing; events per stream min {counts[0] if counts else 0}, median "
                 f"{counts[len(counts) // 2] if counts else 0}; status lines {statuses[:3]}")
    info(f"{idle.still_open()} of {IDLE} idle connections still open after {time.monotonic() - started:.0f} s")

    # The renders and stalled requests have had their chance; wait for their answers
    # (bounded), then end everything.
    renders.wait(started + 100)
    stalled.wait(started + 100)
    renders.abort()
    stalled.abort()
    streams.close()
    idle.close()
    slowloris.stop()

    results = [r for r in renders.results if r is not None]
    refused = [r for r in results if r[0] == 503]
    rendered = [r for r in results if r[0] == 200]
    slow_refusals = [f"{r[2]:.1f} s" for r in refused if r[2] >= 1.0 or not r[1]]
    others = [r for r in results if r[0] not in (200, 503)]
    render_times = sorted(r[2] for r in rendered)
    info(f"renders: {len(rendered)} x 200 ({', '.join(f'{t:.1f}' for t in render_times[:6])}{' ...' if len(render_times) > 6 else ''} s), "
         f"{len(refused)} x 503, others {[(r[0], round(r[2], 1)) for r in others][:5]}, {RENDERS - len(results)} unanswered")
    checks.check(f"{RENDERS} large static renders: each 200 or 503 (nothing else, none unanswered)",
                 len(results) == RENDERS and not others and rendered, f"{len(rendered)} x 200, {len(refused)} x 503, "
                 f"{len(others)} other, {RENDERS - len(results)} unanswered")
    checks.check("renders beyond the budget: 503 with Retry-After within 1 s",
                 bool(refused) and not slow_refusals,
                 f"{len(refused)} refused; slow or without Retry-After: {slow_refusals[:6] or 'none'}; "
                 f"refusal times {sorted(round(r[2], 2) for r in refused)[:4]}")

    stalled_results = [r for r in stalled.results if r is not None]
    by_status = {}
    for r in stalled_results:
        by_status[r[0]] = by_status.get(r[0], 0) + 1
    slowest = max((r[2] for r in stalled_results), default=0)
    info(f"stalled-upstream tiles: {by_status}, slowest answer {slowest:.1f} s, {STALLED - len(stalled_results)} unanswered")
    checks.check("stalled-upstream tiles are answered 503/504 with Retry-After within 35 s",
                 len(stalled_results) == STALLED and all(r[0] in (503, 504) and r[1] and r[2] < 35 for r in stalled_results),
                 f"{by_status}, slowest {slowest:.1f} s")
    guard.stop()
    return rss_before, guard


def out_of_descriptors(tilekit, projects, folder):
    """A server allowed more connections than it has file descriptors (64): 120 clients
    connect at once. It accepts until it runs out, then stops listening for a moment rather
    than spin on a socket that stays readable, answers those it holds, and takes the waiting
    ones once others close."""
    server, port = start_server(tilekit, projects, folder, extra=("--max-connections", "200"), descriptors=64)
    try:
        def cpu_seconds():
            fields = open(f"/proc/{server.pid}/stat").read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        clients = []
        for index in range(120):
            client = socket.socket()
            client.settimeout(5)
            client.bind((f"127.0.0.{10 + index // 40}", 0))  # three addresses: under the per-client limit
            client.connect((HOST, port))
            clients.append(client)
        before = cpu_seconds()
        time.sleep(3)
        spent = cpu_seconds() - before
        def answered(group):
            count = 0
            for client in group:
                try:
                    client.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
                    count += client.recv(64).startswith(b"HTTP/1.1 200")
                except OSError:
                    pass
            return count
        first = answered(clients[:10])
        for client in clients[:60]:
            client.close()
        rest = answered(clients[60:])
        checks.check("out of descriptors (limit 64, 120 clients): no spinning, the held ones answered, the waiting ones taken later",
                     spent < 0.5 and first == 10 and rest >= 50,
                     f"{spent:.2f} s of CPU in 3 s waiting; {first} of the first 10 answered; "
                     f"after 60 closed, {rest} of the 60 that waited answered")
        for client in clients[60:]:
            client.close()
    finally:
        stop_server(server)


def main():
    tilekit = os.path.abspath(sys.argv[1])
    if not shutil.which("slowhttptest"):
        sys.exit("slowhttptest is not installed: bash scripts/install-deps.sh slowhttptest")
    limit = raise_nofile()
    if limit < 4096:
        sys.exit(f"the open-file hard limit is {limit}: the attack needs about 3,000 connections")
    began = time.monotonic()
    upstream, upstream_port = start_upstream()
    with tempfile.TemporaryDirectory(prefix="tilekit-starve-") as folder:
        projects = make_projects(folder, upstream_port)
        out_of_descriptors(tilekit, projects, folder)
        server, port = start_server(tilekit, projects, folder)
        soft, hard = (int(v) if v.isdigit() else v for v in open(f"/proc/{server.pid}/limits").read()
                      .split("Max open files")[1].split()[:2])
        info(f"tilekit serve pid {server.pid} on port {port}, open-file limit {soft}/{hard}")
        tile_paths = ["/maps/park/%d/%d/%d.png" % t for t in park_tiles([15])]
        warm = [get(port, path, timeout=10)[0] for path in tile_paths]
        checks.check(f"warm-up: the {len(tile_paths)} park tiles at z15 are served", all(s == 200 for s in warm),
                     f"statuses {sorted(set(warm))}")
        try:
            rss_before, guard = attack(port, server, tile_paths)
            time.sleep(5)  # let the server let go of what the attack cost
            alive = server.poll() is None
            health = tile = None
            if alive:
                try:
                    health = get(port, "/health", timeout=1.0, source=SOURCES["client"])
                    tile = get(port, tile_paths[0], timeout=1.0, source=SOURCES["client"])
                except Exception as error:
                    health = health or (type(error).__name__, {}, b"", 1.0)
            checks.check("after the attack the server is up and answers /health and a tile within 1 s",
                         alive and health and health[0] == 200 and tile and tile[0] == 200,
                         f"exit status {server.poll()}" if not alive else
                         f"/health {health[0] if health else None} in {ms(health[3]) if health else 'n/a'}, "
                         f"tile {tile[0] if tile else None} in {ms(tile[3]) if tile else 'n/a'}")
            rss_after, peak = rss_mb(server.pid), rss_mb(server.pid, "VmHWM")
            checks.check("peak RSS during the attack under 4 GiB", not guard.killed and (peak or guard.peak) < 4096,
                         f"peak {peak or guard.peak:.0f} MB" + (" (killed by the memory guard)" if guard.killed else ""))
            checks.check("RSS 5 s after the attack within 256 MB of before", rss_after is not None and rss_after < rss_before + 256,
                         f"before {rss_before:.0f} MB, after {rss_after or 0:.0f} MB, {open_fds(server.pid)} fds")
        finally:
            code = stop_server(server)
            upstream.stdin.close()
            upstream.wait(timeout=10)
        info(f"server exit status {code}; the whole check took {time.monotonic() - began:.0f} s")
        if checks.failed:
            log = open(os.path.join(folder, "access.log"), errors="replace").read().strip().splitlines()
            info(f"server log ({len(log)} lines), last lines: " + " | ".join(log[-5:]))
    return checks.summary()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--probe"]:
        sys.exit(probe_main(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])))
    sys.exit(main())
