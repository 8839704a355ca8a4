#!/usr/bin/env python3
"""`make bench`: TileKit beside reference tools on the same machine in the same run,
printing ratios (the machine is noisy: compare ratios, not absolute times).

Codecs: 256 px tiles cut from the sample map, encoded on one core by TileKit (libpng,
TurboJPEG, libwebp through Canvas) and by Pillow (the same zlib, libjpeg-turbo and libwebp
underneath, through Python), with matching settings.
"""
import io
import json
import subprocess
import sys
import tempfile
import time

from PIL import Image

RELEASE = ".build/release"
SECONDS = 2.0


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


def main():
    with tempfile.TemporaryDirectory() as directory:
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
        print(f"Codecs: {len(tiles)} tiles of 256 px from the sample map, one core, {SECONDS:.0f} s each")
        print(f"{'setting':24} {'TileKit t/s':>12} {'Pillow t/s':>11} {'ratio':>6} {'TileKit B':>10} {'Pillow B':>9}")
        for name, save in pillow.items():
            rate, size = pillow_rate(tiles, save)
            mine = ours[name]
            print(f"{name:24} {mine['tiles_per_second']:12.0f} {rate:11.0f} {mine['tiles_per_second'] / rate:6.2f}"
                  f" {mine['mean_bytes']:10d} {size:9d}")
        print("(Pillow's PNG writer picks its own filters; TileKit's level 1-2 rows use no filter.)")


if __name__ == "__main__":
    sys.exit(main())
