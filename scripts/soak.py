#!/usr/bin/env python3
"""A soak of `tilekit serve` on 127.0.0.1: N minutes of mixed traffic, cached tiles with
wrk (Debian `wrk`; a Python client when it is missing) beside TileJSON, static images,
overzoomed tiles drawn on demand, game streams opening and closing, and tiles whose
upstream stalls (the client gives up after 3 s, so abandoned work is part of the mix).
The server's RSS, open files and threads are sampled every 2 s and printed every 10 s. PASS when the
RSS with only cached tiles in flight (the rest of the traffic paused for 6 s) at the end is
within 10% of the same after the warm-up (the first minute, or a third of a shorter run), so is
the RSS at rest 5 s after all traffic,
the server never died, and no request got an answer it should not.

The memory cache is bounded (`--cache-mb`, 128 MB by default in `serve`). Left at its default,
ten minutes of drawn tiles at random places fill it slowly, so RSS grows by what the cache is
allowed to hold, which says nothing about leaks. The soak gives the server a small cache
(`--cache-mb`, 8 by default), fills it with drawn tiles before the traffic starts, and prints the
cache's bytes (from /metrics) beside each RSS sample, so what is left to grow is what nothing bounds.

For `make bench`; `--minutes 1` for a quick try.

usage: soak.py TILEKIT [--minutes 10] [--cache-mb 8]
"""
import argparse
import http.client
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attacklib import (HOST, PARK_BOUNDS, Checks, KeepAlive, info, make_projects, open_fds, park_tiles, raise_nofile, rss_mb,  # noqa: E402
                       start_server, start_upstream, stop_server, tile_of)

checks = Checks()


