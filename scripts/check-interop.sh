#!/usr/bin/env bash
# Interop with the reference tools, on real files: gdal2tiles writes folders in both
# schemes, GDAL and mb-util read TileKit's MBTiles, the pmtiles package reads TileKit's
# PMTiles and TileKit reads the package's, and every URL template in the xyzservices
# catalogue expands as xyzservices expands it. Ends with "interop: N passed, N failed".
#   scripts/check-interop.sh .build/debug/tilekit
set -uo pipefail
tilekit=$(realpath "${1:-.build/debug/tilekit}")
scripts=$(realpath "$(dirname "$0")")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
passed=0 failed=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  if "$@" >"$work/last.log" 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name"; tail -5 "$work/last.log"; fi
}

# A georeferenced image over Central Park, tiled by gdal2tiles in TMS (default) and XYZ.
"$tilekit" sample -o map.png --size 1024x768 >/dev/null
gdal_translate -q -of GTiff -a_srs EPSG:4326 -a_ullr -73.9765 40.7695 -73.9680 40.7625 map.png geo.tif
gdal2tiles.py -q -z 14-17 --processes=2 geo.tif tms >/dev/null 2>&1
gdal2tiles.py -q -z 14-17 --processes=2 --xyz geo.tif xyz >/dev/null 2>&1

# Both gdal2tiles folders hold the same tiles once their row order is understood.
check "gdal2tiles TMS folder detected" bash -c "'$tilekit' info tms | grep -q '\"scheme\" : \"tms\"'"
check "gdal2tiles XYZ folder detected" bash -c "'$tilekit' info xyz | grep -q '\"scheme\" : \"xyz\"'"
"$tilekit" convert tms from-tms.pmtiles --quiet && "$tilekit" convert xyz from-xyz.pmtiles --quiet
check "TMS and XYZ folders give the same tiles" python3 - <<'PY'
from pmtiles.reader import Reader, MmapSource
def all_tiles(path):
    with open(path, "rb") as f:
        return {(z, x, y): data for (z, x, y), data in all_entries(Reader(MmapSource(f)))}
def all_entries(reader):
    from pmtiles.reader import all_tiles
    return list(all_tiles(reader.get_bytes))
a, b = all_tiles("from-tms.pmtiles"), all_tiles("from-xyz.pmtiles")
assert len(a) > 20 and a == b, (len(a), len(b))
PY

# GDAL and mb-util read TileKit's MBTiles.
"$tilekit" convert xyz park.mbtiles --quiet
check "gdalinfo reads TileKit MBTiles" bash -c "gdalinfo park.mbtiles | grep -q 'Driver: MBTiles' && gdalinfo park.mbtiles | grep -q 'ZOOM_LEVEL=17'"
check "gdal_translate renders TileKit MBTiles" gdal_translate -q -of PNG park.mbtiles rendered.png
mb-util park.mbtiles mbutil-out >/dev/null 2>&1
check "mb-util exports TileKit MBTiles byte for byte" bash -c "cd xyz && for f in \$(find . -name '*.png'); do cmp -s \$f ../mbutil-out/\$f || exit 1; done; [ \$(find ../mbutil-out -name '*.png' | wc -l) -eq \$(find . -name '*.png' | wc -l) ]"

# The pmtiles package reads TileKit's PMTiles, and TileKit reads the package's.
"$tilekit" convert xyz park.pmtiles --quiet
check "pmtiles reads TileKit PMTiles" python3 - <<'PY'
import os
from pmtiles.reader import Reader, MmapSource
with open("park.pmtiles", "rb") as f:
    r = Reader(MmapSource(f))
    n = 0
    for root, _, files in os.walk("xyz"):
        for name in files:
            if name.endswith(".png"):
                z, x = map(int, root.split("/")[-2:])
                assert r.get(z, x, int(name[:-4])) == open(os.path.join(root, name), "rb").read(), (z, x, name)
                n += 1
    assert n > 20 and r.header()["addressed_tiles_count"] == n
PY
python3 - <<'PY'
import os
from pmtiles.writer import Writer
from pmtiles.tile import zxy_to_tileid, TileType, Compression
tiles = []
for root, _, files in os.walk("xyz"):
    for name in files:
        if name.endswith(".png"):
            z, x = map(int, root.split("/")[-2:])
            tiles.append((zxy_to_tileid(z, x, int(name[:-4])), open(os.path.join(root, name), "rb").read()))
with open("python.pmtiles", "wb") as f:
    w = Writer(f)
    for tile_id, data in sorted(tiles):
        w.write_tile(tile_id, data)
    w.finalize({"tile_type": TileType.PNG, "tile_compression": Compression.NONE, "min_zoom": 14, "max_zoom": 17,
                "min_lon_e7": -739765000, "min_lat_e7": 407625000, "max_lon_e7": -739680000, "max_lat_e7": 407695000,
                "center_zoom": 15, "center_lon_e7": -739722500, "center_lat_e7": 407660000}, {"name": "from python"})
