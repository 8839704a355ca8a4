#!/usr/bin/env python3
"""Crash safety of the commands that write, as a user meets it:

- `kill -9` at random moments (seeded) of `convert` (MBTiles->PMTiles, PMTiles->MBTiles,
  MBTiles->folder), `seed` (from scripts/test-tile-server.py on 127.0.0.1) and `pyramid`, each
  into MBTiles and PMTiles: no final store unless the run finished, `PRAGMA integrity_check`
  ok on every MBTiles left (the hidden partial one included), and a rerun (`pyramid --resume`)
  gives exactly the tiles of an uninterrupted run and leaves no scratch file beside them;
- a full disk (a small tmpfs, topped up with a filler file to leave a chosen free space) for
  every command that writes: exit 74, a message naming the destination and "no space left on
  device" (no raw Foundation error text), no final file and no scratch file;
- `seed` into a full disk many times with many fetches in flight: exit 74 every time (it
  deadlocked in Foundation when a write error cancelled the fetches).

usage: check-crash-safety.py TILEKIT [--runs N] [--seed N] [--seed-loops N]
  --runs N        killed runs per scenario (default 2; `make crash-check` runs 20)
  --seed N        the random kill moments (default 11)
  --seed-loops N  seeds into a full disk in the deadlock loop (default 30)
"""
import argparse
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import FAILURES, check  # noqa: E402

SCRIPTS = os.path.dirname(os.path.abspath(__file__))
BOX = "-73.9819,40.7644,-73.9493,40.8006"  # Central Park
SEED_BOX = "-74.02,40.70,-73.93,40.80"


# Reading stores, each as {key: bytes} of its tiles (keys in the store's own row order).

