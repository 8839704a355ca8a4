#!/usr/bin/env python3
"""A TileKit cluster on one machine, as issue 12 describes it, checked end to end:

    clients -> nginx (load balancer) -> 3 x `tilekit serve --shared-cache redis://...`
                                              |                 \\
                                       redis-server        nginx serving base.pmtiles
                                                           by HTTP range requests

It shows that a tile rendered through one instance is a Redis hit through another, that
`kill -9` of an instance during a load run costs no failed request at the balancer, that
stopping Redis mid-run costs none either, and that hits resume when Redis comes back.

Usage: check-cluster.py TILEKIT_BINARY      (Debian nginx-light and redis-server)
Every process listens on 127.0.0.1; every loop is bounded in count and time.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attacklib import Checks, HOST, KeepAlive, get, info, start_server, stop_server  # noqa: E402

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
BBOX = (-74.02, 40.70, -73.93, 40.80)  # Manhattan, around Central Park


def free_port():
    import socket
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def tiles(zoom):
    """The tiles of BBOX at `zoom`, as z/x/y paths."""
    import math
    def tile(lon, lat):
        n = 2 ** zoom
        x = int((lon + 180) / 360 * n)
        y = int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n)
        return x, y
    (x0, y1), (x1, y0) = tile(BBOX[0], BBOX[1]), tile(BBOX[2], BBOX[3])
    return [f"{zoom}/{x}/{y}" for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)]


def start_redis(folder, port):
    process = subprocess.Popen([REDIS, "--port", str(port), "--bind", HOST, "--save", "", "--appendonly", "no",
                                "--dir", folder, "--logfile", os.path.join(folder, "redis.log")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        if redis_cli(port, "PING") == "PONG":
            return process
        time.sleep(0.05)
    sys.exit("redis-server did not start: " + open(os.path.join(folder, "redis.log")).read()[-1000:])


def redis_cli(port, *arguments):
    run = subprocess.run([REDIS_CLI, "-h", HOST, "-p", str(port), *arguments], capture_output=True, text=True, timeout=10)
    return run.stdout.strip()


def nginx_config(folder, balancer, data, instances):
    servers = "\n".join(f"        server {HOST}:{port} max_fails=1 fail_timeout=5s;" for port in instances)
    user = "user root;" if os.geteuid() == 0 else ""
    return f"""{user}
daemon off;
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log {folder}/nginx-access.log;
    # The stateless tile servers. A failed or refused connection, or a 502/503 from one of
    # them, is retried on the next (tile GETs are idempotent).
    upstream tilekit {{
{servers}
        keepalive 32;
    }}
    server {{
        listen {HOST}:{balancer};
        location / {{
            proxy_pass http://tilekit;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_next_upstream error timeout http_502 http_503;
            proxy_next_upstream_tries 3;
            proxy_connect_timeout 1s;
            proxy_read_timeout 30s;
        }}
    }}
}}
"""


def data_config(folder, data):
    """The tiles, as one PMTiles file any static host, object store or CDN could serve: nginx
    answers Range requests with ETag out of the box. A process of its own, started before
    the instances: each reads the file's header when it opens the map, and refuses to start
    (exit 74) when it cannot."""
    user = "user root;" if os.geteuid() == 0 else ""
    return f"""{user}