PY
"$tilekit" convert python.pmtiles from-python --quiet
check "TileKit reads pmtiles' PMTiles" bash -c "cd xyz && for f in \$(find . -name '*.png'); do cmp -s \$f ../from-python/\$f || exit 1; done && '$tilekit' info ../python.pmtiles | grep -q 'from python'"

# Every template of the xyzservices catalogue expands as xyzservices expands it.
check "xyzservices catalogue expands identically" python3 - "$tilekit" <<'PY'
import subprocess, sys
import xyzservices.providers as xyz
tilekit = sys.argv[1]
count = 0
for name, provider in xyz.flatten().items():
    subdomains = provider.get("subdomains", "abc")
    n = len(subdomains)
    z, y = 10, 345
    x = ((n - y % n) % n) + n * 37           # (x + y) % n == 0: Leaflet's choice is the first subdomain
    variables = {k: str(v) for k, v in provider.items()
                 if k not in ("url", "subdomains", "attribution", "html_attribution", "name", "bounds") and isinstance(v, (str, int, float))}
    for token in ("apikey", "apiKey", "accessToken", "key", "subscriptionKey"):
        if "{" + token + "}" in provider["url"] and not variables.get(token) or variables.get(token, "").startswith("<"):
            variables[token] = "TOKEN"
    args = [tilekit, "url", provider["url"], f"{z}/{x}/{y}", "--subdomains", ",".join(subdomains) if not isinstance(subdomains, str) or len(subdomains) > 0 else "abc"]
    if isinstance(subdomains, str):
        args[-1] = subdomains
    for k, v in variables.items():
        args += ["--var", f"{k}={v}"]
    got = subprocess.run(args, capture_output=True, text=True)
    expected = provider.build_url(x=x, y=y, z=z, **{k: v for k, v in variables.items() if k in ("apikey", "apiKey", "accessToken", "key", "subscriptionKey")})
    if got.returncode != 0 or got.stdout.strip() != expected:
        print(name, provider["url"], "\n  tilekit:", got.stdout.strip() or got.stderr.strip(), "\n  xyzservices:", expected)
        sys.exit(1)
    count += 1
print(count, "templates")
assert count > 900
PY
# Seeding from a real server into MBTiles and PMTiles (run with the release binary by
# `make test`: a release-only miscompile once delivered corrupted tile ids here).
python3 "$scripts/test-tile-server.py" --until-killed > port.txt 2>/dev/null </dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 50); do [ -s port.txt ] && break; sleep 0.1; done
port=$(head -1 port.txt)
box=-74.02,40.70,-73.93,40.80
"$tilekit" tile list --bbox $box --zoom 10-15 | sort > expected.txt
for out in seeded.mbtiles seeded.pmtiles; do
  "$tilekit" seed --source "http://127.0.0.1:$port/tiles/{z}/{x}/{y}.png" --bbox $box --zoom 10-15 --out $out \
    --concurrency 4 --rate 1000 --quiet >/dev/null 2>&1
  "$tilekit" convert $out "folder-${out/./-}" --quiet
  check "seed into $out holds exactly the region's tiles" bash -c "cd 'folder-${out/./-}' && find . -name '*.png' | sed 's|^./||; s|.png$||' | sort | diff - ../expected.txt"
  check "seed into $out keeps the server's bytes" bash -c "cd 'folder-${out/./-}' && for f in \$(head -3 ../expected.txt); do curl -sf http://127.0.0.1:$port/tiles/\$f.png | cmp -s - \$f.png || exit 1; done"
done

# A tile-only snapshot equals what staticmap (PyPI) draws for the same request, both
# fetching from the test server (tile edges show any misplacement by a pixel).
for view in "-73.9712,40.7831,13,600x400" "139.6917,35.6895,11,320x240" "179.9,-16.5,6,500x300"; do
  IFS=, read -r lon lat zoom size <<< "$view"
  "$tilekit" snapshot --base "http://127.0.0.1:$port/tiles/{z}/{x}/{y}.png" --center "$lon,$lat" --zoom "$zoom" --size "$size" \
    --attribution none -o "snap-$zoom.png" >/dev/null 2>&1
  check "snapshot at $lon,$lat z$zoom $size matches staticmap" python3 - "$port" "$lon" "$lat" "$zoom" "$size" "snap-$zoom.png" <<'PY'
import sys
from PIL import Image, ImageChops
from staticmap import StaticMap
port, lon, lat, zoom, size, ours = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
width, height = map(int, size.split("x"))
reference = StaticMap(width, height, url_template=f"http://127.0.0.1:{port}/tiles/{{z}}/{{x}}/{{y}}.png").render(zoom=zoom, center=[lon, lat]).convert("RGB")
mine = Image.open(ours).convert("RGB")
assert mine.size == reference.size, (mine.size, reference.size)
difference = ImageChops.difference(mine, reference)
worst = max(high for _, high in difference.getextrema())
assert worst <= 2, f"largest channel difference {worst}"
PY
done

echo "interop: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
