#!/usr/bin/env python3
"""`make bench`: TileKit beside reference tools on the same machine in the same run,
printing ratios (the machine is noisy: compare ratios, not absolute times).

Codecs: 256 px tiles cut from the sample map, encoded on one core by TileKit (libpng,
TurboJPEG, libwebp through Canvas) and by Pillow (the same zlib, libjpeg-turbo and libwebp
underneath, through Python), with matching settings.

Stores and seeding: ~1,650 distinct tiles (z10-16 over Manhattan) served by nginx on
127.0.0.1; TileKit's `seed` and MapProxy's `mapproxy-seed` download them into MBTiles at
the same concurrency; then both read every tile of the same MBTiles file in random order
on one core (MapProxy's MBTilesCache), and TileKit's PMTiles reads are set beside the
`pmtiles` package's reader (MapProxy has no PMTiles cache).

PMTiles over HTTP: one PMTiles file with leaf directories (~11,000 tiles, the PyPI pmtiles
package's writer) read in random order by `tilekit-bench read`, from the file and from
nginx on 127.0.0.1 by range requests (one at a time, and 8 at a time), in the same run:
tiles/s as a ratio, and range requests per uncached tile (TileKit keeps directories, not
tiles: every tile read after the directories are warm is one request), checked against
nginx's access log.

Snapshots: 600x400 images with 100 markers and a 200-point line over tiles from nginx,
TileKit beside staticmap and py-staticmaps (PyPI), all in process, all encoding PNG.

Pyramids: a deterministic 4096 px and 16384 px image over Central Park through `tilekit
pyramid`, gdal2tiles and `vips dzsave --layout google`, in one run, the tiles written to a
tmpfs (/dev/shm) where there is one (the disk's cost of creating files varied more than
TileKit's whole run); z13-19 again on the disk, for comparison. The 4096 px image's top-zoom
tiles from TileKit and gdal2tiles are compared with the exact area average of the image
(RMS over every opaque tile pixel whose footprint lies inside it). Beside them, the 16384 px
image's rows read alone on one thread (`tilekit-bench scan`): the decoding thread's part of
a build.

Sharded pyramid: the 8192 px image in 2 shards run as 2 processes at once, then `tilekit
merge`, beside the unsharded build of the same image (the merged PMTiles must be the same
file, byte for byte).

Serving: wrk on two shuffled mixes of ~1,650 cached tiles, small (10-20 KB, flat map-like
colours) and large (~120 KB, photo-like grain), at 32 and 256 connections, against `tilekit
serve` (MBTiles, one connection thread per core) and nginx (the same tiles as static files,
one worker); beside them, with no goal, `tilekit serve --threads 1` against the same nginx
and nginx with 2 workers against TileKit's default, so each side is also measured with as
many threads as the other; at 32 connections, the goal pair at equal load (each connection
pausing after a reply) and one thread of each server on core 1 with wrk (one thread) on
core 0, so that no thread waits for a core; a control against the same nginx
(scripts/control-server.c: one epoll thread answering from memory, the least a tile server
can do), at full speed and then spinning what nginx's worker took more CPU a request, which
tells what of a p99 comes with answering faster than nginx's worker on cores that wrk
shares; MapProxy under gunicorn (the same MBTiles) on the small mix at 32 connections.

Feature layers: ~330 polygons and lines per 256 px tile drawn by TileKit and by Mapnik
(Debian python3-mapnik) with the same style, with and without PNG encoding.

Every figure printed, and every ratio against a reference (with the issue 15 goal beside
it), goes to one JSON file (--json, default bench-results.json) with the core count, the
load average at start and end (and per section), the date and the commit.

--curves (`make bench-curves`) measures the scale curves instead: pyramid time and peak
memory for a 4096, 16384 and 32768 px image (TileKit, gdal2tiles and vips dzsave, the
references stopped after --cap seconds), TileKit's pyramid on 1 and 2 cores, and serving
from 32 to 1024 connections; scripts/plot-bench.py draws them into docs/*.png.
"""
import argparse
import datetime
import io
import json
import math
import os
import platform
import random
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request

from PIL import Image

RELEASE = os.path.abspath(".build/release")
SECONDS = 2.0
ROUNDS = 3  # feature tiles: rounds of TileKit then Mapnik, each tool's best
# The deterministic test images are kept here between runs (the 32768 px one takes minutes to
# write); the version changes when test_image draws something else.
IMAGE_CACHE = os.path.abspath(".cache/bench-images")
IMAGE_VERSION = 1

# What this run measured: one entry per section (its figures, how long it took, the load
# around it) and every ratio against a reference, written by write_results.
RESULTS = {"meta": {}, "sections": {}, "ratios": []}


def record(section, key, value):
    RESULTS["sections"].setdefault(section, {})[key] = value


def ratio(name, value, goal=None, better="higher", section=None):
    """A ratio TileKit/reference (or reference/TileKit where `better` says so), with the
    issue 15 goal it is held to, if any."""
    entry = {"name": name, "value": round(value, 4), "better": better, "section": section}
    if goal is not None:
        entry["goal"] = goal
        entry["met"] = value >= goal if better == "higher" else value <= goal
    RESULTS["ratios"].append(entry)
    return value


def load_average():
    return [round(v, 2) for v in os.getloadavg()]


def run_text(command):
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=20)
        return (out.stdout + out.stderr).strip().splitlines()[0] if (out.stdout + out.stderr).strip() else ""
    except (OSError, subprocess.TimeoutExpired):
        return None


def binary_time(path):
    if not os.path.exists(path):
        return None
    return datetime.datetime.fromtimestamp(os.path.getmtime(path), datetime.timezone.utc).isoformat(timespec="seconds")


def machine_meta():
    commit = run_text(["git", "rev-parse", "HEAD"])
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip() != ""
    return {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit, "uncommitted_changes": dirty,
        "cores": os.cpu_count(), "cores_usable": len(os.sched_getaffinity(0)),
        "load_average_start": load_average(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9, 1),
        "kernel": platform.release(), "python": platform.python_version(),
        "open_files_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        # The binaries measured may be older than the commit (make bench rebuilds them; a
        # direct run of this script does not): their build time says which.
        "tilekit_binary": {"path": f"{RELEASE}/tilekit", "version": run_text([f"{RELEASE}/tilekit", "--version"]),
                           "built_utc": binary_time(f"{RELEASE}/tilekit"), "bench_built_utc": binary_time(f"{RELEASE}/tilekit-bench")},
        "tools": {"nginx": run_text(["nginx", "-v"]), "wrk": run_text(["wrk", "-v"]),
                  "gdal": run_text(["gdalinfo", "--version"]), "vips": run_text(["vips", "--version"])},
    }