def mbtiles_tiles(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return {(z, x, y): bytes(data) for z, x, y, data in db.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles")}
    finally:
        db.close()


def pmtiles_tiles(path):
    from pmtiles.reader import MmapSource, Reader, all_tiles
    with open(path, "rb") as f:
        return {zxy: bytes(data) for zxy, data in all_tiles(Reader(MmapSource(f)).get_bytes)}


def folder_tiles(root):
    found = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            if not name.startswith(".") and name != "metadata.json":
                with open(os.path.join(dirpath, name), "rb") as f:
                    found[os.path.relpath(os.path.join(dirpath, name), root)] = f.read()
    return found


def tiles(path):
    if os.path.isdir(path):
        return folder_tiles(path)
    return pmtiles_tiles(path) if path.endswith(".pmtiles") else mbtiles_tiles(path)


def described(path):
    """What a store says of itself: MBTiles metadata, the PMTiles header and metadata, metadata.json."""
    if os.path.isdir(path):
        with open(os.path.join(path, "metadata.json"), "rb") as f:
            return f.read()
    if path.endswith(".pmtiles"):
        from pmtiles.reader import MmapSource, Reader
        with open(path, "rb") as f:
            reader = Reader(MmapSource(f))
            return reader.header(), reader.metadata()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return dict(db.execute("SELECT name, value FROM metadata"))
    finally:
        db.close()


def everything_in(folder):
    """Every name in a folder and below it, hidden ones included (scratch files are hidden)."""
    names = []
    for dirpath, dirs, files in os.walk(folder):
        names += [os.path.relpath(os.path.join(dirpath, n), folder) for n in dirs + files]
    return sorted(names)


def integrity(path):
    """PRAGMA integrity_check on a copy (with its -wal), so checking changes nothing the rerun finds."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = os.path.join(scratch, "copy.mbtiles")
        shutil.copy(path, copy)
        if os.path.exists(path + "-wal"):
            shutil.copy(path + "-wal", copy + "-wal")
        db = sqlite3.connect(copy)
        try:
            return db.execute("PRAGMA integrity_check").fetchone()[0]
        except sqlite3.DatabaseError as error:
            return str(error)
        finally:
            db.close()


# Inputs, made without tilekit (so a bug in it cannot hide in its own input).

def make_inputs(folder, rng):
    """A 10 MB MBTiles of 1500 unique tiles (PNG signature + noise: convert copies bytes), its PMTiles
    twin (written by the pmtiles package), a real small MBTiles to stitch, and an image to cut."""
    source = os.path.join(folder, "src.mbtiles")
    db = sqlite3.connect(source)
    db.executescript("CREATE TABLE metadata (name TEXT, value TEXT); CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER,"
                     " tile_row INTEGER, tile_data BLOB); CREATE UNIQUE INDEX tile_index ON tiles (zoom_level, tile_column, tile_row);")
    db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "src"), ("format", "png"), ("minzoom", "0"), ("maxzoom", "12"),
                                                          ("bounds", "-180,-85.0511,180,85.0511")])
    rows, z = [], 0
    while len(rows) < 1500:
        side = 1 << z
        for x in range(min(side, 32)):
            for y in range(min(side, 32)):
                if len(rows) < 1500:
                    rows.append((z, x, y, b"\x89PNG\r\n\x1a\n" + rng.randbytes(rng.randint(2000, 11000))))
        z += 1
    db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", rows)
    db.commit()
    db.close()
    shutil.copy(source, os.path.join(folder, "mid.mbtiles"))  # 1 MB of it: its PMTiles fits a small disk once, not twice
    db = sqlite3.connect(os.path.join(folder, "mid.mbtiles"))
    db.execute("DELETE FROM tiles WHERE rowid > 160")
    db.commit()
    db.execute("VACUUM")
    db.close()
    from pmtiles.convert import mbtiles_to_pmtiles
    mbtiles_to_pmtiles(source, os.path.join(folder, "src.pmtiles"), 12)

    # Real PNG tiles (the test server's) at zoom 14 over the park, for stitch and split.
    spec = __import__("importlib.util").util.spec_from_file_location("test_tile_server", os.path.join(SCRIPTS, "test-tile-server.py"))
    server = __import__("importlib.util").util.module_from_spec(spec)
    spec.loader.exec_module(server)
    db = sqlite3.connect(os.path.join(folder, "real.mbtiles"))
    db.executescript("CREATE TABLE metadata (name TEXT, value TEXT); CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER,"
                     " tile_row INTEGER, tile_data BLOB);")
    db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "real"), ("format", "png"), ("minzoom", "14"), ("maxzoom", "14")])
    for x in range(4823, 4827):
        for y in range(6153, 6158):
            db.execute("INSERT INTO tiles VALUES (14, ?, ?, ?)", (x, (1 << 14) - 1 - y, server.png(14, x, y)))
    db.commit()
    db.close()

    from PIL import Image, ImageDraw
    image = Image.new("RGB", (2048, 2048), (200, 190, 160))
    draw = ImageDraw.Draw(image)
    for _ in range(3000):
        x, y, w, h = rng.randrange(2048), rng.randrange(2048), rng.randrange(5, 120), rng.randrange(5, 120)
        draw.rectangle([x, y, x + w, y + h], fill=(rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    image.save(os.path.join(folder, "park.png"))


class TileServer:
    """scripts/test-tile-server.py on 127.0.0.1; it stops when its stdin closes."""

    def __enter__(self):
        # Its stderr is dropped: killed seeds leave it broken pipes to report.
        self.process = subprocess.Popen([sys.executable, os.path.join(SCRIPTS, "test-tile-server.py")],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.port = int(self.process.stdout.readline())
        return self

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def __exit__(self, *exc):
        self.process.stdin.close()
        self.process.wait(timeout=10)


# Killed runs.

def scenarios(tilekit, inputs, server):
    """(name, destination file name, command for a destination, the rerun's extra arguments)."""
    src_mb, src_pm, mid, image = (os.path.join(inputs, n) for n in ("src.mbtiles", "src.pmtiles", "mid.mbtiles", "park.png"))
    seed = [tilekit, "seed", "--source", server.url("/tiles/{z}/{x}/{y}.png"), "--bbox", SEED_BOX, "--zoom", "10-15",
            "--concurrency", "32", "--rate", "1000", "--quiet", "--out"]
    pyramid = [tilekit, "pyramid", image, "--bounds", BOX, "--zoom", "12-16", "--quiet", "--out"]
    return [
        ("convert MBTiles->PMTiles", "out.pmtiles", lambda out: [tilekit, "convert", src_mb, out, "--quiet"], []),
        ("convert PMTiles->MBTiles", "out.mbtiles", lambda out: [tilekit, "convert", src_pm, out, "--quiet"], []),
        # 160 tiles: a folder store fsyncs each tile file, slow on a busy disk.
        ("convert MBTiles->folder", "out", lambda out: [tilekit, "convert", mid, out, "--quiet"], []),
        ("seed ->MBTiles", "seed.mbtiles", lambda out: seed + [out], []),
        ("seed ->PMTiles", "seed.pmtiles", lambda out: seed + [out], []),
        ("pyramid ->MBTiles", "park.mbtiles", lambda out: pyramid + [out], ["--resume"]),
        ("pyramid ->PMTiles", "park.pmtiles", lambda out: pyramid + [out], ["--resume"]),
    ]


def killed_runs(tilekit, work, inputs, server, runs, rng):
    for name, destination, command, resume in scenarios(tilekit, inputs, server):
        reference_folder = os.path.join(work, "reference")
        shutil.rmtree(reference_folder, ignore_errors=True)
        os.makedirs(reference_folder)
        reference_path = os.path.join(reference_folder, destination)
        start = time.monotonic()
        whole = subprocess.run(command(reference_path), capture_output=True, text=True)
        duration = time.monotonic() - start
        reference = tiles(reference_path) if whole.returncode == 0 else {}
        reference_description = described(reference_path) if whole.returncode == 0 else None
        check(f"{name}: an uninterrupted run ({len(reference)} tiles, {duration:.2f} s)", whole.returncode == 0 and len(reference) > 50, whole.stderr)
        if not reference:
            continue
        outcomes = {"killed": 0, "finished": 0}
        problems = []
        for run in range(runs):
            folder = os.path.join(work, f"run{run}")
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            out = os.path.join(folder, destination)
            # Anywhere in the run, and every other time near its end (the commit: the rename,
            # the PMTiles layout). A run that finishes first shortens the span for the next.
            delay = rng.uniform(0, duration * 1.1) if run % 2 == 0 else rng.uniform(duration * 0.7, duration * 1.05)
            start = time.monotonic()
            process = subprocess.Popen(command(out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                if process.wait(timeout=delay) == 0:
                    duration = min(duration, time.monotonic() - start)
            except subprocess.TimeoutExpired:
                process.send_signal(signal.SIGKILL)
                process.wait()
            # The rename into place is the moment a run finishes: killed after it (printing its
            # summary), the store is there and whole.
            finished = process.returncode == 0 or os.path.exists(out)
            outcomes["finished" if finished else "killed"] += 1
            where = f"run {run}, killed at {delay:.3f} s"
            left = everything_in(folder)
            if finished and tiles(out) != reference:
                problems.append(f"{where}: a final store with other tiles than the uninterrupted run's (exit {process.returncode}; {left[:6]})")
            for store in (n for n in left if n.endswith(".mbtiles")):
                verdict = integrity(os.path.join(folder, store))
                if verdict != "ok":
                    problems.append(f"{where}: {store} fails integrity_check: {verdict}")
            again = subprocess.run(command(out) + (resume if not finished else []) + (["--force"] if finished and "convert" in command(out) else []),
                                   capture_output=True, text=True)
            if again.returncode != 0:
                problems.append(f"{where}: the rerun failed ({again.returncode}): {again.stderr.strip()[-300:]} (left: {left})")
                continue
            got = tiles(out)
            if got != reference:
                problems.append(f"{where}: the rerun has {len(got)} tiles, the uninterrupted run {len(reference)}; "
                                f"{sum(1 for k in reference if got.get(k) != reference[k])} differ (left by the kill: {left[:6]})")
            elif described(out) != reference_description:
                problems.append(f"{where}: the rerun's metadata differ: {described(out)} vs {reference_description}")
            scratch = [n for n in everything_in(folder)
                       if (n != destination and not n.startswith(destination + "/")) or os.path.basename(n).startswith(".")]
            if scratch:
                problems.append(f"{where}: scratch files after the rerun: {scratch[:6]} (left by the kill: {left[:6]})")
        check(f"{name}: {runs} runs killed at random moments ({outcomes['killed']} killed, {outcomes['finished']} done first): "
              "no final store, intact MBTiles, a rerun gives the same tiles and no scratch", not problems, "\n    " + "\n    ".join(problems))


# A full disk.

class SmallDisk:
    """A 3 MB tmpfs; `leave(n)` empties it (but `keep`) and tops it up with a filler file so that
    about n bytes stay free."""

    def __init__(self, folder):
        self.folder = folder
        os.makedirs(folder)
        self.mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", folder], capture_output=True).returncode == 0

    def leave(self, free, keep=()):
        for name in os.listdir(self.folder):
            path = os.path.join(self.folder, name)
            if name not in keep:
                shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
        stat = os.statvfs(self.folder)
        available = stat.f_bavail * stat.f_frsize
        with open(os.path.join(self.folder, "filler"), "wb") as f:
            f.write(b"\0" * max(0, available - free))

    def unmount(self):
        if self.mounted and subprocess.run(["umount", self.folder], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", self.folder])


PAGE = 4096  # a tmpfs allocates whole pages


def room_for(name):
    """Free space for exactly one of a command's files (the pages it takes), measured in the roomy run."""
    return lambda roomy: -(-os.path.getsize(os.path.join(roomy, name)) // PAGE) * PAGE


def size_of(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, n)) for d, _, files in os.walk(path) for n in files)
    return os.path.getsize(path) if os.path.exists(path) else 0


def full_disk(tilekit, work, inputs, server, loops):
    disk = SmallDisk(os.path.join(work, "full"))
    if not disk.mounted:
        print("skip the full-disk checks: cannot mount a small tmpfs here (needs root, or CAP_SYS_ADMIN in a container)")
        return
    try:
        full = disk.folder
        src_mb, src_pm, mid, real, image = (os.path.join(inputs, n) for n in ("src.mbtiles", "src.pmtiles", "mid.mbtiles", "real.mbtiles", "park.png"))
        stitched = os.path.join(inputs, "layer.png")
        made = subprocess.run([tilekit, "stitch", real, "--bbox", "-73.97,40.77,-73.96,40.775", "--zoom", "14", "-o", stitched],
                              capture_output=True, text=True)
        check("stitch makes a layer to split", made.returncode == 0, made.stderr)
        seed = [tilekit, "seed", "--source", server.url("/tiles/{z}/{x}/{y}.png"), "--bbox", SEED_BOX, "--zoom", "10-15",
                "--concurrency", "32", "--rate", "1000", "--quiet", "--out"]
        pyramid = [tilekit, "pyramid", image, "--bounds", BOX, "--zoom", "12-16", "--quiet", "--out"]
        # (what, destination in the full disk, command, free space as fractions of the output's size):
        # nothing free, half the output, and for PMTiles room for the scratch copy but not the layout
        # (staged through an MBTiles partial store when resumable: seed, pyramid).
        cases = [
            ("convert MBTiles->MBTiles", "out.mbtiles", lambda d: [tilekit, "convert", src_mb, d], [0, 0.1, 0.25]),
            ("convert MBTiles->PMTiles", "out.pmtiles", lambda d: [tilekit, "convert", src_mb, d], [0, 0.1, 0.25]),
            ("convert PMTiles->MBTiles", "out.mbtiles", lambda d: [tilekit, "convert", src_pm, d], [0.1]),
            ("convert 1 MB to PMTiles (full while laid out)", "mid.pmtiles", lambda d: [tilekit, "convert", mid, d], [1.5]),
            ("convert MBTiles->folder", "out", lambda d: [tilekit, "convert", src_mb, d], [0, 0.1]),
            ("seed ->MBTiles", "seed.mbtiles", lambda d: seed + [d], [0, 0.5]),
            ("seed ->PMTiles", "seed.pmtiles", lambda d: seed + [d], [0, 0.5, 1.5, 2.5]),
            ("seed ->folder", "seeds", lambda d: seed + [d], [0.5]),
            ("pyramid ->MBTiles", "park.mbtiles", lambda d: pyramid + [d], [0, 0.5]),
            ("pyramid ->PMTiles", "park.pmtiles", lambda d: pyramid + [d], [0.5, 1.5, 2.5]),
            ("pyramid ->folder", "park", lambda d: pyramid + [d], [0.5]),
            # A tmpfs gives whole 4 KB pages: room for one or two of stitch's three files, not all.
            ("stitch", "layer.png", lambda d: [tilekit, "stitch", real, "--bbox", "-73.97,40.77,-73.96,40.775", "--zoom", "14", "-o", d], [0, PAGE, 2 * PAGE]),
            ("split", "split.mbtiles", lambda d: [tilekit, "split", stitched, "--out", d], [0, 0.5]),
            ("snapshot", "snap.png", lambda d: [tilekit, "snapshot", "--center", "-73.965,40.78", "--zoom", "15", "--size", "1024x1024",
                                                "-o", d, "--geometry", d[:-4] + ".json"], [0, 0.5, room_for("snap.png")]),
            ("sample", "sample.png", lambda d: [tilekit, "sample", "-o", d], [0, 0.5]),
        ]
        roomy = os.path.join(work, "sizes")
        for what, name, command, fractions in cases:
            if what.startswith("convert") and "mid" not in name:
                size = os.path.getsize(src_mb)  # 10 MB: more than the whole disk
            else:
                shutil.rmtree(roomy, ignore_errors=True)
                os.makedirs(roomy)
                measured = subprocess.run(command(os.path.join(roomy, name)), capture_output=True, text=True)
                size = sum(size_of(os.path.join(roomy, n)) for n in os.listdir(roomy))
                if measured.returncode != 0:
                    check(f"{what} works with room to spare", False, measured.stderr)
                    continue
            for fraction in fractions:
                if callable(fraction):
                    free = fraction(roomy)
                elif isinstance(fraction, int) and fraction > 1:
                    free = fraction
                else:
                    free = min(int(size * fraction), 2_800_000)
                disk.leave(free)
                destination = os.path.join(full, name)
                result = subprocess.run(command(destination), capture_output=True, text=True, timeout=120)
                left = [n for n in os.listdir(full) if n != "filler"]
                # Named: the destination, or the sidecar (LAYER.pgw, SNAP.json) that did not fit.
                named = os.path.splitext(destination)[0] + ("" if name.endswith((".png", ".jpg")) else os.path.splitext(destination)[1])
                check(f"full disk, {what} with {free // 1000} of its {size // 1000} KB free: exit 74 naming {name} and the cause, nothing left",
                      result.returncode == 74 and named in result.stderr and "no space left on device" in result.stderr
                      and "NSCocoaErrorDomain" not in result.stderr and not left,
                      f"exit {result.returncode}: {result.stderr.strip()[-400:]}; left: {left}")

        # A cache that cannot grow its write-ahead log: clear and prune are I/O errors.
        disk.leave(2_800_000)
        cache = os.path.join(full, "cache.mbtiles")
        made = make_cache(cache)
        disk.leave(0, keep=["cache.mbtiles"])
        for action in (["clear"], ["prune", "--max-age", "1s"]):
            result = subprocess.run([tilekit, "cache", *action, cache], capture_output=True, text=True)
            check(f"full disk, cache {action[0]}: exit 74 naming the cache, nothing new left", made and result.returncode == 74 and cache in result.stderr
                  and "no space left on device" in result.stderr and sorted(os.listdir(full)) == ["cache.mbtiles", "filler"],
                  f"exit {result.returncode}: {result.stderr.strip()[-300:]}; {sorted(os.listdir(full))}")

        # Standard output on a full disk.
        disk.leave(0)
        with open(os.path.join(full, "list.txt"), "w") as listing:
            result = subprocess.run([tilekit, "tile", "list", "--bbox", "-180,-85,180,85", "--zoom", "9"], stdout=listing, stderr=subprocess.PIPE, text=True)
        check("full disk, tile list > file: exit 74 naming standard output (no trap)",
              result.returncode == 74 and "standard output" in result.stderr and "no space left on device" in result.stderr,
              f"exit {result.returncode}: {result.stderr.strip()[-300:]}")

        # The seed that deadlocked: many slow fetches in flight when the disk fills.
        codes, slowest = [], 0.0
        outputs = ["loop.pmtiles", "loop", "loop.mbtiles"]
        for i in range(loops):
            disk.leave(40_000)
            start = time.monotonic()
            try:
                result = subprocess.run([tilekit, "seed", "--source", server.url("/slow/0.05/{z}/{x}/{y}.png"), "--bbox", SEED_BOX,
                                         "--zoom", "10-15", "--concurrency", "32", "--rate", "1000", "--quiet",
                                         "--out", os.path.join(full, outputs[i % len(outputs)])], capture_output=True, text=True, timeout=30)
                codes.append(result.returncode)
            except subprocess.TimeoutExpired:
                codes.append("hung")
            slowest = max(slowest, time.monotonic() - start)
        check(f"seed into a full disk with 32 fetches in flight, {loops} times: exit 74 every time (slowest {slowest:.1f} s)",
              codes == [74] * loops, codes)
    finally:
        disk.unmount()


def make_cache(path):
    """A tile cache as `serve` keeps one (TileCacheStore's tables), with 300 tiles."""
    db = sqlite3.connect(path)
    try:
        db.executescript("""
            CREATE TABLE metadata (name TEXT NOT NULL, value TEXT);
            CREATE TABLE map (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL, tile_id TEXT NOT NULL);
            CREATE UNIQUE INDEX map_index ON map (zoom_level, tile_column, tile_row);
            CREATE TABLE images (tile_data BLOB NOT NULL, tile_id TEXT NOT NULL);
            CREATE UNIQUE INDEX images_id ON images (tile_id);
            CREATE VIEW tiles AS SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column, map.tile_row AS tile_row,
                images.tile_data AS tile_data FROM map JOIN images ON images.tile_id = map.tile_id;
            CREATE TABLE tile_cache (zoom_level INTEGER NOT NULL, tile_column INTEGER NOT NULL, tile_row INTEGER NOT NULL,
                fetched_at REAL NOT NULL, expires_at REAL NOT NULL, etag TEXT, last_modified TEXT, last_access REAL NOT NULL,
                size INTEGER NOT NULL, PRIMARY KEY (zoom_level, tile_column, tile_row));
            CREATE INDEX tile_cache_access ON tile_cache (last_access);
        """)
        for i in range(300):
            db.execute("INSERT INTO images VALUES (?, ?)", (os.urandom(1500), f"id{i}"))
            db.execute("INSERT INTO map VALUES (12, ?, 7, ?)", (i, f"id{i}"))
            db.execute("INSERT INTO tile_cache VALUES (12, ?, 7, 0, 1, NULL, NULL, 0, 1500)", (i,))
        db.commit()
        return True
    except sqlite3.Error as error:
        print(f"cannot make the cache: {error}")
        return False
    finally:
        db.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tilekit")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--seed-loops", type=int, default=30)
    arguments = parser.parse_args()
    tilekit = os.path.abspath(arguments.tilekit)
    rng = random.Random(arguments.seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tilekit-crash-") as work, TileServer() as server:
        inputs = os.path.join(work, "in")
        os.makedirs(inputs)
        make_inputs(inputs, rng)
        print(f"inputs made in {time.monotonic() - started:.0f} s")
        killed_runs(tilekit, work, inputs, server, arguments.runs, rng)
        print(f"killed runs done at {time.monotonic() - started:.0f} s")
        full_disk(tilekit, work, inputs, server, arguments.seed_loops)
    from checklib import COUNT
    print(f"crash safety: {COUNT[0] - len(FAILURES)} passed, {len(FAILURES)} failed ({time.monotonic() - started:.0f} s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