class Tally:
    """Counts of outcomes per kind of traffic, from many threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.counts = {}

    def add(self, kind, outcome):
        with self.lock:
            key = (kind, outcome)
            self.counts[key] = self.counts.get(key, 0) + 1

    def text(self, kind):
        with self.lock:
            return ", ".join(f"{outcome}: {n}" for (k, outcome), n in sorted(self.counts.items(), key=str) if k == kind) or "none"

    def unexpected(self, kind, allowed):
        with self.lock:
            return {outcome: n for (k, outcome), n in self.counts.items() if k == kind and outcome not in allowed}


def cache_mb(port):
    """tilekit_tile_cache_bytes from /metrics in MiB, None when it cannot be read."""
    try:
        connection = http.client.HTTPConnection(HOST, port, timeout=5)
        connection.request("GET", "/metrics")
        text = connection.getresponse().read().decode()
        connection.close()
        value = re.search(r"^tilekit_tile_cache_bytes\s+(\S+)", text, re.MULTILINE)
        return float(value.group(1)) / (1 << 20) if value else None
    except (OSError, ValueError):
        return None


def threads_of(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("Threads:"))
    except (OSError, StopIteration):
        return None


# Cleared while RSS is measured at rest: the Python traffic waits (wrk's cached tiles go on).
RUNNING = threading.Event()
RUNNING.set()


def loop(until, pause, body):
    """Calls `body` until the end time, `pause` seconds apart, waiting while RUNNING is
    clear; an exception is one outcome."""
    while time.monotonic() < until:
        if not RUNNING.wait(timeout=max(0.0, until - time.monotonic())):
            break
        body()
        time.sleep(pause)


def quiet_rss(pid, seconds=6.0):
    """RSS after `seconds` without the Python traffic (the static images, drawn tiles, streams
    and stalled tiles in flight finish; wrk's cached tiles go on). Leaves the traffic paused."""
    RUNNING.clear()
    time.sleep(seconds)
    return rss_mb(pid)


def request(port, path, timeout, tally, kind, method="GET", body=None, headers=None):
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        tally.add(kind, response.status)
        return response.status, data
    except Exception as error:
        tally.add(kind, type(error).__name__)
        return None, b""
    finally:
        connection.close()


def tilejson_traffic(port, until, tally):
    client = KeepAlive(port, timeout=5)

    def one():
        for path in ("/maps/park.json", "/maps/stalled.json", "/maps/park/layers/base.json"):
            try:
                status, _ = client.request(path)
                tally.add("tilejson", status)
            except Exception as error:
                tally.add("tilejson", type(error).__name__)
    loop(until, 0.1, one)
    client.close()


def static_traffic(port, until, tally):
    rng = random.Random(1)

    def one():
        lon, lat = -73.99 + rng.random() * 0.04, 40.76 + rng.random() * 0.04
        size = rng.choice(["256x256", "512x512@2x", "800x600", "1024x1024@2x"])
        markers = "|".join(f"{lon + rng.uniform(-0.003, 0.003):.5f},{lat + rng.uniform(-0.003, 0.003):.5f}" for _ in range(5))
        request(port, f"/maps/park/static/{lon:.5f},{lat:.5f},{rng.choice([14, 15, 16])}/{size}.png?markers={markers}",
                60, tally, "static")
        feature = ('{"type":"Feature","geometry":{"type":"LineString","coordinates":[[%f,%f],[%f,%f]]},"properties":{"stroke":"#f00"}}'
                   % (lon, lat, lon + 0.005, lat + 0.003))
        request(port, "/maps/park/static/auto/400x300.png", 60, tally, "static", "POST", feature, {"Content-Type": "application/geo+json"})
    loop(until, 0.5, one)


def drawn_tile_traffic(port, until, tally):
    """Overzoomed tiles (z17-18) at random places of the park: drawn, then cached."""
    rng = random.Random(2)
    client = KeepAlive(port, timeout=10)
    west, south, east, north = PARK_BOUNDS

    def one():
        z = rng.choice([17, 18])
        _, x, y = tile_of(west + rng.random() * (east - west), south + rng.random() * (north - south), z)
        try:
            status, _ = client.request(f"/maps/park/{z}/{x}/{y}{rng.choice(['', '@2x'])}.{rng.choice(['png', 'webp', 'jpg'])}")
            tally.add("drawn tile", status)
        except Exception as error:
            tally.add("drawn tile", type(error).__name__)
    loop(until, 0.05, one)
    client.close()


def fill_cache(port, capacity_mb, tally):
    """Drawn z17-18 tiles, row by row over the park, until the memory cache is 90% full (or 3
    minutes): the cache then stays at its cap during the soak instead of growing through it."""
    client, started = KeepAlive(port, timeout=30), time.monotonic()
    paths = (f"/maps/park/{z}/{x}/{y}{variant}.{f}" for z, x, y in park_tiles(range(17, 19))  # what drawn_tile_traffic asks for
             for variant in ("", "@2x") for f in ("png", "webp", "jpg"))
    for i, path in enumerate(paths):
        if time.monotonic() - started > 180:
            break
        try:
            status, _ = client.request(path)
            tally.add("warm-up", status)
        except Exception as error:
            tally.add("warm-up", type(error).__name__)
        if i % 50 == 49 and (cache_mb(port) or 0) >= 0.9 * capacity_mb:
            break
    client.close()
    info(f"tile cache filled to {cache_mb(port) or 0:.1f} MB of {capacity_mb} MB in {time.monotonic() - started:.0f} s")


def stream_traffic(port, until, tally, seed):
    """Opens a game stream, reads it for 1-5 s, closes it; again until the end."""
    rng = random.Random(seed)

    def one():
        try:
            sock = socket.create_connection((HOST, port), timeout=5)
        except OSError as error:
            tally.add("stream", type(error).__name__)
            return
        try:
            sock.sendall(b"GET /maps/park/play?loop=1&time-warp=%d HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % rng.choice([4, 20, 100]))
            data, stop = b"", time.monotonic() + rng.uniform(1, 5)
            while time.monotonic() < min(stop, until + 5):
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
                if len(data) > 1 << 20:
                    data = data[:64] + data[-64:]
            status = data.split(b"\r\n", 1)[0].decode("latin-1")
            tally.add("stream", "200 with events" if status.endswith("200 OK") and b"event: position" in data else status or "no answer")
        except OSError as error:
            tally.add("stream", type(error).__name__)
        finally:
            sock.close()
    loop(until, 0.1, one)


def stalled_traffic(port, until, tally, seed):
    """Tiles whose upstream never answers, abandoned by the client after 3 s."""
    rng = random.Random(seed)

    def one():
        x, y = rng.randrange(1 << 14), rng.randrange(1 << 14)
        request(port, f"/maps/stalled/14/{x}/{y}.png", 3, tally, "stalled")
    loop(until, 0.2, one)


def python_tile_traffic(port, paths, until, tally):
    client, i = KeepAlive(port, timeout=5), 0
    while time.monotonic() < until:
        if not RUNNING.wait(timeout=max(0.0, until - time.monotonic())):
            break
        try:
            status, _ = client.request(paths[i % len(paths)])
            tally.add("cached tile", status)
        except Exception as error:
            tally.add("cached tile", type(error).__name__)
        i += 1
    client.close()


def start_wrk(port, paths, seconds, folder):
    script = os.path.join(folder, "tiles.lua")
    with open(script, "w") as f:
        f.write("local paths = {" + ",".join(f'"{p}"' for p in paths) + "}\nlocal i = 0\n"
                "request = function()\n  i = i + 1\n  return wrk.format(\"GET\", paths[(i % #paths) + 1])\nend\n")
    return subprocess.Popen(["wrk", "-t1", "-c16", f"-d{seconds}s", "--timeout", "5s", "--latency", "-s", script, f"http://{HOST}:{port}/"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def main():
    parser = argparse.ArgumentParser(description="soak tilekit serve with mixed traffic")
    parser.add_argument("tilekit")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--cache-mb", type=int, default=8, help="the server's memory cache (filled during the warm-up)")
    arguments = parser.parse_args()
    if not 0.25 <= arguments.minutes <= 240:
        parser.error("--minutes must be between 0.25 and 240")
    tilekit = os.path.abspath(arguments.tilekit)
    total = arguments.minutes * 60
    warmup = min(60.0, total / 3)
    raise_nofile()
    upstream, upstream_port = start_upstream()
    with tempfile.TemporaryDirectory(prefix="tilekit-soak-") as folder:
        projects = make_projects(folder, upstream_port)
        server, port = start_server(tilekit, projects, folder, ["--quiet", "--cache-mb", str(arguments.cache_mb)])
        pid = server.pid
        tile_paths = [f"/maps/park/{z}/{x}/{y}{scale}.png" for z, x, y in park_tiles(range(14, 17)) for scale in ("", "@2x")]
        tally = Tally()
        for path in tile_paths:  # warm the memory cache: wrk then asks for these only
            request(port, path, 10, tally, "warm-up")
        fill_cache(port, arguments.cache_mb, tally)
        info(f"tilekit serve pid {pid} on port {port}; {len(tile_paths)} cached tiles; {total:.0f} s of traffic, "
             f"warm-up {warmup:.0f} s; RSS {rss_mb(pid):.0f} MB")

        began = time.monotonic()
        until = began + total
        wrk = start_wrk(port, tile_paths, int(total), folder) if shutil.which("wrk") else None
        if wrk is None:
            info("wrk is not installed (bash scripts/install-deps.sh wrk): cached tiles from a Python client instead")
        workers = [threading.Thread(target=tilejson_traffic, args=(port, until, tally)),
                   threading.Thread(target=static_traffic, args=(port, until, tally)),
                   threading.Thread(target=drawn_tile_traffic, args=(port, until, tally))]
        workers += [threading.Thread(target=stream_traffic, args=(port, until, tally, i)) for i in range(8)]
        workers += [threading.Thread(target=stalled_traffic, args=(port, until, tally, 100 + i)) for i in range(4)]
        if wrk is None:
            workers += [threading.Thread(target=python_tile_traffic, args=(port, tile_paths, until, tally)) for _ in range(2)]
        for worker in workers:
            worker.daemon = True
            worker.start()

        # RSS every 2 s (each large static image in flight moves it by tens of MB, so the minute's
        # median needs many samples); a line every 10 s with the minute so far.
        samples, died = [], None
        quiet = {}  # RSS with only cached tiles in flight: after the warm-up, and 8 s before the end
        next_sample = began + 2
        while time.monotonic() < until:
            time.sleep(max(0.0, min(next_sample, until) - time.monotonic()))
            if server.poll() is not None:
                died = server.returncode
                break
            if time.monotonic() >= next_sample:
                t = next_sample - began
                sample = (t, rss_mb(pid), open_fds(pid), threads_of(pid))
                samples.append(sample)
                if round(t) % 10 == 0:
                    cached = cache_mb(port)
                    recent = sorted(s[1] for s in samples[-5:] if s[1] is not None) or [0.0]
                    print(f"     t={t:5.0f} s  RSS {sample[1]:7.1f} MB (last 10 s {recent[0]:.0f}-{recent[-1]:.0f})"
                          f"  tile cache {cached if cached is not None else -1:5.1f} MB  fds {sample[2]:5}  threads {sample[3]:4}"
                          f"{'  (warm-up)' if t < warmup else ''}", flush=True)
                next_sample += 2
                if "start" not in quiet and t >= warmup:
                    quiet["start"] = quiet_rss(pid)
                    print(f"     after the warm-up, the Python traffic paused 6 s: RSS {quiet['start'] or 0:.1f} MB", flush=True)
                    RUNNING.set()
                    next_sample = time.monotonic() + 2
                elif "start" in quiet and "end" not in quiet and time.monotonic() >= until - 8:
                    quiet["end"] = quiet_rss(pid)  # the traffic stays paused to the end
                    print(f"     at the end, the Python traffic paused 6 s: RSS {quiet['end'] or 0:.1f} MB", flush=True)
        for worker in workers:
            worker.join(timeout=max(1.0, until + 70 - time.monotonic()))
        wrk_text = ""
        if wrk is not None:
            try:
                wrk_text = wrk.communicate(timeout=30)[0]
            except subprocess.TimeoutExpired:
                wrk.kill()
                wrk_text = wrk.communicate()[0]
        time.sleep(5)
        after = (rss_mb(pid), open_fds(pid), threads_of(pid))
        try:
            checks.check("the server never died", died is None and server.poll() is None,
                         f"exit status {died if died is not None else server.poll()}")
            # The same state at both ends: nothing but cached tiles in flight. Under load RSS
            # swings by tens of MB with the large static images in flight, and how many are in
            # flight depends on how busy the machine is (other processes slow the renders down),
            # so the medians under load are printed but not judged.
            if quiet.get("start") and quiet.get("end"):
                growth = (quiet["end"] - quiet["start"]) / quiet["start"] * 100
                checks.check("RSS with only cached tiles in flight: at the end within 10% of after the warm-up",
                             quiet["end"] <= quiet["start"] * 1.10,
                             f"{quiet['start']:.1f} MB after warm-up, {quiet['end']:.1f} MB at the end: {growth:+.1f}%")
            else:
                checks.check("RSS with only cached tiles in flight: at the end within 10% of after the warm-up", False,
                             f"not measured (run too short?): {quiet}")
            # At rest nothing is in flight: what is left is what was kept.
            if after[0] is not None and quiet.get("start"):
                checks.check("RSS at rest after all traffic (wrk too) within 10% of the RSS after the warm-up",
                             after[0] <= quiet["start"] * 1.10,
                             f"{after[0]:.1f} MB 5 s after the traffic, {quiet['start']:.1f} MB after warm-up (cached tiles in flight)")
            minute = [s[1] for s in samples if warmup <= s[0] < warmup + 60 and s[1] is not None]
            last = [s[1] for s in samples if s[0] > samples[-1][0] - 60 and s[1] is not None] if samples else []
            if minute and last:
                baseline, final = sorted(minute)[len(minute) // 2], sorted(last)[len(last) // 2]
                info(f"RSS under load, medians of the minute after the warm-up and of the last minute: {baseline:.1f} MB, "
                     f"{final:.1f} MB ({(final - baseline) / baseline * 100:+.1f}%); peak {rss_mb(pid, 'VmHWM') or 0:.0f} MB")
            steady = [(t, rss) for t, rss, _, _ in samples if t >= warmup and rss is not None]
            if len(steady) >= 3:  # least squares: a slow leak shows as a steady slope
                mean_t = sum(t for t, _ in steady) / len(steady)
                mean_rss = sum(r for _, r in steady) / len(steady)
                slope = (sum((t - mean_t) * (r - mean_rss) for t, r in steady) / sum((t - mean_t) ** 2 for t, _ in steady))
                info(f"RSS trend after the warm-up: {slope * 60:+.2f} MB per minute over {len(steady)} samples")
            info(f"5 s after the traffic: RSS {after[0] or 0:.1f} MB, {after[1]} fds, {after[2]} threads")

            if wrk is not None:
                requests = re.search(r"Requests/sec:\s+([\d.]+)", wrk_text)
                errors = re.search(r"Socket errors: (.*)", wrk_text)
                non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", wrk_text)
                latency = re.search(r"^\s+99%\s+(\S+)", wrk_text, re.MULTILINE)
                info(f"wrk: {requests.group(1) if requests else '?'} requests/s, p99 {latency.group(1) if latency else '?'}, "
                     f"socket errors: {errors.group(1) if errors else 'none'}, non-2xx: {non_2xx.group(1) if non_2xx else 0}")
                checks.check("wrk: cached tiles without socket errors or non-2xx answers", bool(requests) and not errors and not non_2xx,
                             wrk_text.strip().splitlines()[-6:] if (errors or non_2xx or not requests) else f"{requests.group(1)} requests/s")
            else:
                bad = tally.unexpected("cached tile", {200})
                checks.check("cached tiles: all 200", not bad, tally.text("cached tile"))
            for kind, allowed in (("tilejson", {200}), ("static", {200, 503}), ("drawn tile", {200}),
                                  ("stream", {"200 with events"}), ("stalled", {503, 504, "TimeoutError"})):
                bad = tally.unexpected(kind, allowed)
                total_count = sum(n for (k, _), n in tally.counts.items() if k == kind)
                checks.check(f"{kind}: only {sorted(map(str, allowed))} ({total_count} requests)", total_count > 0 and not bad,
                             tally.text(kind))
        finally:
            code = stop_server(server)
            upstream.stdin.close()
            upstream.wait(timeout=10)
        info(f"server exit status {code}")
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
