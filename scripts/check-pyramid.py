#!/usr/bin/env python3
"""`tilekit pyramid`, `stitch` and `split` as a user runs them, beside gdal2tiles:

- a 2048 px sample map over Central Park (bounds, plate carrée) gives the same tile set as
  gdal2tiles (--xyz, bilinear) and per-tile colours within resampling noise;
- a world file, four unrotated corners and --bounds give the same tiles byte for byte;
- a build killed with SIGKILL mid-way leaves no final store, and --resume finishes it with
  exactly the tiles of an uninterrupted build;
- three `--shard I/3` builds run at once and merged give exactly the unsharded tiles;
- stitch then split without edits changes nothing (bit for bit); an edit changes only its
  tiles, and --rebuild-parents only their ancestors;
- bad input (a corrupt image, south > north, a broken world file, zoom 31, a full disk)
  gets a clear message, its exit code, and no store.

usage: check-pyramid.py TILEKIT
"""
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import numpy as np
from PIL import Image, ImageDraw

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import check, summary  # noqa: E402

BOUNDS = "-73.9819,40.7644,-73.9493,40.8006"


def run(*command, cwd):
    return subprocess.run(list(command), cwd=cwd, capture_output=True, text=True)


def folder_tiles(root):
    found = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            if name.endswith(".png"):
                found[os.path.relpath(os.path.join(dirpath, name), root)] = os.path.join(dirpath, name)
    return found


def mbtiles(path):
    db = sqlite3.connect(path)
    rows = {(z, x, y): bytes(data) for z, x, y, data in db.execute("SELECT zoom_level, tile_column, tile_row, tile_data FROM tiles")}
    db.close()
    return rows


