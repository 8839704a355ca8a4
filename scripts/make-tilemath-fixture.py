#!/usr/bin/env python3
"""Generates Tests/TileMathTests/Fixtures/reference.json: random cases answered by the
reference libraries, mercantile (tile math) and geographiclib (ellipsoidal geodesy, Karney's
algorithm), for TileKit's TileMath tests to agree with. Seeded, so it is reproducible:

    pip install mercantile==1.2.1 geographiclib==2.0
    python3 scripts/make-tilemath-fixture.py
"""
import json
import math
import random
import sys

import mercantile
from geographiclib.geodesic import Geodesic

rng = random.Random(20261129)
N = 1500


def rand_lnglat():
    return rng.uniform(-180, 180), rng.uniform(-85.05, 85.05)


def rand_tile(maxz=22):
    z = rng.randint(0, maxz)
    n = 2 ** z
    return mercantile.Tile(rng.randrange(n), rng.randrange(n), z)


cases = {"mercantile": mercantile.__version__, "tile": [], "bounds": [], "xy": [], "lnglat": [],
         "quadkey": [], "family": [], "tiles": [], "geodesic": [], "direct": []}

for _ in range(N):
    lng, lat = rand_lnglat()
    z = rng.randint(0, 28)
    t = mercantile.tile(lng, lat, z)
    cases["tile"].append([lng, lat, z, t.x, t.y])
# Corners of tiles: the epsilon at tile edges matters here.
for _ in range(300):
    t = rand_tile()
    ul = mercantile.ul(t)
    for z in (t.z, min(28, t.z + 3)):
        r = mercantile.tile(ul.lng, ul.lat, z)
        cases["tile"].append([ul.lng, ul.lat, z, r.x, r.y])

for _ in range(N):
    t = rand_tile(28)
    b = mercantile.bounds(t)
    m = mercantile.xy_bounds(t)
    cases["bounds"].append([t.z, t.x, t.y, b.west, b.south, b.east, b.north, m.left, m.bottom, m.right, m.top])

for _ in range(N):
    lng, lat = rand_lnglat()
    x, y = mercantile.xy(lng, lat)
    cases["xy"].append([lng, lat, x, y])
    mx, my = rng.uniform(-20037508.34, 20037508.34), rng.uniform(-20037508.34, 20037508.34)
    ll = mercantile.lnglat(mx, my)
    cases["lnglat"].append([mx, my, ll.lng, ll.lat])

for _ in range(N):
    t = rand_tile(28)
    cases["quadkey"].append([t.z, t.x, t.y, mercantile.quadkey(t)])

for _ in range(500):
    t = rand_tile(28)
    p = mercantile.parent(t)
    cases["family"].append({
        "tile": [t.z, t.x, t.y],
        "parent": [p.z, p.x, p.y] if p else None,
        "children": [[c.z, c.x, c.y] for c in mercantile.children(t)],
        "neighbors": [[c.z, c.x, c.y] for c in mercantile.neighbors(t)],
    })

boxes = []
for _ in range(400):
    w, s = rand_lnglat()
    span = 10 ** rng.uniform(-3, 1.5)
    e = w + span * rng.uniform(0.2, 2)
    if e > 180:
        e -= 360  # crosses the antimeridian
    n = min(85, s + span)
    boxes.append((w, s, e, n))
boxes += [(-180, -85.0511, 180, 85.0511), (170, -20, -170, 20), (179.9, -1, -179.9, 1),
          (-73.9817, 40.7644, -73.9493, 40.8003), (0, 0, 0, 0)]
for w, s, e, n in boxes:
    for z in range(0, 23):
        tiles = set(mercantile.tiles(w, s, e, n, [z]))
        if len(tiles) > 100000:
            break
        xs = sorted({t.x for t in tiles})
        runs = []  # contiguous column runs: two when the box crosses the antimeridian
        for x in xs:
            if runs and runs[-1][1] == x - 1:
                runs[-1][1] = x
            else:
                runs.append([x, x])
        ys = [t.y for t in tiles]
        # Every cover is a rectangle of rows over its column runs; the count checks that.
        cases["tiles"].append([w, s, e, n, z, len(tiles), runs, min(ys, default=-1), max(ys, default=-1)])

geod = Geodesic.WGS84
for _ in range(N):
    lng1, lat1 = rng.uniform(-180, 180), rng.uniform(-89.9, 89.9)
    if rng.random() < 0.5:  # nearby points, as games and overlays have them
        lng2, lat2 = lng1 + rng.uniform(-0.01, 0.01), max(-89.9, min(89.9, lat1 + rng.uniform(-0.01, 0.01)))
    else:
        lng2, lat2 = rng.uniform(-180, 180), rng.uniform(-89.9, 89.9)
    g = geod.Inverse(lat1, lng1, lat2, lng2)
    # Vincenty's iteration fails near the antipode; TileKit returns nil there. Mark those.
    antipodal = abs(abs(lng2 - lng1) - 180) < 2 and abs(lat1 + lat2) < 2
    cases["geodesic"].append([lng1, lat1, lng2, lat2, g["s12"], g["azi1"] % 360, antipodal])
for _ in range(N):
    lng1, lat1 = rng.uniform(-180, 180), rng.uniform(-89, 89)
    azi, dist = rng.uniform(0, 360), 10 ** rng.uniform(0, 7)
    g = geod.Direct(lat1, lng1, azi, dist)
    cases["direct"].append([lng1, lat1, azi, dist, g["lon2"], g["lat2"]])

json.dump(cases, sys.stdout if len(sys.argv) > 1 and sys.argv[1] == "-" else
          open("Tests/TileMathTests/Fixtures/reference.json", "w"), separators=(",", ":"))