daemon off;
worker_processes 1;
pid {folder}/nginx-data.pid;
error_log {folder}/nginx-data-error.log warn;
events {{ worker_connections 1024; }}
http {{
    access_log {folder}/nginx-data-access.log;
    server {{
        listen {HOST}:{data};
        root {folder}/www;
    }}
}}
"""


def load(port, paths, seconds, clients, event_at=None, event=None):
    """`clients` keep-alive clients asking for `paths` in turn for `seconds`; `event` runs once
    at `event_at` seconds. Returns (requests, failures as (path, what) pairs)."""
    stop = time.monotonic() + seconds
    counts, failures, lock = [0], [], threading.Lock()

    def client(index):
        session = KeepAlive(port, timeout=15)
        i = index
        while time.monotonic() < stop:
            path = "/maps/cluster/" + paths[i % len(paths)] + ".png"
            i += clients
            try:
                status, body = session.request(path)
                ok = status == 200 and body[:4] == b"\x89PNG"
                what = status
            except Exception as error:  # noqa: BLE001 - every failure counts, whatever it is
                ok, what = False, type(error).__name__
            with lock:
                counts[0] += 1
                if not ok:
                    failures.append((path, what))
        session.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    if event:
        time.sleep(max(0, event_at - (time.monotonic() - started)))
        event()
    for thread in threads:
        thread.join()
    return counts[0], failures


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tilekit = os.path.abspath(sys.argv[1])
    for tool in (NGINX, REDIS, REDIS_CLI):
        if not os.path.exists(tool):
            sys.exit(f"{tool} is missing: bash scripts/install-deps.sh nginx-light redis-server")
    checks = Checks()
    folder = tempfile.mkdtemp(prefix="tilekit-cluster-")
    os.chmod(folder, 0o755)
    processes = []
    try:
        # The base tiles: a parchment base seeded into one PMTiles file, served by nginx.
        os.makedirs(os.path.join(folder, "www"))
        with open(os.path.join(folder, "paper.json"), "w") as f:
            json.dump({"name": "paper", "layers": [{"id": "paper", "type": "generated", "generator": "parchment", "base": True}]}, f)
        seeded = subprocess.run([tilekit, "seed", "--source", os.path.join(folder, "paper.json"), "--bbox", ",".join(map(str, BBOX)),
                                 "--zoom", "11-13", "--out", os.path.join(folder, "www", "base.pmtiles")], capture_output=True, text=True)
        if seeded.returncode != 0:
            sys.exit("seeding the base failed: " + seeded.stderr[-2000:])
        balancer, data, redis_port = free_port(), free_port(), free_port()
        base_url = f"http://{HOST}:{data}/base.pmtiles"
        # The map every instance serves: the base over HTTP, and an overlay each instance
        # draws (its renders are what Redis shares).
        with open(os.path.join(folder, "pins.geojson"), "w") as f:
            json.dump({"type": "FeatureCollection", "features": [
                {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-73.9654, 40.7829]}, "properties": {"title": "Great Lawn", "radius": 200}},
                {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[-73.9819, 40.7681], [-73.9580, 40.8006]]},
                 "properties": {"stroke": "#b03a2e", "stroke-width": 4}}]}, f)
        with open(os.path.join(folder, "cluster.json"), "w") as f:
            json.dump({"name": "cluster", "minzoom": 11, "maxzoom": 13, "layers": [
                {"id": "base", "type": "tiles", "source": base_url, "base": True},
                {"id": "pins", "type": "features", "files": ["pins.geojson"], "zindex": 1}]}, f)

        redis = start_redis(folder, redis_port)
        processes.append(redis)
        with open(os.path.join(folder, "nginx-data.conf"), "w") as f:
            f.write(data_config(folder, data))
        processes.append(subprocess.Popen([NGINX, "-p", folder, "-c", os.path.join(folder, "nginx-data.conf")],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        for _ in range(100):
            try:
                socket.create_connection((HOST, data), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        instances = []
        for index in range(3):
            process, port = start_server(tilekit, [os.path.join(folder, "cluster.json")], folder,
                                         extra=("--shared-cache", f"redis://{HOST}:{redis_port}", "--quiet"))
            processes.append(process)
            instances.append((process, port))
        # The balancer starts once the instances have their ports.
        with open(os.path.join(folder, "nginx.conf"), "w") as f:
            f.write(nginx_config(folder, balancer, data, [port for _, port in instances]))
        nginx = subprocess.Popen([NGINX, "-p", folder, "-c", os.path.join(folder, "nginx.conf")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        processes.append(nginx)
        for _ in range(100):
            try:
                if get(balancer, "/health", timeout=1)[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        info(f"redis :{redis_port}, instances {[p for _, p in instances]}, balancer :{balancer}, tiles {base_url}")
        for _, port in instances:
            status = get(port, "/ready", timeout=5)[0]
            checks.check(f"instance :{port} is ready (maps open, Redis answers)", status == 200, status)

        # 1. Rendered through one instance, a Redis hit through another.
        (first, a), (second, b) = instances[0], instances[1]
        path = "/maps/cluster/" + tiles(13)[0] + ".png"
        status, headers, body, _ = get(a, path)
        checks.check("a tile rendered by instance A is stored in Redis", status == 200 and "tilekit-redis; fwd=miss; stored" in headers.get("cache-status", ""),
                     f"{status} Cache-Status: {headers.get('cache-status')}")
        for _ in range(100):
            if redis_cli(redis_port, "DBSIZE") not in ("", "0"):
                break
            time.sleep(0.05)
        status, headers2, body2, _ = get(b, path)
        checks.check("the same tile through instance B is a Redis hit, byte for byte", status == 200 and headers2.get("cache-status", "").startswith("tilekit-redis; hit") and body2 == body,
                     f"{status} Cache-Status: {headers2.get('cache-status')}")

        # 2. kill -9 of an instance under load: no failed request at the balancer.
        paths = tiles(12) + tiles(13)
        requests, failures = load(balancer, paths, seconds=8, clients=8, event_at=2.5,
                                  event=lambda: os.kill(instances[2][0].pid, signal.SIGKILL))
        checks.check("kill -9 of one instance during a load run: 0 failed requests", requests > 100 and not failures,
                     f"{requests} requests, {len(failures)} failed {failures[:3]}")

        # 3. Redis stopped mid-run: still no failed request.
        requests, failures = load(balancer, paths, seconds=6, clients=8, event_at=2,
                                  event=lambda: (redis.kill(), redis.wait()))
        checks.check("Redis stopped during a load run: 0 failed requests", requests > 100 and not failures,
                     f"{requests} requests, {len(failures)} failed {failures[:3]}")
        status, headers, _, _ = get(a, "/maps/cluster/" + tiles(11)[0] + ".png")
        checks.check("without Redis, tiles are drawn and say Redis was bypassed", status == 200 and "tilekit-redis; fwd=bypass" in headers.get("cache-status", ""),
                     f"{status} Cache-Status: {headers.get('cache-status')}")
        checks.check("/ready says not ready while Redis is gone", get(a, "/ready", timeout=5)[0] == 503)

        # 4. Redis back on its port: hits resume.
        redis = start_redis(folder, redis_port)
        processes.append(redis)
        resumed, detail = False, ""
        for attempt in range(40):  # the instances try Redis again after their reconnect interval
            # A tile neither instance has drawn (west of the base: an empty tile, which is
            # shared too).
            fresh = f"/maps/cluster/13/{2300 + attempt}/3000.png"
            get(a, fresh)
            time.sleep(0.2)
            status, headers, _, _ = get(b, fresh)
            detail = headers.get("cache-status", "")
            if detail.startswith("tilekit-redis; hit"):
                resumed = True
                break
        checks.check("when Redis comes back, hits resume", resumed, detail)
        metrics = get(b, "/metrics")[2].decode()
        checks.check("/metrics counts the shared cache's hits and failures",
                     "tilekit_shared_cache_hits_total" in metrics and "tilekit_shared_cache_errors_total" in metrics)
    finally:
        for process in processes:
            if process.poll() is None:
                if process.args[0] == NGINX:
                    process.send_signal(signal.SIGQUIT)
                    try:
                        process.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        process.kill()
                elif "serve" in process.args:
                    stop_server(process, timeout=15)
                else:
                    process.kill()
                    process.wait()
        shutil.rmtree(folder, ignore_errors=True)
    return checks.summary()


if __name__ == "__main__":
    sys.exit(main())