def main():
    tilekit = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as d:
        run(tilekit, "sample", "-o", "park.png", "--size", "2048x2048", cwd=d)

        # Beside gdal2tiles.
        west, south, east, north = BOUNDS.split(",")
        run("gdal_translate", "-q", "-of", "VRT", "-a_srs", "EPSG:4326", "-a_ullr", west, north, east, south, "park.png", "park.vrt", cwd=d)
        reference = run("gdal2tiles.py", "--xyz", "-r", "bilinear", "--processes=2", "-q", "park.vrt", "gdal", cwd=d)
        zooms = sorted(int(z) for z in os.listdir(os.path.join(d, "gdal")) if z.isdigit())
        ours = run(tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--out", "tilekit", "--quiet", cwd=d)
        check("pyramid runs", ours.returncode == 0, ours.stderr)
        mine, theirs = folder_tiles(os.path.join(d, "tilekit")), folder_tiles(os.path.join(d, "gdal"))
        check(f"same default zooms as gdal2tiles ({zooms[0]}-{zooms[-1]})", sorted({int(k.split('/')[0]) for k in mine}) == zooms)
        check(f"same tile set as gdal2tiles ({len(theirs)} tiles)", set(mine) == set(theirs), (sorted(set(mine) ^ set(theirs))[:6], reference.stderr[-200:]))
        worst = {}
        for key in set(mine) & set(theirs):
            a = np.asarray(Image.open(mine[key]).convert("RGBA"), dtype=float)
            b = np.asarray(Image.open(theirs[key]).convert("RGBA"), dtype=float)
            both = (a[..., 3] > 0) & (b[..., 3] > 0)
            difference = np.abs(a[..., :3] - b[..., :3])[both].mean() if both.any() else 0
            z = int(key.split("/")[0])
            worst[z] = max(worst.get(z, 0), difference)
        top = zooms[-1]
        check(f"top zoom within resampling noise of gdal2tiles (worst tile mean |diff| {worst.get(top, 99):.2f} of 255)", worst.get(top, 99) < 4)
        check(f"lower zooms close to gdal2tiles' (worst {max(worst.values()):.2f}; gdal2tiles resamples, TileKit averages)", max(worst.values()) < 8)

        # Other ways to place the same image.
        a, e = (float(east) - float(west)) / 2048, -(float(north) - float(south)) / 2048
        with open(os.path.join(d, "park.pgw"), "w") as f:
            f.write(f"{a:.15f}\n0\n0\n{e:.15f}\n{float(west) + a / 2:.15f}\n{float(north) + e / 2:.15f}\n")
        run(tilekit, "pyramid", "park.png", "--out", "world.mbtiles", "--quiet", cwd=d)
        corners = f"{west},{north};{east},{north};{east},{south};{west},{south}"
        run(tilekit, "pyramid", "park.png", "--corners", corners, "--out", "corners.mbtiles", "--quiet", cwd=d)
        run(tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--out", "bounds.mbtiles", "--quiet", cwd=d)
        b = mbtiles(os.path.join(d, "bounds.mbtiles"))
        check("a world file gives the same tiles as --bounds", mbtiles(os.path.join(d, "world.mbtiles")) == b and len(b) == len(mine))
        check("four corners give the same tiles as --bounds", mbtiles(os.path.join(d, "corners.mbtiles")) == b)
        os.remove(os.path.join(d, "park.pgw"))

        # Other stores, layouts, sizes and resamplings.
        pm = run(tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--out", "park.pmtiles", "--quiet", cwd=d)
        from pmtiles.reader import MmapSource, Reader, all_tiles
        with open(os.path.join(d, "park.pmtiles"), "rb") as f:
            count = sum(1 for _ in all_tiles(Reader(MmapSource(f)).get_bytes))
        check(f"PMTiles output (built as MBTiles, laid out at the end): the pmtiles package reads all {count} tiles",
              pm.returncode == 0 and count == len(b) and not os.path.exists(os.path.join(d, ".park.partial.mbtiles")), pm.stderr)
        tms = run(tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--out", "tms", "--scheme", "tms", "--quiet", cwd=d)
        flipped = {f"{z}/{x}/{(1 << int(z)) - 1 - int(y.split('.')[0])}.png" for z, x, y in (k.split("/") for k in folder_tiles(os.path.join(d, "tms")))}
        check("a TMS folder holds the same tiles, rows flipped", tms.returncode == 0 and flipped == set(mine))
        big = run(tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--out", "t512.mbtiles", "--tile-size", "512", "--json", cwd=d)
        sizes = {Image.open(__import__("io").BytesIO(blob)).size for blob in mbtiles(os.path.join(d, "t512.mbtiles")).values()}
        check("512 px tiles, one zoom fewer at the top", big.returncode == 0 and sizes == {(512, 512)} and f'"maxzoom":{zooms[-1] - 1}' in big.stdout, (sizes, big.stdout))
        for resampling in ("bicubic", "lanczos"):
            other = run(tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--out", f"{resampling}.mbtiles", "--resampling", resampling, "--quiet", cwd=d)
            check(f"{resampling} resampling gives the same tile set", other.returncode == 0 and len(mbtiles(os.path.join(d, f"{resampling}.mbtiles"))) == len(b))
        direct = run(tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--out", "direct.mbtiles", "--lower", "resample", "--quiet", cwd=d)
        check("lower zooms sampled from the image give the same tile set", direct.returncode == 0 and set(mbtiles(os.path.join(d, "direct.mbtiles"))) == set(b))

        # Three shards run at once (as `xargs -P 3` would), merged: the unsharded tiles, byte for byte.
        shards = [subprocess.Popen([tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--out", f"shard{i}.mbtiles", "--shard", f"{i}/3", "--quiet"],
                                   cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for i in range(3)]
        errors = [p.communicate()[1] for p in shards]
        merged = run(tilekit, "merge", "shard2.mbtiles", "shard0.mbtiles", "shard1.mbtiles", "--out", "merged.mbtiles", cwd=d)
        check(f"3 shards in parallel + merge give the unsharded pyramid ({len(b)} tiles), byte for byte",
              all(p.returncode == 0 for p in shards) and merged.returncode == 0 and mbtiles(os.path.join(d, "merged.mbtiles")) == b,
              (errors, merged.stdout, merged.stderr))
        missing = run(tilekit, "merge", "shard0.mbtiles", "shard2.mbtiles", "--out", "x.mbtiles", cwd=d)
        check("a missing shard: exit 64 naming it", missing.returncode == 64 and "missing: 1/3" in missing.stderr, missing.stderr)

        # Killed mid-way, then resumed.
        run(tilekit, "sample", "-o", "big.png", "--size", "4096x4096", cwd=d)
        whole = run(tilekit, "pyramid", "big.png", "--bounds", BOUNDS, "--zoom", "12-18", "--out", "whole.mbtiles", "--quiet", cwd=d)
        check("a 4096 px image to z18", whole.returncode == 0, whole.stderr)
        process = subprocess.Popen([tilekit, "pyramid", "big.png", "--bounds", BOUNDS, "--zoom", "12-18", "--out", "resumed.mbtiles", "--quiet"], cwd=d)
        # Kill it once some rows are committed (polling the partial store), well before the end.
        partial_path = os.path.join(d, ".resumed.partial.mbtiles")
        deadline = time.time() + 30
        while time.time() < deadline and process.poll() is None:
            try:
                if os.path.exists(partial_path) and sqlite3.connect(f"file:{partial_path}?mode=ro", uri=True, timeout=0.1).execute("SELECT count(*) FROM map").fetchone()[0] >= 150:
                    break
            except sqlite3.Error:
                pass
            time.sleep(0.01)
        finished_early = process.poll() is not None
        process.send_signal(signal.SIGKILL)
        process.wait()
        check("the build was killed mid-way", not finished_early)
        partial = os.path.join(d, ".resumed.partial.mbtiles")
        kept = len(mbtiles(partial)) if os.path.exists(partial) else -1
        check(f"SIGKILL leaves no final store and a valid partial one ({kept} tiles kept)", not os.path.exists(os.path.join(d, "resumed.mbtiles")) and kept >= 0)
        again = run(tilekit, "pyramid", "big.png", "--bounds", BOUNDS, "--zoom", "12-18", "--out", "resumed.mbtiles", "--resume", "--json", cwd=d)
        check("--resume finishes it", again.returncode == 0 and '"reused"' in again.stdout, again.stderr + again.stdout)
        full, resumed = mbtiles(os.path.join(d, "whole.mbtiles")), mbtiles(os.path.join(d, "resumed.mbtiles"))
        check(f"the resumed build has exactly the uninterrupted build's tiles ({len(full)})", full == resumed and len(full) > 0,
              (len(full), len(resumed), sum(1 for k in full if full[k] != resumed.get(k))))

        # Stitch, paint, split.
        stitched = run(tilekit, "stitch", "bounds.mbtiles", "--bbox", "-73.975,40.77,-73.96,40.785", "--zoom", str(top), "-o", "layer.png", cwd=d)
        check("stitch writes the image, a world file and the sidecar", stitched.returncode == 0 and all(
            os.path.exists(os.path.join(d, f)) for f in ("layer.png", "layer.pgw", "layer.json")), stitched.stderr)
        info = run("gdalinfo", "layer.png", cwd=d).stdout
        check("GDAL reads the stitched image's georeference", "Pixel Size" in info and "Origin" in info, info[:300])
        before = mbtiles(os.path.join(d, "bounds.mbtiles"))
        same = run(tilekit, "split", "layer.png", "--out", "bounds.mbtiles", "--json", cwd=d)
        check("split without edits: nothing changes, bit for bit", '"changed":0' in same.stdout and mbtiles(os.path.join(d, "bounds.mbtiles")) == before, same.stdout + same.stderr)
        image = Image.open(os.path.join(d, "layer.png")).convert("RGBA")
        ImageDraw.Draw(image).ellipse((40, 40, 200, 200), fill=(200, 30, 30, 255))
        image.save(os.path.join(d, "layer.png"))
        edited = run(tilekit, "split", "layer.png", "--out", "bounds.mbtiles", "--rebuild-parents", "--json", cwd=d)
        after = mbtiles(os.path.join(d, "bounds.mbtiles"))
        changed = {k for k in after if before.get(k) != after[k]}
        top_changed = {k for k in changed if k[0] == top}
        # Every changed tile below the top zoom is an ancestor of a changed top tile.
        def ancestors(k):
            z, x, row = k
            y = (1 << z) - 1 - row
            out = set()
            while z > 0:
                z, x, y = z - 1, x // 2, y // 2
                out.add((z, x, (1 << z) - 1 - y))
            return out
        allowed = set().union(*(ancestors(k) for k in top_changed)) if top_changed else set()
        check(f"an edit changes only its tiles ({len(top_changed)}) and their ancestors ({len(changed) - len(top_changed)})",
              edited.returncode == 0 and 0 < len(top_changed) <= 4 and changed - top_changed <= allowed and len(changed - top_changed) > 0, edited.stdout + edited.stderr)

        # Bad input.
        with open(os.path.join(d, "broken.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
        bad = run(tilekit, "pyramid", "broken.png", "--bounds", BOUNDS, "--out", "x.mbtiles", cwd=d)
        check("a corrupt image: exit 65 naming it", bad.returncode == 65 and "broken.png" in bad.stderr, bad.stderr)
        Image.open(os.path.join(d, "park.png")).convert("RGB").save(os.path.join(d, "park.jpg"), quality=90)
        with open(os.path.join(d, "park.jpg"), "rb") as f:
            head = f.read(40_000)
        with open(os.path.join(d, "truncated.jpg"), "wb") as f:
            f.write(head)
        bad = run(tilekit, "pyramid", "truncated.jpg", "--bounds", BOUNDS, "--out", "x.mbtiles", cwd=d)
        check("a truncated JPEG (libjpeg only warns): exit 65 naming it and why", bad.returncode == 65 and "truncated.jpg" in bad.stderr
              and "Premature end" in bad.stderr, bad.stderr)
        bad = run(tilekit, "pyramid", "park.png", "--bounds", "-73.98,40.80,-73.94,40.76", "--out", "x.mbtiles", cwd=d)
        check("south above north: exit 64 saying so", bad.returncode == 64 and "south" in bad.stderr, bad.stderr)
        with open(os.path.join(d, "park.pgw"), "w") as f:
            f.write("0.00001\n0\n0\nminus\n-73.98\n40.80\n")
        bad = run(tilekit, "pyramid", "park.png", "--out", "x.mbtiles", cwd=d)
        check("a broken world file: exit 65 naming the file and line", bad.returncode == 65 and "park.pgw: line 4" in bad.stderr, bad.stderr)
        os.remove(os.path.join(d, "park.pgw"))
        bad = run(tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--zoom", "10-31", "--out", "x.mbtiles", cwd=d)
        check("zoom 31: exit 64", bad.returncode == 64 and "31" in bad.stderr, bad.stderr)
        check("no store is left by any of them", not any(n.startswith("x.") or n.startswith(".x.") for n in os.listdir(d)), os.listdir(d))
        tiny = os.path.join(d, "tiny")
        os.mkdir(tiny)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", tiny], capture_output=True).returncode == 0:
            try:
                full_disk = run(tilekit, "pyramid", "park.png", "--bounds", BOUNDS, "--out", os.path.join(tiny, "park.mbtiles"), "--quiet", cwd=d)
                check("a full disk: exit 74 with the reason, no final store", full_disk.returncode == 74 and "no space left on device" in full_disk.stderr
                      and not os.path.exists(os.path.join(tiny, "park.mbtiles")), full_disk.stderr)
            finally:
                subprocess.run(["umount", tiny])
        else:
            print("skip a full disk (cannot mount a small tmpfs here)")
    return summary("pyramid")


if __name__ == "__main__":
    sys.exit(main())