def write_results(path):
    RESULTS["meta"]["load_average_end"] = load_average()
    RESULTS["meta"]["date_utc_end"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    with open(path + ".tmp", "w") as f:
        json.dump(RESULTS, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def pillow_rate(tiles, save):
    count, size, start = 0, 0, time.perf_counter()
    while True:
        for tile in tiles:
            buffer = io.BytesIO()
            save(tile, buffer)
            size += buffer.tell()
            count += 1
        elapsed = time.perf_counter() - start
        if elapsed >= SECONDS:
            return count / elapsed, size // count


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(directory, root, missing="=404", workers=1, core=None):
    """nginx serving `root` on a free 127.0.0.1 port (what a missing path gets: `missing`)
    with `workers` worker processes, all on CPU `core` if given. Returns the process, to
    terminate, and the port."""
    port = free_port()
    name = ("nginx" if workers == 1 else f"nginx-{workers}") + ("" if core is None else f"-core{core}")
    with open(f"{directory}/{name}.conf", "w") as f:
        # Room for wrk's 1024 connections of the serving curve (the bench raises its own limit).
        f.write(f"worker_processes {workers}; worker_rlimit_nofile 8192; daemon off; error_log {directory}/{name}.log; pid {directory}/{name}.pid;\n"
                f"events {{ worker_connections 4096; }}\n"
                f"http {{ include /etc/nginx/mime.types; access_log off; server {{ listen 127.0.0.1:{port}; root {root};"
                f" location / {{ try_files $uri {missing}; }} }} }}\n")
    process = subprocess.Popen([*pinned(core), "nginx", "-p", directory, "-c", f"{directory}/{name}.conf"])
    time.sleep(0.5)
    return process, port


# The C compiler that builds the serving section's control (none: no control pairs).
C_COMPILER = shutil.which("cc") or shutil.which("clang")


def start_control(directory, root, prefix, busy_us=0):
    """scripts/control-server.c (built on first use) serving `root` under `prefix` on a free
    127.0.0.1 port, spinning `busy_us` µs of its CPU time before each reply; once it accepts
    connections (it reads every tile first). Returns the process, to terminate, and the port."""
    binary = f"{directory}/control-server"
    if not os.path.exists(binary):
        subprocess.run([C_COMPILER, "-O2", "-o", binary, os.path.join(os.path.dirname(os.path.abspath(__file__)), "control-server.c")], check=True)
    port = free_port()
    process = subprocess.Popen([binary, root, str(port), "--prefix", prefix, "--busy-us", f"{busy_us:.1f}"])
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, port
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise RuntimeError(f"the control server on {root} did not start")
            time.sleep(0.1)


def pinned(core):
    """The prefix that runs a command on CPU `core` alone (taskset execs it: the same process,
    so its CPU time is still counted), or nothing."""
    return [] if core is None else ["taskset", "-c", str(core)]


def timed(command, cwd, cap=None):
    """Wall seconds, CPU seconds and peak RSS (KB) of a command, as /usr/bin/time reports;
    None when it ran past `cap` seconds (then it is stopped, with every process it started)."""
    process = subprocess.Popen(["/usr/bin/time", "-f", "%e %U %S %M", *command], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, err = process.communicate(timeout=cap)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return None
    if process.returncode != 0:
        raise SystemExit(f"{command[0]} failed: {err[-800:]}")
    wall, user, system, peak = err.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(system), int(peak)


def mapproxy_read(path):
    from mapproxy.cache.mbtiles import MBTilesCache
    from mapproxy.cache.tile import Tile
    coords = [(x, y, z) for z, x, y in sqlite3.connect(path).execute("SELECT zoom_level, tile_column, tile_row FROM tiles")]
    random.shuffle(coords)
    cache = MBTilesCache(path)
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < SECONDS:
        for c in coords:
            tile = Tile(c)
            assert cache.load_tile(tile)
            tile.image_result_buffer().read()
            count += 1
    return count / (time.perf_counter() - start)


def pmtiles_read(path):
    from pmtiles.reader import MmapSource, Reader, all_tiles
    with open(path, "rb") as f:
        reader = Reader(MmapSource(f))
        coords = [zxy for zxy, _ in all_tiles(reader.get_bytes)]
        random.shuffle(coords)
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < SECONDS:
            for z, x, y in coords:
                assert reader.get(z, x, y)
                count += 1
        return count / (time.perf_counter() - start)


def mapproxy_config(mbtiles, upstream):
    """A MapProxy layer `bench` with its TMS service, cached in MBTiles; filled from an XYZ
    `upstream` URL, or from the cache alone when None."""
    source = f"""sources:
  bench_source:
    type: tile
    url: {upstream}
    grid: webmercator_nw
""" if upstream else ""
    return f"""services:
  tms:
layers:
  - name: bench
    title: bench
    sources: [bench_cache]
caches:
  bench_cache:
    grids: [webmercator]
    sources: [{"bench_source" if upstream else ""}]
    format: image/png
    cache:
      type: mbtiles
      filename: {mbtiles}
{source}grids:
  webmercator:
    base: GLOBAL_WEBMERCATOR
  webmercator_nw:
    base: GLOBAL_WEBMERCATOR
    origin: nw
"""


def stores_and_seeding(directory):
    os.chmod(directory, 0o755)  # nginx's worker runs unprivileged
    bbox, zooms = "-74.05,40.68,-73.90,40.85", (10, 16)
    upstream = f"{directory}/upstream"
    tiles = json.loads(subprocess.run([f"{RELEASE}/tilekit-bench", "make-tiles", upstream, "--bbox", bbox, "--zoom", f"{zooms[0]}-{zooms[1]}"],
                                      check=True, capture_output=True, text=True).stdout)["tiles"]
    # Every path answers with a tile: MapProxy's seeding also asks for tiles past the box's
    # edges, and a 404 sends it into retries with long waits.
    nginx, port = start_nginx(directory, upstream, missing="/10/301/384.png")
    try:
        concurrency = 4
        w, s_, e, n = bbox.split(",")
        with open(f"{directory}/mapproxy.yaml", "w") as f:
            f.write(mapproxy_config(f"{directory}/mapproxy.mbtiles", f"http://127.0.0.1:{port}/%(z)s/%(x)s/%(y)s.png"))
        with open(f"{directory}/seed.yaml", "w") as f:
            f.write(f"""seeds:
  bench:
    caches: [bench_cache]
    levels: {{from: {zooms[0]}, to: {zooms[1]}}}
    coverages: [box]
coverages:
  box:
    bbox: [{w}, {s_}, {e}, {n}]
    srs: 'EPSG:4326'
""")
        ours = timed([f"{RELEASE}/tilekit", "seed", "--source", f"http://127.0.0.1:{port}/{{z}}/{{x}}/{{y}}.png", "--bbox", bbox,
                      "--zoom", f"{zooms[0]}-{zooms[1]}", "--out", f"{directory}/tilekit.mbtiles", "--concurrency", str(concurrency),
                      "--rate", "100000", "--max-tiles", "100000", "--quiet"], directory)
        theirs = timed(["mapproxy-seed", "-f", "mapproxy.yaml", "-s", "seed.yaml", "-c", str(concurrency), "--seed", "bench", "-q"], directory)
    finally:
        nginx.terminate()
        nginx.wait()
    counted = [sqlite3.connect(f"{directory}/{name}.mbtiles").execute("SELECT count(*) FROM tiles").fetchone()[0] for name in ("tilekit", "mapproxy")]
    print(f"\nSeeding z{zooms[0]}-{zooms[1]} over {bbox} from nginx on 127.0.0.1 into MBTiles, concurrency {concurrency}")
    print(f"(tiles stored: TileKit {counted[0]}, MapProxy {counted[1]})")
    print(f"{'':24} {'wall s':>8} {'tiles/s':>9} {'CPU s':>7} {'peak MB':>8}")
    for name, (wall, cpu, peak), count in (("tilekit seed", ours, counted[0]), ("mapproxy-seed", theirs, counted[1])):
        print(f"{name:24} {wall:8.2f} {count / wall:9.0f} {cpu:7.2f} {peak / 1024:8.1f}")
    print(f"{'ratio, tiles/s':24} {(counted[0] / ours[0]) / (counted[1] / theirs[0]):8.2f}x TileKit")
    record("seeding", "setup", {"bbox": bbox, "zooms": list(zooms), "concurrency": concurrency})
    record("seeding", "runs", {name: {"wall_s": wall, "cpu_s": cpu, "peak_mb": round(peak / 1024, 1), "tiles": count, "tiles_per_s": round(count / wall, 1)}
                               for name, (wall, cpu, peak), count in (("tilekit seed", ours, counted[0]), ("mapproxy-seed", theirs, counted[1]))})
    ratio("seeding tiles/s, TileKit / mapproxy-seed", (counted[0] / ours[0]) / (counted[1] / theirs[0]), section="seeding")

    subprocess.run([f"{RELEASE}/tilekit", "convert", f"{directory}/tilekit.mbtiles", f"{directory}/tilekit.pmtiles", "--quiet"], check=True)
    def ours_read(path):
        return json.loads(subprocess.run([f"{RELEASE}/tilekit-bench", "read", path, "--seconds", str(SECONDS)],
                                         check=True, capture_output=True, text=True).stdout)["tiles_per_second"]
    rows = [("MBTiles (MapProxy's file)", ours_read(f"{directory}/mapproxy.mbtiles"), mapproxy_read(f"{directory}/mapproxy.mbtiles"), "MapProxy MBTilesCache"),
            ("PMTiles", ours_read(f"{directory}/tilekit.pmtiles"), pmtiles_read(f"{directory}/tilekit.pmtiles"),
             "pmtiles package (inflates directories on every get)")]
    print(f"\nReading every tile in random order, one core, {SECONDS:.0f} s each")
    print(f"{'store':26} {'TileKit t/s':>12} {'reference t/s':>14} {'ratio':>6}  reference")
    for name, mine, reference, label in rows:
        print(f"{name:26} {mine:12.0f} {reference:14.0f} {mine / reference:6.2f}  {label}")
        record("store_reads", name, {"tilekit_tiles_per_s": round(mine, 1), "reference_tiles_per_s": round(reference, 1), "reference": label})
        ratio(f"reading {name}, TileKit / {label}", mine / reference, section="store_reads")


def snapshots(directory):
    """600x400 snapshots with 100 markers and a 200-point line over tiles from nginx on
    127.0.0.1: TileKit (in process) beside staticmap (in process), PNG-encoded each time."""
    import math
    from staticmap import CircleMarker, Line, StaticMap
    os.chmod(directory, 0o755)
    upstream = f"{directory}/tiles"
    subprocess.run([f"{RELEASE}/tilekit-bench", "make-tiles", upstream, "--bbox", "-74.02,40.74,-73.92,40.81", "--zoom", "14-14"],
                   check=True, capture_output=True)
    nginx, port = start_nginx(directory, upstream)
    settle()  # what the sections before left to write back, and their processes' last CPU
    # 50 images each: at 20, TileKit's whole run took about 0.15 s, and one hiccup of the
    # machine moved its figure by a third.
    count = 50
    try:
        template = f"http://127.0.0.1:{port}/{{z}}/{{x}}/{{y}}.png"
        def tilekit(*extra):
            return json.loads(subprocess.run([f"{RELEASE}/tilekit-bench", "snapshot", template, "--count", str(count), *extra],
                                             check=True, capture_output=True, text=True).stdout)
        ours = tilekit()
        # py-staticmaps reads its tiles from its disk cache: TileKit's own disk cache beside it.
        ours_cached = tilekit("--cache", f"{directory}/tilekit-cache/cache.mbtiles")
        line = [(-73.99 + 0.05 * i / 199, 40.76 + 0.03 * i / 199 + 0.004 * math.sin(i / 199 * 20)) for i in range(200)]
        markers = [(-73.995 + (i // 10) * 0.006, 40.755 + (i % 10) * 0.004) for i in range(100)]
        start = time.perf_counter()
        size = 0
        for _ in range(count):
            m = StaticMap(600, 400, url_template=template)
            m.add_line(Line(line, "blue", 3))
            for lon, lat in markers:
                m.add_marker(CircleMarker((lon, lat), "red", 14))
            buffer = io.BytesIO()
            m.render(zoom=14, center=[-73.9675, 40.775]).save(buffer, "PNG")
            size += buffer.tell()
        theirs = (time.perf_counter() - start) * 1000 / count, size // count
        others = py_staticmaps(template, line, markers, count, f"{directory}/py-staticmaps-cache")
    finally:
        nginx.terminate()
        nginx.wait()
    print(f"\nSnapshots 600x400, 100 markers, 200-point line, z14 tiles from nginx on 127.0.0.1, PNG, {count} each")
    print(f"{'':34} {'ms/image':>9} {'bytes':>8} {'TileKit faster':>15}")
    pairs = (("staticmap (tiles from nginx)", theirs, ours, "TileKit (tiles from nginx)"),
             ("py-staticmaps (its disk cache)", others, ours_cached, "TileKit (its disk cache)"))
    goals = {"staticmap (tiles from nginx)": 5.0, "py-staticmaps (its disk cache)": 2.0}
    for name, (ms, mean), mine, mine_name in pairs:
        print(f"{mine_name:34} {mine['ms_per_image']:9.1f} {mine['mean_bytes']:8d}")
        print(f"{name:34} {ms:9.1f} {mean:8d} {ms / mine['ms_per_image']:14.2f}x")
        record("snapshots", mine_name, {"ms_per_image": mine["ms_per_image"], "mean_bytes": mine["mean_bytes"]})
        record("snapshots", name, {"ms_per_image": round(ms, 2), "mean_bytes": mean})
        ratio(f"snapshot speed, {mine_name} / {name}", ms / mine["ms_per_image"], goal=goals[name], section="snapshots")


def py_staticmaps(template, line, markers, count, cache):
    """The same picture with py-staticmaps (PyPI), through its Pillow renderer and its own
    tile cache on disk (filled by a first, untimed render)."""
    import staticmaps
    def render():
        context = staticmaps.Context()
        context.set_tile_provider(staticmaps.TileProvider("bench", url_pattern=template.replace("{z}", "$z").replace("{x}", "$x").replace("{y}", "$y")))
        context.set_cache_dir(cache)
        context.set_center(staticmaps.create_latlng(40.775, -73.9675))
        context.set_zoom(14)
        context.add_object(staticmaps.Line([staticmaps.create_latlng(lat, lon) for lon, lat in line], color=staticmaps.BLUE, width=3))
        for lon, lat in markers:
            context.add_object(staticmaps.Marker(staticmaps.create_latlng(lat, lon), color=staticmaps.RED, size=7))
        buffer = io.BytesIO()
        context.render_pillow(600, 400).save(buffer, "PNG")
        return buffer.tell()
    render()
    start, size = time.perf_counter(), 0
    for _ in range(count):
        size += render()
    return (time.perf_counter() - start) * 1000 / count, size // count


def feature_layer_data(path, west, south, east, north, count=2000, seed=7):
    """`count` polygons (4-9 sides, 25-100 m) and as many 10-point random walks in the box,
    seeded: the same file every run."""
    import math
    rng = random.Random(seed)
    features = []
    for _ in range(count):
        lon, lat = rng.uniform(west, east), rng.uniform(south, north)
        r, sides = rng.uniform(0.0003, 0.0012), rng.randint(4, 9)
        ring = [[lon + r * math.cos(2 * math.pi * k / sides), lat + 0.76 * r * math.sin(2 * math.pi * k / sides)] for k in range(sides)]
        features.append({"type": "Feature", "geometry": {"type": "Polygon", "coordinates": [ring + [ring[0]]]},
                         "properties": {"fill": "#7fa65a", "fill-opacity": 0.6, "stroke": "#4a3520", "stroke-width": 1.5}})
        walk = [[rng.uniform(west, east), rng.uniform(south, north)]]
        for _ in range(9):
            walk.append([walk[-1][0] + rng.uniform(-0.0008, 0.0008), walk[-1][1] + rng.uniform(-0.0006, 0.0006)])
        features.append({"type": "Feature", "geometry": {"type": "LineString", "coordinates": walk},
                         "properties": {"stroke": "#1f5fbf", "stroke-width": 2}})
    with open(path, "w") as f:
        json.dump({"type": "FeatureCollection", "features": features}, f)


def feature_tiles(directory):
    """A feature layer's tiles: TileKit's FeatureTileSource beside Mapnik (Debian
    python3-mapnik, AGG) drawing the same GeoJSON with the same colours and widths."""
    bbox, zoom = "-73.985,40.765,-73.955,40.785", 15
    path = f"{directory}/features.geojson"
    feature_layer_data(path, *map(float, bbox.split(",")))
    def tilekit(*extra):
        return json.loads(subprocess.run([f"{RELEASE}/tilekit-bench", "features", path, "--bbox", bbox, "--zoom", str(zoom), "--seconds", str(SECONDS), *extra],
                                         check=True, capture_output=True, text=True).stdout)
    def mapnik():
        return json.loads(subprocess.run(["/usr/bin/python3", "scripts/bench-mapnik.py", path, bbox, str(zoom), str(SECONDS)],
                                         check=True, capture_output=True, text=True).stdout)
    def best(runs):
        return {**runs[0], **{key: max(r[key] for r in runs) for key in ("drawn_per_second", "png_per_second")}}
    # TileKit and Mapnik in turn, three rounds, each tool's best rate: on this machine a tool's
    # rate moved by a third between runs minutes apart (TileKit 143-183 tiles/s drawn, Mapnik
    # 79-124), more than the two differ, and a single pair measured seconds apart drew lots.
    settle()  # as before serving: the sections before leave writes and CPU behind
    rounds = [(tilekit(), mapnik()) for _ in range(ROUNDS)]
    ours, theirs = best([r[0] for r in rounds]), best([r[1] for r in rounds])
    fast = tilekit("--fast")
    print(f"\nFeature-layer tiles: {ours['features']} polygons and lines over {ours['tiles']} z{zoom} tiles"
          f" (~{ours['features'] // ours['tiles']} per tile), one core; TileKit and Mapnik in turn, best of {ROUNDS} rounds")
    print(f"{'':24} {'drawn t/s':>10} {'+PNG t/s':>9} {'PNG bytes':>10}")
    for name, r in (("TileKit", ours), ("TileKit, antialias fast", fast), ("Mapnik", theirs)):
        print(f"{name:24} {r['drawn_per_second']:10.0f} {r['png_per_second']:9.0f} {r['mean_bytes']:10d}")
    for name, r in (("ratio", ours), ("ratio, antialias fast", fast)):
        print(f"{name:24} {r['drawn_per_second'] / theirs['drawn_per_second']:9.2f}x {r['png_per_second'] / theirs['png_per_second']:8.2f}x TileKit/Mapnik")
    record("feature_tiles", "setup", {"bbox": bbox, "zoom": zoom, "features": ours["features"], "tiles": ours["tiles"],
                                      "rounds": ROUNDS, "per_round": [{"tilekit": {k: a[k] for k in ("drawn_per_second", "png_per_second")},
                                                                       "mapnik": {k: b[k] for k in ("drawn_per_second", "png_per_second")}}
                                                                      for a, b in rounds]})
    for name, r in (("TileKit", ours), ("TileKit, antialias fast", fast), ("Mapnik", theirs)):
        record("feature_tiles", name, {key: r[key] for key in ("drawn_per_second", "png_per_second", "mean_bytes")})
    ratio("feature tiles drawn/s, TileKit / Mapnik (one core)", ours["drawn_per_second"] / theirs["drawn_per_second"], goal=1.5, section="feature_tiles")
    ratio("feature tiles +PNG/s, TileKit / Mapnik (one core)", ours["png_per_second"] / theirs["png_per_second"], goal=1.5, section="feature_tiles")
    ratio("feature tiles drawn/s, TileKit antialias fast / Mapnik", fast["drawn_per_second"] / theirs["drawn_per_second"], section="feature_tiles")
    ratio("feature tiles +PNG/s, TileKit antialias fast / Mapnik", fast["png_per_second"] / theirs["png_per_second"], section="feature_tiles")
    record("feature_tiles", "label_placement", ours.get("label_placement", {}))
    print("Label placement over the whole layer: " + ", ".join(
        f"z{p['zoom']} {p['ms']:.1f} ms ({p['labelled']}/{p['named']} named)" for p in ours.get("label_placement", [])))


def memory_cache_counts(port):
    """Hits and misses of `tilekit serve`'s memory cache, from its /metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    counts = {}
    for line in text.splitlines():
        for key, name in (("hits", "tilekit_tile_cache_hits_total "), ("misses", "tilekit_tile_cache_misses_total ")):
            if line.startswith(name):
                counts[key] = int(float(line[len(name):]))
    return counts


def duration_ms(text):
    """wrk's latency ("812.00us", "1.23ms", "2.01s", "1.50m") in milliseconds."""
    for unit, scale in (("us", 0.001), ("ms", 1.0), ("s", 1000.0), ("m", 60000.0)):
        if text.endswith(unit):
            return round(float(text[:-len(unit)]) * scale, 3)
    raise ValueError(f"wrk latency {text!r}: no known unit")


def process_cpu_seconds(pid):
    """CPU seconds (user and system) used so far by a process's threads and its children's
    (nginx's workers are its master's children); 0 for a process that is gone."""
    total, ticks = 0, os.sysconf("SC_CLK_TCK")
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = [int(c) for c in f.read().split()]
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return total + sum(process_cpu_seconds(child) for child in children)


def machine_busy_and_total():
    """Jiffies the CPUs were busy and in all since boot (idle and iowait are not busy)."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    return sum(values) - values[3] - values[4], sum(values)


# Where the cores went during `wrk` runs given a `watch` (a key and the server's pid): a
# list a run under each key. The serving section sets them beside its ratios.
CPU_SHARES = {}


def wrk(port, paths, directory, name, seconds=10, connections=32, warm=True, watch=None, pause_ms=None, threads=2, core=None):
    """wrk on the paths in a shuffled cycle; requests/s, latency and errors. With `watch`,
    also where the two cores went during the run (see CPU_SHARES); with `pause_ms`, each
    connection waits that long after a reply before its next request (wrk's `delay`); with
    `core`, wrk runs on that CPU alone."""
    script = f"{directory}/{name}{'-paused' if pause_ms else ''}.lua"
    with open(script, "w") as f:
        f.write("local paths = {" + ",".join(f'"{p}"' for p in paths) + "}\nlocal i = 0\n"
                "request = function()\n  i = i % #paths + 1\n  return wrk.format(\"GET\", paths[i])\nend\n")
        if pause_ms:
            f.write(f"delay = function()\n  return {pause_ms}\nend\n")
    if warm:
        subprocess.run([*pinned(core), "wrk", f"-t{threads}", "-c8", "-d2s", "-s", script, f"http://127.0.0.1:{port}"], capture_output=True)
    server_before, wrk_before, machine_before = process_cpu_seconds(watch[1]) if watch else 0, resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy_and_total()
    out = subprocess.run([*pinned(core), "wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", script, f"http://127.0.0.1:{port}"],
                         check=True, capture_output=True, text=True).stdout
    server_after, wrk_after, machine_after = process_cpu_seconds(watch[1]) if watch else 0, resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy_and_total()
    def grab(prefix):
        for line in out.splitlines():
            if line.strip().startswith(prefix):
                return line.split()
        return None
    rate = float(grab("Requests/sec:")[1])
    p50, p99 = grab("50%")[1], grab("99%")[1]
    errors = 0
    if (line := grab("Non-2xx or 3xx responses:")):
        errors += int(line[-1])
    if (line := grab("Socket errors:")):
        errors += sum(int(part.strip(",")) for part in line[3::2])
    if watch:
        requests = max(1.0, rate * seconds)
        wrk_seconds = (wrk_after.ru_utime + wrk_after.ru_stime) - (wrk_before.ru_utime + wrk_before.ru_stime)
        busy, total = machine_after[0] - machine_before[0], machine_after[1] - machine_before[1]
        CPU_SHARES.setdefault(watch[0], []).append({
            "idle_share": round(1 - busy / max(1, total), 3),
            "server_cpu_us_per_request": round((server_after - server_before) / requests * 1e6, 1),
            "wrk_cpu_us_per_request": round(wrk_seconds / requests * 1e6, 1)})
    return rate, p50, p99, errors


def best_run(*runs):
    """Of a server's runs (requests/s, p50, p99, errors as `wrk` returns them), the most
    requests a second and the lowest p50 and p99, and every error. A run's p99 on this
    machine moves by 2x from one run to the next, for both servers alike."""
    return (max(r[0] for r in runs), min((r[1] for r in runs), key=duration_ms), min((r[2] for r in runs), key=duration_ms),
            sum(r[3] for r in runs))


def p99_ratio(ours, theirs):
    """TileKit's p99 over the reference's, of two `wrk` results (a p99 of 0 counts as 1 µs)."""
    return duration_ms(ours[2]) / max(duration_ms(theirs[2]), 0.001)


def map_tile(rng, size=256):
    """Flat colours in 24 bands over fractal noise, like a rendered terrain map:
    10-20 KB as PNG."""
    from PIL import Image as PILImage
    import numpy as np
    field = np.zeros((size, size), np.float32)
    for cells, weight in ((4, 1.0), (8, 0.5), (16, 0.25), (32, 0.12)):
        grid = PILImage.fromarray(rng.random((cells, cells), dtype=np.float32), mode="F")
        field += weight * np.asarray(grid.resize((size, size), PILImage.BICUBIC))
    field = (field - field.min()) / max(float(np.ptp(field)), 1e-6)
    return terrain_colours(np.floor(field * 24) / 24)


def photo_tile(rng, size=256):
    """The same noise unbanded, at finer scales too, with sensor-like grain (one luminance
    and three weaker colour channels): ~120 KB as PNG, like an aerial photo."""
    from PIL import Image as PILImage
    import numpy as np
    field = np.zeros((size, size), np.float32)
    for cells, weight in ((4, 1.0), (8, 0.5), (16, 0.25), (32, 0.12), (64, 0.06), (128, 0.03)):
        grid = PILImage.fromarray(rng.random((cells, cells), dtype=np.float32), mode="F")
        field += weight * np.asarray(grid.resize((size, size), PILImage.BICUBIC))
    field = (field - field.min()) / max(float(np.ptp(field)), 1e-6)
    grain = rng.normal(0, 4.5, (size, size, 1)).astype(np.float32) + rng.normal(0, 1.5, (size, size, 3)).astype(np.float32)
    return terrain_colours(field, grain)


def terrain_colours(field, grain=0):
    """Water, grass, woods, earth and rock along a field of 0-1, as an RGB PIL image."""
    from PIL import Image as PILImage
    import numpy as np
    stops = np.array([0.0, 0.35, 0.55, 0.75, 1.0], np.float32)
    colours = np.array([(52, 86, 140), (96, 128, 72), (122, 148, 84), (160, 140, 104), (196, 190, 178)], np.float32)
    rgb = np.stack([np.interp(field, stops, colours[:, c]) for c in range(3)], axis=-1) + grain
    return PILImage.fromarray(np.clip(rgb, 0, 255).astype(np.uint8))


def write_mix_tile(job):
    folder, kind, index, (z, x, y) = job
    import numpy as np
    rng = np.random.default_rng([index, 1 if kind == "large" else 0])
    os.makedirs(f"{folder}/{z}/{x}", exist_ok=True)
    (photo_tile if kind == "large" else map_tile)(rng).save(f"{folder}/{z}/{x}/{y}.png")
    return os.path.getsize(f"{folder}/{z}/{x}/{y}.png")


def write_tile_mix(folder, kind, tiles):
    """One PNG per tile (distinct, seeded by its index), on both cores; their sizes."""
    from multiprocessing import Pool
    with Pool(2) as pool:
        return pool.map(write_mix_tile, [(folder, kind, i, (t.z, t.x, t.y)) for i, t in enumerate(tiles)], chunksize=32)


CONTROL, CONTROL_AT_NGINX_CPU = "control (epoll, from memory)", "control, at nginx's CPU a request"
SERVERS = ["tilekit serve", "nginx (static files)", "tilekit serve --threads 1", "nginx, 2 workers", "tilekit serve --threads 1, core 1",
           "nginx, core 1", CONTROL, CONTROL_AT_NGINX_CPU, "MapProxy (gunicorn)"]
# The goal pair (TileKit's default of one connection thread per core, nginx's one worker)
# and, beside it, each side's match in threads: the two like-for-like pairs show what
# the goal pair's ratios owe to the thread counts (wrk's two threads share the two cores).
SERVING_PAIRS = {"goal": ("tilekit serve", "nginx (static files)"), "1 thread each": ("tilekit serve --threads 1", "nginx (static files)"),
                 "2 threads each": ("tilekit serve", "nginx, 2 workers"), "equal load": ("tilekit serve", "nginx (static files)"),
                 "dedicated cores": ("tilekit serve --threads 1, core 1", "nginx, core 1"),
                 "control": (CONTROL, "nginx (static files)"), "control at nginx's CPU": (CONTROL_AT_NGINX_CPU, "nginx (static files)")}
# The control pairs (no goal), at the first connection count: scripts/control-server.c, the
# least a tile server can do (one thread, every tile in memory, a reply of two headers),
# beside nginx's one worker as in the goal pair; then the same control spinning, before each
# reply, the CPU time a request that nginx's worker took more than it in that pair.
# They tell what of the goal pair's p99 at 32 connections belongs to any server that answers
# faster than nginx's worker on the cores wrk shares, and what to TileKit.
SERVING_CONTROLS = ("control", "control at nginx's CPU")
# The goal pair again at the first connection count with each connection pausing after a
# reply (ms, by mix: a large tile takes longer): both servers then answer about the same
# requests a second with the cores not full, so the p99 is the servers' own and not wrk's
# wait for a core (no goal).
SERVING_PAUSES = {"equal load": {"small": 1, "large": 3}}
# Rounds of TileKit, nginx, nginx, TileKit (every second one nginx, TileKit, TileKit, nginx) for
# the goal pair (each server keeps its best run),
# one for the other pairs. A p99 at 32 connections moves 3-4x from one wrk start to the next
# here, for both servers: in 112 alternating starts of 3 s each (wrk -t2 -c32, small tiles,
# 7a1a049 against nginx's one worker) TileKit's ranged 1.07-4.42 ms (median 1.63) and nginx's
# 1.19-4.37 (median 2.23), 18% and 23% of them past 3 ms, where the scheduler's 4 ms tick
# leaves a thread waiting. Drawn from those starts, the better of two runs each put TileKit's
# p99 above nginx's 15% of the time, the best of four 6%: two rounds, so that one unlucky
# pairing decides less. The other pairs, which have no goal, keep one round.
SERVING_GOAL_ROUNDS = 2
# One thread of each server on core 1 and wrk with one thread on core 0, at the first
# connection count (no goal): no thread waits for a core another holds, so the p99 is the
# server's own. With wrk's two threads sharing the cores with the servers', a wrk thread
# waiting for a core counts the wait as latency, and waits more the more requests a second
# the server answers.
SERVING_CORES = {"dedicated cores": {"server": 1, "wrk": 0}}
SERVING_MIXES = {"small": "10-20 KB tiles (flat map colours)", "large": "~120 KB tiles (photo-like grain)"}


def settle(most=15.0):
    """Writes back what earlier work left dirty, then waits (at most `most` s) until the CPUs
    are 90% idle over half a second: the kernel writes dirty pages back 30 s after they were
    written, and the serving mixes (up to 400 MB of files and MBTiles, made seconds before)
    were written back during the first server's runs, never the second's. Before the feature
    tiles and snapshots too, which follow sections that wrote hundreds of MB."""
    os.sync()
    deadline = time.monotonic() + most
    while time.monotonic() < deadline:
        busy0, total0 = machine_busy_and_total()
        time.sleep(0.5)
        busy1, total1 = machine_busy_and_total()
        if (busy1 - busy0) <= 0.1 * max(1, total1 - total0):
            return


def cpu_share(kind, pair_label, count, side):
    """The mean of a server's runs in CPU_SHARES: the share of both cores left idle, and the
    CPU time a request took in the server and in wrk."""
    runs = CPU_SHARES.get((kind, pair_label, count, side), [])
    return {key: round(sum(r[key] for r in runs) / max(1, len(runs)), 3 if key == "idle_share" else 1)
            for key in ("idle_share", "server_cpu_us_per_request", "wrk_cpu_us_per_request")}


def serving(directory, connections=(32, 256), seconds=10, mapproxy=True, section="serving", like_for_like=True, goal_rounds=SERVING_GOAL_ROUNDS):
    """Cached tiles over HTTP with wrk (2 threads) on a shuffled mix of the same 1,657 tiles
    at each connection count: `tilekit serve` from an MBTiles file beside nginx (one worker)
    from the folder, on a small-tile and a large-tile mix; and MapProxy (gunicorn, 2
    workers) from the same MBTiles file through its TMS service, on the small mix at the
    first connection count. With `like_for_like`, also `tilekit serve --threads 1` beside
    the same nginx, nginx with 2 workers beside TileKit's default, and at the first
    connection count the goal pair at equal load (SERVING_PAUSES) and one thread of each on
    a core of its own, wrk on the other (SERVING_CORES), and the control pairs
    (SERVING_CONTROLS)."""
    import mercantile
    os.chmod(directory, 0o755)
    # The dedicated-cores pair needs cores 0 and 1: one for the servers, one for wrk.
    dedicated = like_for_like and {0, 1} <= os.sched_getaffinity(0)
    control_busy_us = {}  # by mix: what the slowed control spins a request
    controls = like_for_like and C_COMPILER is not None
    if like_for_like and not controls:
        print("(no C compiler (cc or clang): the control pairs are left out)")
    half = max(1, round(seconds / 2))  # wrk takes whole seconds
    bbox, zooms = "-74.05,40.68,-73.90,40.85", (10, 16)
    tiles = list(mercantile.tiles(*map(float, bbox.split(",")), list(range(zooms[0], zooms[1] + 1))))
    random.Random(1).shuffle(tiles)
    record(section, "setup", {"bbox": bbox, "zooms": list(zooms), "tiles": len(tiles), "seconds_per_run": half,
                              "runs_per_server": {"goal pair": 2 * goal_rounds, "other pairs": 2},
                              "kept": "each server's most requests/s and lowest p50 and p99 of its runs", "wrk_threads": 2,
                              "connections": list(connections), "nginx_workers": 1, "tilekit_threads": "default (cores)",
                              "like_for_like": "tilekit serve --threads 1 beside nginx's 1 worker; nginx with 2 workers beside TileKit's default;"
                              f" the goal pair with each connection pausing after a reply ({SERVING_PAUSES['equal load']} ms by mix)"
                              f" (equal load), at {connections[0]} connections" if like_for_like else None,
                              "dedicated_cores": f"tilekit serve --threads 1 and nginx's 1 worker each on core {SERVING_CORES['dedicated cores']['server']},"
                              f" wrk -t1 on core {SERVING_CORES['dedicated cores']['wrk']}, at {connections[0]} connections" if dedicated else None,
                              "controls": "scripts/control-server.c (one thread, every tile in memory) beside nginx's 1 worker, then the same"
                              f" spinning what nginx's worker took more CPU a request than it, at {connections[0]} connections" if controls else None,
                              "tilekit_cache_mb": 128,
                              "order": "per connection count: rounds of TileKit, nginx, nginx, TileKit, every second one nginx, TileKit, TileKit, nginx"})
    for kind, label in SERVING_MIXES.items():
        upstream = f"{directory}/{kind}"
        started = time.perf_counter()
        sizes = sorted(write_tile_mix(upstream, kind, tiles))
        subprocess.run([f"{RELEASE}/tilekit", "convert", upstream, f"{directory}/{kind}.mbtiles", "--quiet"], check=True, capture_output=True)
        mix = {"label": label, "tiles": len(sizes), "mean_kb": round(sum(sizes) / len(sizes) / 1024, 1), "min_kb": round(sizes[0] / 1024, 1),
               "median_kb": round(sizes[len(sizes) // 2] / 1024, 1), "max_kb": round(sizes[-1] / 1024, 1), "total_mb": round(sum(sizes) / 1e6, 1),
               "made_in_s": round(time.perf_counter() - started, 1)}
        # Both servers run at once (an idle one costs nothing) and each connection count is
        # measured on one, then at once on the other: on a shared machine the load drifts,
        # and a pair measured seconds apart shares more of it than two blocks of runs.
        settle()
        tilekit_paths = [f"/maps/{kind}/{t.z}/{t.x}/{t.y}.png" for t in tiles]
        nginx_paths = [f"/{t.z}/{t.x}/{t.y}.png" for t in tiles]
        def pair(names, ports, count, warm, label, rounds=1):
            """Two runs each a round, in the order TileKit, nginx, nginx, TileKit, and the other way
            round in every second round (so that over two rounds neither server has both the
            first and the last run, which a drifting load would favour): each server runs early
            and late, and keeps its best figures (see best_run). Returns both, and every run in
            the order run (in `every_run`, for the JSON)."""
            pause = SERVING_PAUSES.get(label, {}).get(kind)
            client = {"threads": 1, "core": SERVING_CORES[label]["wrk"]} if label in SERVING_CORES else {}
            ours = lambda warm: wrk(ports[0], tilekit_paths, directory, names[0], seconds=half, connections=count, warm=warm,
                                    watch=((kind, label, count, 0), pids[ports[0]]), pause_ms=pause, **client)
            theirs = lambda warm: wrk(ports[1], nginx_paths, directory, names[1], seconds=half, connections=count, warm=warm,
                                      watch=((kind, label, count, 1), pids[ports[1]]), pause_ms=pause, **client)
            order = []  # (side, result): 0 TileKit's, 1 nginx's
            for round_index in range(rounds):
                warm_now = warm and round_index == 0
                if round_index % 2 == 0:
                    order += [(0, ours(warm_now)), (1, theirs(warm_now)), (1, theirs(False)), (0, ours(False))]
                else:
                    order += [(1, theirs(False)), (0, ours(False)), (0, ours(False)), (1, theirs(False))]
            every_run[(label, count)] = order
            return best_run(*[r for side, r in order if side == 0]), best_run(*[r for side, r in order if side == 1])
        processes, ports, loads, pids, every_run = [], {}, {}, {}, {}
        # Like-for-like pairs are measured as pairs of their own (each side's runs interleaved
        # with the other's), not set beside another pair's runs: the load drifts between them.
        # Each server's row shows the goal pair's figures, or for the two extra servers their
        # pair's.
        pairs = {}
        try:
            def track(process, port):
                """A started server: stopped in the `finally` below, its CPU watched by port."""
                processes.append(process)
                pids[port] = process.pid
                return port
            def tilekit(*extra, core=None):
                port = free_port()
                return track(subprocess.Popen([*pinned(core), f"{RELEASE}/tilekit", "serve", f"{directory}/{kind}.mbtiles", "--host", "127.0.0.1",
                                               "--port", str(port), "--quiet", *extra], stdout=subprocess.DEVNULL), port)
            def nginx(workers=1, core=None):
                return track(*start_nginx(directory, upstream, workers=workers, core=core))
            def control(busy_us=0):
                return track(*start_control(directory, upstream, f"/maps/{kind}", busy_us))
            ports = {"tilekit serve": tilekit(), "nginx (static files)": nginx()}
            if controls:
                ports[CONTROL] = control()
            if like_for_like:
                ports["tilekit serve --threads 1"] = tilekit("--threads", "1")
                ports["nginx, 2 workers"] = nginx(workers=2)
                if dedicated:
                    core = SERVING_CORES["dedicated cores"]["server"]
                    ports["tilekit serve --threads 1, core 1"] = tilekit("--threads", "1", core=core)
                    ports["nginx, core 1"] = nginx(core=core)
            time.sleep(1)
            for index, count in enumerate(connections):
                loads[count] = round(os.getloadavg()[0], 2)
                for pair_label, names in SERVING_PAIRS.items():
                    if (pair_label in SERVING_PAUSES or pair_label in SERVING_CORES or pair_label in SERVING_CONTROLS) and index > 0:
                        continue  # one connection count is enough for these comparisons
                    if pair_label in SERVING_CORES and not dedicated:
                        continue
                    if pair_label in SERVING_CONTROLS and not controls:
                        continue
                    if pair_label == "control at nginx's CPU":
                        # What nginx's worker spent a request more than the control in their pair, just run.
                        extra = cpu_share(kind, "control", count, 1)["server_cpu_us_per_request"] - cpu_share(kind, "control", count, 0)["server_cpu_us_per_request"]
                        control_busy_us[kind] = round(max(0.0, extra), 1)
                        ports[CONTROL_AT_NGINX_CPU] = control(control_busy_us[kind])
                    if pair_label == "goal" or like_for_like:
                        pairs[(pair_label, count)] = pair(names, (ports[names[0]], ports[names[1]]), count, index == 0, pair_label,
                                                          goal_rounds if pair_label == "goal" else 1)
            cache = memory_cache_counts(ports["tilekit serve"])
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait()
        results = {}
        for (pair_label, count), pair_figures in sorted(pairs.items(), key=lambda item: item[0][0] != "goal"):  # the goal pair's first
            for name, server_figures in zip(SERVING_PAIRS[pair_label], pair_figures):
                results.setdefault((name, count), server_figures)
        if mapproxy and kind == "small":
            results[("MapProxy (gunicorn)", connections[0])] = serve_mapproxy(directory, f"{directory}/{kind}.mbtiles", tiles, seconds, connections[0])
        rounds_text = (f"{goal_rounds} round{'s' if goal_rounds != 1 else ''} for TileKit's default and nginx's one worker"
                       + (", every second one the other way round" if goal_rounds > 1 else "") + (", 1 for the other pairs" if like_for_like else ""))
        print(f"\nServing {len(tiles)} cached {label}, mean {mix['mean_kb']} KB ({mix['min_kb']}-{mix['max_kb']}), {mix['total_mb']} MB in all;"
              f" wrk -t2 on a shuffled mix, 127.0.0.1, runs of {half} s in rounds of TileKit, nginx, nginx, TileKit ({rounds_text}),"
              f" each server's best (load {os.getloadavg()[0]:.1f})")
        print(f"{'':33} {'conns':>6} {'req/s':>9} {'p50':>9} {'p99':>9} {'errors':>7}")
        for (name, count), (rate, p50, p99, errors) in sorted(results.items(), key=lambda item: (SERVERS.index(item[0][0]), item[0][1])):
            print(f"{name:33} {count:6d} {rate:9.0f} {p50:>9} {p99:>9} {errors:7d}")
        hit_share = cache["hits"] / max(1, cache["hits"] + cache["misses"])
        if mix["total_mb"] > 128:
            print(f"(the mix's {mix['total_mb']} MB do not fit TileKit's default 128 MB tile cache (--cache-mb): it kept the tiles asked for"
                  f" most, and answered {hit_share:.0%} of the requests; the rest were read from the MBTiles file)")
        mix["tilekit_cache"] = {**cache, "hit_share": round(hit_share, 3)}
        if kind in control_busy_us:
            mix["control_busy_us_per_request"] = control_busy_us[kind]
        def figures(run):
            rate, p50, p99, errors = run
            return {"requests_per_s": rate, "p50_ms": duration_ms(p50), "p99_ms": duration_ms(p99), "errors": errors}
        runs = {}
        for (name, count), run in results.items():
            runs.setdefault(name, {})[str(count)] = {**figures(run), "load_average_1min_before": loads.get(count)}
        paired = {}
        for (pair_label, count), (ours, theirs) in pairs.items():
            paired.setdefault(pair_label, {})[str(count)] = {"control" if pair_label in SERVING_CONTROLS else "tilekit":
                                                             {**figures(ours), "cpu": cpu_share(kind, pair_label, count, 0)},
                                                             "nginx": {**figures(theirs), "cpu": cpu_share(kind, pair_label, count, 1)},
                                                             "servers": list(SERVING_PAIRS[pair_label]),
                                                             "every_run": [{"server": "nginx" if side else "control" if pair_label in SERVING_CONTROLS else "tilekit", **figures(run)}
                                                                           for side, run in every_run[(pair_label, count)]]}
        record(section, kind, {"mix": mix, "runs": runs, "pairs": paired})
        for count in connections:
            ours, theirs = results[("tilekit serve", count)], results[("nginx (static files)", count)]
            rate = ratio(f"serving {kind} tiles req/s at {count} connections, TileKit / nginx", ours[0] / theirs[0],
                         goal=1.0 if count in (32, 256) else None, section=section)
            p99 = ratio(f"serving {kind} tiles p99 at {count} connections, TileKit / nginx", p99_ratio(ours, theirs),
                        goal=1.0 if count in (32, 256) else None, better="lower", section=section)
            goal = " (goal: req/s >= 1.0x, p99 <= 1.0x)" if count in (32, 256) else ""
            print(f"{f'ratio, {count} conns':26} {rate:8.2f}x nginx req/s, p99 {p99:.2f}x nginx's{goal}")
            ours_cpu, theirs_cpu = cpu_share(kind, "goal", count, 0), cpu_share(kind, "goal", count, 1)
            print(f"{'  where the cores went':26} idle {ours_cpu['idle_share']:.0%} / {theirs_cpu['idle_share']:.0%};"
                  f" server CPU a request {ours_cpu['server_cpu_us_per_request']} / {theirs_cpu['server_cpu_us_per_request']} µs;"
                  f" wrk's {ours_cpu['wrk_cpu_us_per_request']} / {theirs_cpu['wrk_cpu_us_per_request']} µs (TileKit / nginx)")
            for pair_label in SERVING_PAIRS:
                if pair_label == "goal" or (pair_label, count) not in pairs:
                    continue
                ours, theirs = pairs[(pair_label, count)]
                side = "control" if pair_label in SERVING_CONTROLS else "TileKit"
                rate = ratio(f"serving {kind} tiles req/s at {count} connections, {pair_label}: {side} / nginx", ours[0] / theirs[0], section=section)
                p99 = ratio(f"serving {kind} tiles p99 at {count} connections, {pair_label}: {side} / nginx",
                            p99_ratio(ours, theirs), better="lower", section=section)
                shares = cpu_share(kind, pair_label, count, 0), cpu_share(kind, pair_label, count, 1)
                # The controls' CPU a request beside nginx's: whether the slowed one matched it.
                cpu = (f"; CPU a request {shares[0]['server_cpu_us_per_request']} / {shares[1]['server_cpu_us_per_request']} µs"
                       if pair_label in SERVING_CONTROLS else "")
                print(f"{f'  {pair_label}, {count}':26} {rate:8.2f}x nginx req/s, p99 {p99:.2f}x nginx's"
                      f" ({ours[0]:.0f} / {theirs[0]:.0f} req/s, p99 {ours[2]} / {theirs[2]}; idle {shares[0]['idle_share']:.0%} / {shares[1]['idle_share']:.0%}{cpu})")
        if ("MapProxy (gunicorn)", connections[0]) in results:
            value = results[("tilekit serve", connections[0])][0] / results[("MapProxy (gunicorn)", connections[0])][0]
            ratio(f"serving {kind} tiles req/s at {connections[0]} connections, TileKit / MapProxy", value, section=section)
            print(f"{'ratio, MapProxy':26} {value:8.1f}x MapProxy req/s at {connections[0]} connections")
        subprocess.run(["rm", "-rf", upstream, f"{directory}/{kind}.mbtiles"])


def serve_mapproxy(directory, mbtiles, tiles, seconds, connections):
    with open(f"{directory}/serve.yaml", "w") as f:
        f.write(mapproxy_config(mbtiles, None))
    with open(f"{directory}/mapproxy_app.py", "w") as f:
        f.write(f"from mapproxy.wsgiapp import make_wsgi_app\napplication = make_wsgi_app('{directory}/serve.yaml')\n")
    port = free_port()
    gunicorn = subprocess.Popen([sys.executable, "-m", "gunicorn", "-w", "2", "-b", f"127.0.0.1:{port}", "--chdir", directory,
                                 "--log-level", "warning", "mapproxy_app:application"])
    time.sleep(3)
    try:
        return wrk(port, [f"/tms/1.0.0/bench/EPSG3857/{t.z}/{t.x}/{(1 << t.z) - 1 - t.y}.png" for t in tiles],
                   directory, "mapproxy", seconds=seconds, connections=connections)
    finally:
        gunicorn.terminate()
        gunicorn.wait()


def test_image(path, size, seed=1689):
    """A deterministic map-like RGB PNG of size x size, written a band of rows at a time
    (a 16384 px image is 805 MB as pixels): parkland greens, water, a street grid and
    winding paths, so tiles compress like real ones."""
    import struct
    import zlib
    import numpy as np
    rng = np.random.default_rng(seed)
    lakes = rng.uniform(0, size, (12, 2)), rng.uniform(size * 0.02, size * 0.08, 12)
    with open(path, "wb") as f:
        def chunk(kind, data):
            f.write(struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
        f.write(b"\x89PNG\r\n\x1a\n")
        chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
        compressor = zlib.compressobj(1)
        x = np.arange(size, dtype=np.float32)
        band = 256
        for top in range(0, size, band):
            y = np.arange(top, min(size, top + band), dtype=np.float32)[:, None]
            s = size / 4096
            green = 120 + 40 * np.sin(x / (310 * s)) * np.cos(y / (270 * s)) + 20 * np.sin((x + y) / (53 * s))
            rgb = np.stack([green * 0.55, green, green * 0.45], axis=-1)
            for (cx, cy), r in zip(*lakes):
                water = (x - cx) ** 2 + (y - cy) ** 2 < r * r
                rgb[water] = (70, 120, 190)
            street = ((x % (512 * s)) < 6 * s) | ((y % (512 * s)) < 6 * s)
            rgb[np.broadcast_to(street, rgb.shape[:2])] = (235, 230, 215)
            path_mask = np.abs((y - size / 2) - size / 3 * np.sin(x / (900 * s))) < 4 * s
            rgb[np.broadcast_to(path_mask, rgb.shape[:2])] = (150, 110, 70)
            rows = np.clip(rgb, 0, 255).astype(np.uint8)
            raw = np.concatenate([np.zeros((rows.shape[0], 1), np.uint8), rows.reshape(rows.shape[0], -1)], axis=1)
            chunk(b"IDAT", compressor.compress(raw.tobytes()))
        chunk(b"IDAT", compressor.flush())
        chunk(b"IEND", b"")


def cached_test_image(size):
    """test_image's PNG of `size` px, kept in IMAGE_CACHE between runs; its path."""
    path = f"{IMAGE_CACHE}/park{size}-v{IMAGE_VERSION}.png"
    if not os.path.exists(path):
        os.makedirs(IMAGE_CACHE, exist_ok=True)
        started = time.perf_counter()
        test_image(path + ".tmp", size)
        os.replace(path + ".tmp", path)
        print(f"(wrote the {size} px test image in {time.perf_counter() - started:.0f} s: {path}, {os.path.getsize(path) / 1e6:.0f} MB; kept for the next run)")
    return path


PARK_BOUNDS = "-73.9819,40.7644,-73.9493,40.8006"


def tally(folder):
    count = total = 0
    for dirpath, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".png"):
                count += 1
                total += os.path.getsize(os.path.join(dirpath, name))
    return count, total


def pyramid_run(directory, name, command, out, cap=None, keep=False):
    """One pyramid build, timed (None when stopped at `cap` seconds); its output removed
    unless `keep`."""
    measured = timed(command, directory, cap)
    count, total = tally(f"{directory}/{out}")
    if not keep:
        subprocess.run(["rm", "-rf", f"{directory}/{out}"])
    if measured is None:
        return {"name": name, "stopped_after_s": cap, "tiles_written": count}
    wall, cpu, peak = measured
    return {"name": name, "wall_s": wall, "cpu_s": round(cpu, 2), "peak_mb": round(peak / 1024, 1), "tiles": count,
            "mb": round(total / 1e6, 2), "tiles_per_s": round(count / max(wall, 0.01), 1)}


def pyramid_commands(directory, image, size, zooms, outputs=None):
    """(name, command, output folder) of TileKit, gdal2tiles and vips dzsave on the image;
    the outputs go to `outputs` (default: `directory`)."""
    outputs = outputs or directory
    west, south, east, north = PARK_BOUNDS.split(",")
    vrt = f"{directory}/park{size}.vrt"
    if not os.path.exists(vrt):
        subprocess.run(["gdal_translate", "-q", "-of", "VRT", "-a_srs", "EPSG:4326", "-a_ullr", west, north, east, south, image, vrt], check=True)
    return {"tilekit pyramid": ([f"{RELEASE}/tilekit", "pyramid", image, "--bounds", PARK_BOUNDS, "--zoom", zooms, "--out", f"{outputs}/tk{size}", "--quiet"], f"tk{size}"),
            "gdal2tiles": (["gdal2tiles.py", "--xyz", "--processes=2", "-q", "-z", zooms, vrt, f"{outputs}/g2t{size}"], f"g2t{size}"),
            "vips dzsave": (["vips", "dzsave", image, f"{outputs}/vips{size}", "--layout", "google", "--suffix", ".png"], f"vips{size}")}


def memory_folder(room_mb=1024):
    """/dev/shm when it is a tmpfs with room for the pyramids' outputs, else None (the
    temporary folder on the disk). On this VM's ext4 (no journal, online discard), creating
    the same 4,800 small files cost from 0.14 to 2.6 s of kernel time from one minute to the
    next, depending on what was deleted before: that is the disk, not the tool. On a tmpfs
    every tool pays only for its own work."""
    try:
        stats = os.statvfs("/dev/shm")
    except OSError:
        return None
    return "/dev/shm" if stats.f_bavail * stats.f_frsize >= room_mb << 20 else None


def print_pyramid_rows(rows):
    width = max(18, *(len(row["name"]) for row in rows))
    print(f"{'':{width}} {'wall s':>7} {'CPU s':>7} {'CPU/wall':>8} {'peak MB':>8} {'tiles':>6} {'MB':>7} {'tiles/s':>8}")
    for row in rows:
        if "stopped_after_s" in row:
            print(f"{row['name']:{width}} stopped after {row['stopped_after_s']:.0f} s ({row['tiles_written']} tiles written)")
        else:
            print(f"{row['name']:{width}} {row['wall_s']:7.2f} {row['cpu_s']:7.2f} {row['cpu_s'] / max(row['wall_s'], 0.01):8.2f}"
                  f" {row['peak_mb']:8.0f} {row['tiles']:6d} {row['mb']:7.1f} {row['tiles_per_s']:8.0f}")
    print("(CPU/wall: the cores a run kept busy on average)")


def exact_area_rms(image, folders, zoom):
    """How far each pyramid's tiles at `zoom` are from the exact area average of the image
    (plate carree over PARK_BOUNDS): each tile pixel's footprint, a rectangle in the image's
    pixels since longitude maps to columns and latitude to rows, averaged exactly with an
    integral image (the integral of pixels constant over their squares is bilinear in each
    square, so interpolating the table at fractional corners is exact). Only pixels whose
    footprint lies inside the image and that are opaque in the tile count. Returns, per
    folder, the RMS over R, G and B (0-255) and the pixels compared."""
    import numpy as np
    from PIL import Image as PILImage
    west, south, east, north = map(float, PARK_BOUNDS.split(","))
    pixels = np.asarray(PILImage.open(image).convert("RGB"))
    height, width, _ = pixels.shape
    tables = []
    for channel in range(3):
        table = np.zeros((height + 1, width + 1), np.float64)
        table[1:, 1:] = pixels[:, :, channel].astype(np.float64).cumsum(0).cumsum(1)
        tables.append(table)
    def corner(y, x):
        """Where the tables are read for the integral up to each (y, x), and the weights."""
        y0 = np.clip(np.floor(y).astype(np.int64), 0, height - 1)
        x0 = np.clip(np.floor(x).astype(np.int64), 0, width - 1)
        fy, fx = y - y0, x - x0
        return y0, x0, ((1 - fy) * (1 - fx), (1 - fy) * fx, fy * (1 - fx), fy * fx)
    def integral(table, at):
        y0, x0, (w00, w01, w10, w11) = at
        return table[y0, x0] * w00 + table[y0, x0 + 1] * w01 + table[y0 + 1, x0] * w10 + table[y0 + 1, x0 + 1] * w11
    n, edges = 1 << zoom, np.arange(257) / 256.0
    results = []
    for folder in folders:
        squared, count = 0.0, 0
        for column in sorted(os.listdir(f"{folder}/{zoom}")):
            for name in sorted(os.listdir(f"{folder}/{zoom}/{column}")):
                x, y = int(column), int(name.split(".")[0])
                tile = np.asarray(PILImage.open(f"{folder}/{zoom}/{column}/{name}").convert("RGBA")).astype(np.float64)
                lon = -180 + 360 * (x + edges) / n
                lat = np.degrees(np.arctan(np.sinh(math.pi * (1 - 2 * (y + edges) / n))))
                sx = (lon - west) / (east - west) * width
                sy = (north - lat) / (north - south) * height
                inside = ((sy[:-1] >= 0) & (sy[1:] <= height))[:, None] & ((sx[:-1] >= 0) & (sx[1:] <= width))[None, :]
                mask = inside & (tile[:, :, 3] == 255)
                if not mask.any():
                    continue
                y0, x0 = np.meshgrid(np.clip(sy[:-1], 0, height), np.clip(sx[:-1], 0, width), indexing="ij")
                y1, x1 = np.meshgrid(np.clip(sy[1:], 0, height), np.clip(sx[1:], 0, width), indexing="ij")
                area = np.maximum((y1 - y0) * (x1 - x0), 1e-12)
                # The four corners of every footprint, located once for the three channels.
                corners = corner(y1, x1), corner(y0, x1), corner(y1, x0), corner(y0, x0)
                for channel, table in enumerate(tables):
                    a, b, c, d = (integral(table, at) for at in corners)
                    exact = (a - b - c + d) / area
                    difference = (tile[:, :, channel] - exact)[mask]
                    squared += float((difference ** 2).sum())
                    count += difference.size
        results.append((math.sqrt(squared / max(count, 1)), count // 3))
    return results


def pyramids(directory):
    """The same image through `tilekit pyramid`, gdal2tiles (--xyz --processes=2) and
    `vips dzsave --layout google` (the raw pixel grid, no warping; zooms do not apply, so
    it runs once per image): wall and CPU time, peak memory, tiles and bytes. The outputs
    go to a tmpfs when there is one (`memory_folder`); z13-19 is also run on the disk, for
    comparison."""
    vips_rows = {}
    memory = memory_folder()
    where = "on a tmpfs (/dev/shm)" if memory else "on the disk"
    with tempfile.TemporaryDirectory(dir=memory) as outputs:
        for size, zooms in ((4096, "13-17"), (16384, "13-18"), (16384, "13-19")):
            image = cached_test_image(size)
            commands = pyramid_commands(directory, image, size, zooms, outputs)
            # The 4096 px image's tiles are kept to compare their pixels (goal 1: closer to the
            # exact area average than gdal2tiles'); larger images would need GBs of tables.
            compare = size == 4096
            rows = [pyramid_run(outputs, name, *commands[name], keep=compare) for name in ("tilekit pyramid", "gdal2tiles")]
            if size not in vips_rows:
                vips_rows[size] = pyramid_run(outputs, "vips dzsave", *commands["vips dzsave"])
            rows.append(vips_rows[size])
            print(f"\nPyramid of a {size} px PNG over Central Park, zooms {zooms} (vips: its own raw pyramid of the pixels), 2 cores,"
                  f" tiles written {where} (load {os.getloadavg()[0]:.1f})")
            print_pyramid_rows(rows)
            ours, gdal, vips = rows
            wall = ratio(f"pyramid {size} px z{zooms} wall, gdal2tiles / TileKit", gdal["wall_s"] / ours["wall_s"],
                         goal=10.0 if size == 16384 else None, section="pyramids")
            vips_rate = ratio(f"pyramid {size} px z{zooms} tiles/s, TileKit / vips dzsave", ours["tiles_per_s"] / vips["tiles_per_s"],
                              goal=1.0 if size == 16384 else None, section="pyramids")
            memory_ratio = ratio(f"pyramid {size} px z{zooms} peak memory, gdal2tiles / TileKit", gdal["peak_mb"] / max(ours["peak_mb"], 0.1),
                                 goal=4.0 if size == 16384 else None, section="pyramids")
            print(f"{'ratio':18} {wall:6.1f}x gdal2tiles (wall, the same tiles), {vips_rate:.2f}x vips (tiles/s);"
                  f" peak memory {memory_ratio:.1f}x less than gdal2tiles")
            figures = {"size_px": size, "zooms": zooms, "output": where, "runs": rows}
            if compare:
                top = int(zooms.split("-")[1])
                folders = [f"{outputs}/{commands[name][1]}" for name in ("tilekit pyramid", "gdal2tiles")]
                (ours_rms, compared), (gdal_rms, _) = exact_area_rms(image, folders, top)
                for folder in folders:
                    subprocess.run(["rm", "-rf", folder])
                closer = ratio(f"pyramid {size} px z{top} pixels, RMS against the exact area average, gdal2tiles / TileKit",
                               gdal_rms / max(ours_rms, 1e-6), goal=1.0, section="pyramids")
                print(f"{'pixels':18} RMS against the exact area average of the image at z{top} ({compared:,} pixels, 0-255):"
                      f" TileKit {ours_rms:.2f}, gdal2tiles {gdal_rms:.2f} ({closer:.1f}x closer)")
                figures["exact_area_rms"] = {"zoom": top, "pixels": compared, "tilekit": round(ours_rms, 3), "gdal2tiles": round(gdal_rms, 3)}
            record("pyramids", f"{size}px z{zooms}", figures)
    # What the decoding thread alone takes of the z13-18 build (one PNG stream, one thread).
    scan = json.loads(subprocess.run([f"{RELEASE}/tilekit-bench", "scan", cached_test_image(16384), "--rounds", "3"],
                                     capture_output=True, text=True, check=True).stdout)
    print(f"\nThe 16384 px image's rows read alone (the decoding thread's work), one thread, best of 3:"
          f" {scan['seconds']:.2f} s, {scan['megapixels_per_s']:.0f} megapixels/s")
    record("pyramids", "16384px rows read alone", {"seconds": scan["seconds"], "megapixels_per_s": round(scan["megapixels_per_s"]), "rounds": 3})
    if memory:
        size, zooms = 16384, "13-19"  # the most tiles, so the most the disk can add
        commands = pyramid_commands(directory, cached_test_image(size), size, zooms)
        rows = [pyramid_run(directory, name, *commands[name]) for name in ("tilekit pyramid", "gdal2tiles")]
        print(f"\nThe same, z{zooms}, tiles written on the disk (ext4) (load {os.getloadavg()[0]:.1f})")
        print_pyramid_rows(rows)
        wall = ratio(f"pyramid {size} px z{zooms} wall on the disk, gdal2tiles / TileKit", rows[1]["wall_s"] / rows[0]["wall_s"], section="pyramids")
        print(f"{'ratio':18} {wall:6.1f}x gdal2tiles (wall)")
        record("pyramids", f"{size}px z{zooms} on the disk", {"size_px": size, "zooms": zooms, "output": "on the disk", "runs": rows})


def pyramid_scale(directory, cap):
    """Scale curve: the same zooms (z13-18, 1,159 tiles) from a 4096, 16384 and 32768 px
    image, so the output stays and only the image grows; the references stop at `cap`."""
    zooms = "13-18"
    for size in (4096, 16384, 32768):
        image = cached_test_image(size)
        commands = pyramid_commands(directory, image, size, zooms)
        rows = [pyramid_run(directory, name, *commands[name], cap=None if name == "tilekit pyramid" else cap) for name in commands]
        print(f"\nScale: a {size} px PNG ({os.path.getsize(image) / 1e6:.0f} MB, {size * size * 3 / 1e9:.2f} GB of pixels) into z{zooms},"
              f" 2 cores (load {os.getloadavg()[0]:.1f}; references stopped after {cap:.0f} s)")
        print_pyramid_rows(rows)
        record("pyramid_scale", f"{size}px", {"size_px": size, "zooms": zooms, "png_mb": round(os.path.getsize(image) / 1e6, 1),
                                               "cap_s": cap, "runs": rows})
        os.remove(f"{directory}/park{size}.vrt")


def pyramid_cores(directory, repeats=2):
    """TileKit's pyramid of the 16384 px image (z13-18) on one core (taskset -c 0) and on
    both, at --concurrency 1, 2 (the default) and 4."""
    size, zooms = 16384, "13-18"
    image = cached_test_image(size)
    base = [f"{RELEASE}/tilekit", "pyramid", image, "--bounds", PARK_BOUNDS, "--zoom", zooms, "--out", f"{directory}/tk", "--quiet"]
    configurations = [("1 core, --concurrency 1", "0", 1), ("1 core, --concurrency 2", "0", 2),
                      ("2 cores, --concurrency 1", "0,1", 1), ("2 cores, --concurrency 2", "0,1", 2), ("2 cores, --concurrency 4", "0,1", 4)]
    rows = []
    for name, cpus, concurrency in configurations:
        # The fastest of `repeats` runs: other work on the machine only ever slows a run down.
        runs = [pyramid_run(directory, name, ["taskset", "-c", cpus, *base, "--concurrency", str(concurrency)], "tk") for _ in range(repeats)]
        row = min(runs, key=lambda r: r["wall_s"])
        row.update({"cores": len(cpus.split(",")), "concurrency": concurrency, "walls_s": [r["wall_s"] for r in runs]})
        rows.append(row)
    print(f"\nCores: TileKit's pyramid of the {size} px PNG into z{zooms} on one core (taskset -c 0) and on both, fastest of {repeats}"
          f" (load {os.getloadavg()[0]:.1f})")
    print_pyramid_rows(rows)
    one = min(r["wall_s"] for r in rows if r["cores"] == 1)
    two = min(r["wall_s"] for r in rows if r["cores"] == 2)
    speedup = ratio("pyramid 16384 px z13-18 wall, best on 1 core / best on 2 cores", one / two, section="pyramid_cores")
    print(f"{'speed-up':18} {speedup:6.2f}x on 2 cores (best of each; 2.0x would be perfect scaling)")
    record("pyramid_cores", "setup", {"size_px": size, "zooms": zooms, "repeats": repeats, "kept": "fastest"})
    record("pyramid_cores", "runs", rows)


def pmtiles_over_http(directory):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from checklib import start_nginx, write_leafy_pmtiles
    os.chmod(directory, 0o755)  # nginx's worker runs unprivileged
    www = f"{directory}/www"
    os.mkdir(www)
    path = f"{www}/leafy.pmtiles"
    write_leafy_pmtiles(path, seed=1)
    nginx, port, access_log = start_nginx(directory, www)
    url = f"http://127.0.0.1:{port}/leafy.pmtiles"

    def ours(store, *extra):
        return json.loads(subprocess.run([f"{RELEASE}/tilekit-bench", "read", store, "--seconds", str(SECONDS), *extra],
                                         check=True, capture_output=True, text=True).stdout)
    try:
        local = ours(path)
        with open(access_log) as f:
            logged_before = sum(1 for _ in f)
        one = ours(url, "--warm")
        eight = ours(url, "--warm", "--concurrency", "8")
        time.sleep(0.2)  # nginx logs a request once answered
        with open(access_log) as f:
            lines = f.readlines()[logged_before:]
    finally:
        nginx.terminate()
        nginx.wait()
    tiles, leaves = one["tiles"], one["cached_leaves"]
    partial = sum(1 for line in lines if line.startswith("206 "))
    counted = one["range_requests"]["total"] + eight["range_requests"]["total"]
    print(f"\nPMTiles over HTTP: {tiles} tiles, {leaves} leaf directories, random order, {SECONDS:.0f} s each; nginx on 127.0.0.1")
    print(f"{'source':28} {'tiles/s':>9} {'vs local':>9} {'range req/tile':>15}")
    print(f"{'local file':28} {local['tiles_per_second']:9.0f} {1:9.2f} {'-':>15}")
    for name, run in (("HTTP, one at a time", one), ("HTTP, 8 at a time", eight)):
        print(f"{name:28} {run['tiles_per_second']:9.0f} {run['tiles_per_second'] / local['tiles_per_second']:9.3f}"
              f" {run['range_requests']['timed'] / run['reads']:15.3f}")
    record("pmtiles_over_http", "local", {"tiles_per_s": local["tiles_per_second"]})
    for name, run in (("HTTP, one at a time", one), ("HTTP, 8 at a time", eight)):
        record("pmtiles_over_http", name, {"tiles_per_s": run["tiles_per_second"], "vs_local": round(run["tiles_per_second"] / local["tiles_per_second"], 4),
                                           "range_requests_per_tile": round(run["range_requests"]["timed"] / run["reads"], 4)})
    record("pmtiles_over_http", "setup", {"tiles": tiles, "leaves": leaves, "nginx_range_answers": partial, "tilekit_counted_requests": counted})
    print(f"(directories warm: TileKit keeps directories, not tiles. The first read of every tile cost"
          f" {one['range_requests']['warm_up'] / tiles:.4f} requests per tile ({leaves} leaves read once); opening and listing the"
          f" file {one['range_requests']['open_and_list']}. nginx logged {partial} range answers, TileKit counted {counted};"
          f" {len(lines) - partial} other answers.)")


def sharded_pyramid(directory, shards=2):
    """`pyramid --shard I/N` as N processes at once plus `merge`, against one unsharded run:
    wall time of each part, CPU, and the ratio. Both cores serve either way, so on one
    machine the gain is what the shards' parallel image decoding and merging win or lose;
    on N machines the shards' wall time is what a cluster would wait."""
    bounds, zooms, size = "-73.9819,40.7644,-73.9493,40.8006", "13-18", 8192
    image = f"{directory}/park{size}.png"
    test_image(image, size)
    base = [f"{RELEASE}/tilekit", "pyramid", image, "--bounds", bounds, "--zoom", zooms, "--quiet"]
    wall, cpu, peak = timed(base + ["--out", f"{directory}/whole.pmtiles"], directory)
    start = time.perf_counter()
    runs = [subprocess.Popen(["/usr/bin/time", "-f", "%e %U %S %M", *base, "--out", f"{directory}/shard{i}.pmtiles", "--shard", f"{i}/{shards}"],
                             cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for i in range(shards)]
    per_shard, shard_peak = [], 0
    for run in runs:
        _, err = run.communicate()
        if run.returncode != 0:
            raise SystemExit(f"pyramid --shard failed: {err[-800:]}")
        _, user, system, rss = err.strip().splitlines()[-1].split()
        per_shard.append(float(user) + float(system))
        shard_peak = max(shard_peak, int(rss))
    shard_cpu = sum(per_shard)
    shard_wall = time.perf_counter() - start
    merge_wall, merge_cpu, merge_peak = timed([f"{RELEASE}/tilekit", "merge", *[f"{directory}/shard{i}.pmtiles" for i in range(shards)],
                                              "--out", f"{directory}/merged.pmtiles", "--quiet"], directory)
    with open(f"{directory}/whole.pmtiles", "rb") as a, open(f"{directory}/merged.pmtiles", "rb") as b:
        same = a.read() == b.read()
    info = json.loads(subprocess.run([f"{RELEASE}/tilekit", "info", f"{directory}/whole.pmtiles"], capture_output=True, text=True, check=True).stdout)
    print(f"\nSharded pyramid: {size} px PNG over Central Park, zooms {zooms}, {info['tiles']} tiles, PMTiles, 2 cores")
    print(f"{'':28} {'wall s':>7} {'CPU s':>7} {'peak MB':>8}")
    print(f"{'unsharded':28} {wall:7.2f} {cpu:7.2f} {peak / 1024:8.0f}")
    print(f"{f'{shards} shards (processes at once)':28} {shard_wall:7.2f} {shard_cpu:7.2f} {shard_peak / 1024:8.0f}")
    print(f"{'merge':28} {merge_wall:7.2f} {merge_cpu:7.2f} {merge_peak / 1024:8.0f}")
    total = shard_wall + merge_wall
    print(f"{'ratio, wall':28} {wall / total:6.2f}x (unsharded / shards + merge); merged file identical to unsharded: {'yes' if same else 'NO'}")
    print(f"{'ratio, CPU':28} {(shard_cpu + merge_cpu) / cpu:6.2f}x the unsharded CPU in all; per shard "
          + ", ".join(f"{c:.2f}" for c in per_shard) + f" s (on {shards} machines the slowest shard + merge is"
          f" {(max(per_shard) + merge_cpu) / cpu:.2f}x the unsharded CPU)")
    record("sharded_pyramid", "setup", {"size_px": size, "zooms": zooms, "tiles": info["tiles"], "shards": shards})
    record("sharded_pyramid", "runs", {"unsharded": {"wall_s": wall, "cpu_s": cpu, "peak_mb": round(peak / 1024, 1)},
                                       "shards": {"wall_s": round(shard_wall, 2), "cpu_s": round(shard_cpu, 2), "peak_mb": round(shard_peak / 1024, 1),
                                                  "cpu_s_per_shard": per_shard},
                                       "merge": {"wall_s": merge_wall, "cpu_s": merge_cpu, "peak_mb": round(merge_peak / 1024, 1)}})
    record("sharded_pyramid", "merged_identical", same)
    ratio("sharded pyramid wall, unsharded / (shards + merge)", wall / total, section="sharded_pyramid")
    ratio("sharded pyramid CPU, all shards + merge / unsharded", (shard_cpu + merge_cpu) / cpu, better="lower", section="sharded_pyramid")
    os.remove(image)


def cluster_serving(directory):
    """Serving drawn tiles (a parchment base under a features overlay, drawn on demand, so
    the first request of each tile renders it) with wrk: one `tilekit serve`, then three
    instances sharing a Redis cache behind nginx (scripts/check-cluster.py's layout)."""
    import importlib.util
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
    spec = importlib.util.spec_from_file_location("cluster", os.path.join(os.path.dirname(os.path.abspath(__file__)), "check-cluster.py"))
    cluster = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cluster)
    from attacklib import start_server, stop_server
    import mercantile
    os.chmod(directory, 0o755)
    with open(f"{directory}/pins.geojson", "w") as f:
        json.dump({"type": "FeatureCollection", "features": [
            {"type": "Feature", "geometry": {"type": "Point", "coordinates": [-73.9654 + i * 0.002, 40.7829 - i * 0.001]},
             "properties": {"title": f"Pin {i}", "radius": 150}} for i in range(40)]}, f)
    with open(f"{directory}/drawn.json", "w") as f:
        json.dump({"name": "drawn", "minzoom": 12, "maxzoom": 16, "layers": [
            {"id": "paper", "type": "generated", "generator": "parchment", "base": True},
            {"id": "pins", "type": "features", "files": ["pins.geojson"], "zindex": 1}]}, f)
    tiles = list(mercantile.tiles(-74.00, 40.74, -73.93, 40.82, [14, 15, 16]))
    random.Random(2).shuffle(tiles)
    paths = [f"/maps/drawn/{t.z}/{t.x}/{t.y}.png" for t in tiles]
    results = {}
    server, port = start_server(f"{RELEASE}/tilekit", [f"{directory}/drawn.json"], directory, extra=("--quiet",))
    try:
        results["one instance"] = wrk(port, paths, directory, "one", connections=32)
    finally:
        stop_server(server)
    redis_port, balancer = cluster.free_port(), cluster.free_port()
    redis = cluster.start_redis(directory, redis_port)
    instances = [start_server(f"{RELEASE}/tilekit", [f"{directory}/drawn.json"], directory,
                              extra=("--quiet", "--shared-cache", f"redis://127.0.0.1:{redis_port}")) for _ in range(3)]
    os.makedirs(f"{directory}/www", exist_ok=True)
    with open(f"{directory}/nginx.conf", "w") as f:
        f.write(cluster.nginx_config(directory, balancer, cluster.free_port(), [p for _, p in instances]))
    nginx = subprocess.Popen([cluster.NGINX, "-p", directory, "-c", f"{directory}/nginx.conf"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(1)
    try:
        results["3 instances + Redis behind nginx"] = wrk(balancer, paths, directory, "cluster", connections=32)
        keys = cluster.redis_cli(redis_port, "DBSIZE")
    finally:
        nginx.terminate()
        nginx.wait()
        for process, _ in instances:
            stop_server(process)
        redis.kill()
        redis.wait()
    print(f"\nServing {len(paths)} drawn tiles (rendered on first request), wrk -t2 -c32 for 10 s, 127.0.0.1; Redis held {keys} tiles")
    print(f"{'':34} {'req/s':>9} {'p50':>9} {'p99':>9} {'errors':>7}")
    for name, (rate, p50, p99, errors) in results.items():
        print(f"{name:34} {rate:9.0f} {p50:>9} {p99:>9} {errors:7d}")
    for name, (rate, p50, p99, errors) in results.items():
        record("cluster_serving", name, {"requests_per_s": rate, "p50_ms": duration_ms(p50), "p99_ms": duration_ms(p99), "errors": errors})
    record("cluster_serving", "setup", {"tiles": len(paths), "connections": 32, "seconds": 10, "redis_tiles": keys})
    ratio("drawn tiles req/s, 3 instances + Redis / one instance", results['3 instances + Redis behind nginx'][0] / results['one instance'][0], section="cluster_serving")
    print(f"{'ratio':34} {results['3 instances + Redis behind nginx'][0] / results['one instance'][0]:8.2f}x one instance "
          f"(one machine of 2 cores: the cluster's gain is shared renders, not more CPU)")


def codecs(directory):
    image_path = f"{directory}/map.png"
    subprocess.run([f"{RELEASE}/tilekit", "sample", "-o", image_path, "--size", "2048x2048"], check=True, capture_output=True)
    lines = subprocess.run([f"{RELEASE}/tilekit-bench", "codecs", image_path, "--seconds", str(SECONDS)],
                           check=True, capture_output=True, text=True).stdout.splitlines()
    ours = {r["codec"]: r for r in map(json.loads, lines)}
    image = Image.open(image_path).convert("RGB")  # the sample map is opaque: both sides write RGB
    tiles = [image.crop((x, y, x + 256, y + 256)) for y in range(0, 2048, 256) for x in range(0, 2048, 256)]
    pillow = {
        "png-level1-nofilter": lambda t, b: t.save(b, "PNG", compress_level=1),
        "png-level2-nofilter": lambda t, b: t.save(b, "PNG", compress_level=2),
        "png-level6-allfilters": lambda t, b: t.save(b, "PNG", compress_level=6),
        "jpeg-q85": lambda t, b: t.save(b, "JPEG", quality=85),
        "webp-q80-method0": lambda t, b: t.save(b, "WEBP", quality=80, method=0),
        "webp-lossless-method0": lambda t, b: t.save(b, "WEBP", lossless=True, quality=75, method=0),
    }
    print(f"\nCodecs: {len(tiles)} tiles of 256 px from the sample map, one core, {SECONDS:.0f} s each")
    print(f"{'setting':24} {'TileKit t/s':>12} {'Pillow t/s':>11} {'ratio':>6} {'TileKit B':>10} {'Pillow B':>9}")
    for name, save in pillow.items():
        rate, size = pillow_rate(tiles, save)
        mine = ours[name]
        print(f"{name:24} {mine['tiles_per_second']:12.0f} {rate:11.0f} {mine['tiles_per_second'] / rate:6.2f}"
              f" {mine['mean_bytes']:10d} {size:9d}")
        record("codecs", name, {"tilekit_tiles_per_s": mine["tiles_per_second"], "pillow_tiles_per_s": round(rate, 1),
                                "tilekit_mean_bytes": mine["mean_bytes"], "pillow_mean_bytes": size})
        ratio(f"encoding {name} tiles/s, TileKit / Pillow (one core)", mine["tiles_per_second"] / rate, section="codecs")
    print("(Pillow's PNG writer picks its own filters; TileKit's level 1-2 rows use no filter.)")

    # PNG decoding: RGBAImage(decoding:)'s fast path (PNGReader, one libdeflate call) against
    # libpng, in one process on the same tiles: the snapshot bench's debug-grid tiles (PNGWriter,
    # level 2, no filter) and Pillow's tiles of the sample map (level 6, its own filters).
    folders = {"debug-grid tiles (PNGWriter)": f"{directory}/decode-grid"}
    subprocess.run([f"{RELEASE}/tilekit-bench", "make-tiles", folders["debug-grid tiles (PNGWriter)"], "--bbox", "-74.02,40.74,-73.92,40.81",
                    "--zoom", "14-14"], check=True, capture_output=True)
    for mode, convert in [("RGB", lambda t: t), ("RGBA", lambda t: t.convert("RGBA")), ("palette", lambda t: t.quantize(256))]:
        folder = folders[f"Pillow {mode} tiles"] = f"{directory}/decode-{mode}"
        os.makedirs(folder, exist_ok=True)
        for i, tile in enumerate(tiles):
            convert(tile).save(f"{folder}/{i}.png", "PNG")
    print(f"\nPNG decoding, ms a 256 px tile, one core, PNGReader and libpng alternating on the same tiles")
    print(f"{'tiles':30} {'PNGReader':>10} {'libpng':>8} {'ratio':>6} {'read':>7}")
    for name, folder in folders.items():
        times = json.loads(subprocess.run([f"{RELEASE}/tilekit-bench", "decode-png", folder, "--rounds", "50"],
                                          check=True, capture_output=True, text=True).stdout)
        speedup = times["libpng_ms_per_tile"] / times["pngreader_ms_per_tile"]
        print(f"{name:30} {times['pngreader_ms_per_tile']:10.3f} {times['libpng_ms_per_tile']:8.3f} {speedup:6.2f}"
              f" {times['tiles']:3d}/{times['files']:<3d}")
        record("codecs", f"png-decode {name}", {"pngreader_ms_per_tile": round(times["pngreader_ms_per_tile"], 4),
                                                "libpng_ms_per_tile": round(times["libpng_ms_per_tile"], 4),
                                                "tiles_read_by_pngreader": times["tiles"], "tiles": times["files"]})
        ratio(f"decoding PNG {name}, libpng ms / PNGReader ms (one core)", speedup, section="codecs")
    print("(read: the tiles PNGReader decodes, and only those are timed; it leaves the rest, e.g. 4-bit palettes, to libpng.)")


SECTIONS = {
    "pmtiles_over_http": pmtiles_over_http, "pyramids": pyramids, "sharded_pyramid": sharded_pyramid, "serving": serving,
    "cluster_serving": cluster_serving, "feature_tiles": feature_tiles, "snapshots": snapshots,
    "stores_and_seeding": stores_and_seeding, "codecs": codecs,
}
CURVES = ("pyramid_scale", "pyramid_cores", "serving_connections")


def print_goals():
    goals = [r for r in RESULTS["ratios"] if "goal" in r]
    if not goals:
        return
    print("\nIssue 15 goals (ratios of this run):")
    for r in goals:
        sign = ">=" if r["better"] == "higher" else "<="
        print(f"  {'met    ' if r['met'] else 'NOT met'} {r['value']:7.2f}x  (goal {sign} {r['goal']:.1f}x)  {r['name']}")


def main():
    parser = argparse.ArgumentParser(description="TileKit beside reference tools; see the docstring at the top of scripts/bench.py.")
    parser.add_argument("--json", default="bench-results.json", help="where the figures go (default: bench-results.json)")
    parser.add_argument("--curves", action="store_true", help="measure the scale curves (" + ", ".join(CURVES) + ") instead")
    parser.add_argument("--only", help="comma-separated sections to run (of: " + ", ".join([*SECTIONS, *CURVES]) + ")")
    parser.add_argument("--cap", type=float, default=240, help="seconds before a reference pyramid is stopped in the curves (default: 240)")
    parser.add_argument("--serve-seconds", type=int, default=10, help="seconds of each wrk run (default: 10)")
    args = parser.parse_args()
    curves = {"pyramid_scale": lambda d: pyramid_scale(d, args.cap), "pyramid_cores": pyramid_cores,
              "serving_connections": lambda d: serving(d, connections=(32, 64, 128, 256, 512, 1024), seconds=args.serve_seconds,
                                                       mapproxy=False, section="serving_connections", like_for_like=False, goal_rounds=1)}
    available = {**SECTIONS, **curves, "serving": lambda d: serving(d, seconds=args.serve_seconds)}
    names = args.only.split(",") if args.only else list(CURVES if args.curves else SECTIONS)
    unknown = [n for n in names if n not in available]
    if unknown:
        parser.error(f"unknown section {', '.join(unknown)}")
    # wrk's 1024 connections, and the servers' as many, need more descriptors than the usual 1024.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 65536, hard))
    RESULTS["meta"] = machine_meta()
    RESULTS["meta"]["sections_run"] = names
    started = time.perf_counter()
    print(f"TileKit bench: {RESULTS['meta']['date_utc']}, commit {RESULTS['meta']['commit']}, {RESULTS['meta']['cores']} cores,"
          f" load average {' '.join(map(str, RESULTS['meta']['load_average_start']))}")
    for name in names:
        load, section_started = load_average(), time.perf_counter()
        with tempfile.TemporaryDirectory() as directory:
            available[name](directory)
        seconds = time.perf_counter() - section_started
        RESULTS["sections"].setdefault(name, {})["run"] = {"seconds": round(seconds, 1), "load_average_start": load, "load_average_end": load_average()}
        print(f"[{name}: {seconds:.0f} s, load average {load[0]:.2f} -> {os.getloadavg()[0]:.2f}]")
        write_results(args.json)
    RESULTS["meta"]["seconds"] = round(time.perf_counter() - started, 1)
    write_results(args.json)
    print_goals()
    print(f"\n{len(names)} sections in {RESULTS['meta']['seconds']:.0f} s; load average {' '.join(map(str, RESULTS['meta']['load_average_start']))}"
          f" at start, {' '.join(map(str, RESULTS['meta']['load_average_end']))} at end; figures in {args.json}")


if __name__ == "__main__":
    sys.exit(main())
