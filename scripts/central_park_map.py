"""The central-park example's base map, zoom by zoom: what is drawn at each zoom from 13 to 18,
in which hand-drawn style, simplified to that zoom. Used by prepare-examples.py.

Sources (Examples/central-park/DATA.md says more):
- OpenStreetMap (the quackosm sdist's extract): the park outline, and everything around
  Columbus Circle (buildings, footways, steps, cycleways, gardens, fountains);
- Examples/central-park/sketch.json: the park's landmarks traced by hand in park-grid
  coordinates, where the extract has nothing;
- the street grid around the park, generated from the 1811 Commissioners' Plan geometry
  (streets 20 to the mile, the avenues' spacing) and anchored on the park's real corners.

Each zoom's features are simplified with Douglas-Peucker at half a pixel of that zoom, and
areas smaller than a few pixels are left out, so no sub-pixel detail is drawn (z13 draws
fewer kinds, and keeps about 3 in 4 of their vertices; the street blocks, 4 corners each,
are most of what is left).
"""
import json
import math
import random

# Half a pixel at the zoom drawn: a vertex closer than this to the simplified line can't be seen.
TOLERANCE_PX = 0.5
# Areas under this many square pixels are dropped at that zoom (a speck, not a shape).
MIN_AREA_PX = 6.0
ZOOMS = range(13, 19)

INK, SEPIA, PAPER = "#4a3520", "#8a5a2b", "#f4e8c8"


def ordinal(n):
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class ParkGrid:
    """Park-grid coordinates [street, across] to [lon, lat]: street is the Manhattan cross-street
    number (59 on the park's south edge, 110 on its north edge), across 0 on Central Park West and
    1 on Fifth Avenue; outside those ranges the same affine grid goes on into the city.
    Anchored on the park's four corners, taken from its real outline."""

    AXIS_DEGREES = 29.0  # Manhattan's grid runs 29 degrees east of true north

    def __init__(self, outline):
        ring = outline[0][0] if isinstance(outline[0][0][0], list) else outline[0]
        self.lat0 = sum(p[1] for p in ring) / len(ring)
        self.kx, self.ky = math.cos(math.radians(self.lat0)) * 111320.0, 110540.0
        # The grid's angle (about 29 degrees) fitted to the outline: the angle whose
        # bounding rectangle is smallest.
        def frame(degrees):
            t = math.radians(degrees)
            return (math.sin(t), math.cos(t)), (math.cos(t), -math.sin(t))
        def area(degrees):
            (a0, a1), (b0, b1) = frame(degrees)
            pa = [p[0] * self.kx * a0 + p[1] * self.ky * a1 for p in ring]
            pb = [p[0] * self.kx * b0 + p[1] * self.ky * b1 for p in ring]
            return (max(pa) - min(pa)) * (max(pb) - min(pb))
        self.degrees = min((self.AXIS_DEGREES + k / 20.0 for k in range(-40, 41)), key=area)
        along, across = frame(self.degrees)
        a = lambda p: p[0] * self.kx * along[0] + p[1] * self.ky * along[1]
        b = lambda p: p[0] * self.kx * across[0] + p[1] * self.ky * across[1]
        # The park is a rectangle of the grid: its sides are the extremes of the outline along
        # and across the grid (its corners are rounded or cut, at Columbus Circle and Grand
        # Army Plaza, so no vertex of the outline is a corner).
        south, north = min(map(a, ring)), max(map(a, ring))
        west, east = min(map(b, ring)), max(map(b, ring))
        def corner(pa, pb):
            x = (pa * along[0] + pb * across[0]) / self.kx
            y = (pa * along[1] + pb * across[1]) / self.ky
            return [x, y]
        self.sw, self.se, self.nw, self.ne = corner(south, west), corner(south, east), corner(north, west), corner(north, east)
        self.width_m = math.hypot((self.se[0] - self.sw[0]) * self.kx, (self.se[1] - self.sw[1]) * self.ky)
        self.length_m = math.hypot((self.nw[0] - self.sw[0]) * self.kx, (self.nw[1] - self.sw[1]) * self.ky)

    def point(self, street, across):
        u, v = (street - 59.0) / 51.0, across
        south = [self.sw[i] + v * (self.se[i] - self.sw[i]) for i in (0, 1)]
        north = [self.nw[i] + v * (self.ne[i] - self.nw[i]) for i in (0, 1)]
        return [round(south[i] + u * (north[i] - south[i]), 7) for i in (0, 1)]

    def across(self, meters):
        """Meters east of Central Park West's curb, as an `across` value."""
        return meters / self.width_m

    def street(self, n):
        """The centre line of cross street n, as a `street` value: 59th and 110th run just
        outside the park's edges (half a 100-ft street beyond), the others evenly between."""
        half = 15.0 / self.length_m * 51.0
        return (59.0 - half) + (n - 59) * (51.0 + 2 * half) / 51.0


# ---------------------------------------------------------------------------------------------
# The street grid around the park


def street_grid(grid, first=55, last=115):
    """Streets, avenues and the blocks between them, each named, around the park."""
    a = grid.across
    cpw, fifth = a(-15), 1 + a(15)
    # Avenue centre lines (meters from the park's curbs): east of Fifth, Madison and
    # Lexington were cut into the 1811 plan's wide blocks, so the spacing is uneven.
    east = [("Fifth Avenue", fifth), ("Madison Avenue", 1 + a(170)), ("Park Avenue", 1 + a(326)),
            ("Lexington Avenue", 1 + a(465)), ("Third Avenue", 1 + a(637))]
    west = [("Central Park West", cpw), ("Columbus Avenue", a(-289)), ("Amsterdam Avenue", a(-563))]
    # The grid's own edges: half a block beyond the last avenue each side.
    west_edge, east_edge = a(-563 - 90), east[-1][1] + a(90)
    # North of the park and south of it, the avenues go on across the park's width.
    harlem = [("Frederick Douglass Boulevard", cpw), ("Adam Clayton Powell Jr. Boulevard", 0.31), ("Malcolm X Boulevard", 0.655)]
    midtown = [("Eighth Avenue", cpw), ("Seventh Avenue", 0.31), ("Avenue of the Americas", 0.625)]
    s59, s110 = grid.street(59), grid.street(110)
    out = []

    def line(kind, title, points, **extra):
        out.append({"kind": kind, "title": title, "geometry": {"type": "LineString", "coordinates": [grid.point(s, f) for s, f in points]}, **extra})

    # Avenues along their whole length in the frame; those along the park keep their names.
    for name, f in east[1:] + west[1:]:
        line("avenue", name, [(grid.street(first), f), (grid.street(last), f)])
    line("avenue", "Fifth Avenue", [(grid.street(first), fifth), (grid.street(last), fifth)])
    line("avenue", "Central Park West", [(s59, cpw), (s110, cpw)])
    for name, f in midtown:
        line("avenue", name, [(grid.street(first), f), (s59, f)])
    for name, f in harlem:
        line("avenue", name, [(s110, f), (grid.street(last), f)])
    # Broadway: from Columbus Circle it cuts north-west across the grid to Amsterdam Avenue
    # at 72nd Street (the grid's edge here).
    # South of the circle it runs between Eighth and Seventh Avenues toward Times Square.
    line("avenue", "Broadway", [(grid.street(first) - 0.6, 0.1), (s59, cpw), (grid.street(65.5), a(-289)),
                                (grid.street(72.5), a(-563)), (grid.street(74), west_edge)])
    # Cross streets, each side of the park (across it where the park isn't).
    for n in range(first, last + 1):
        s = grid.street(n)
        major = n in (57, 59, 72, 79, 86, 96, 106, 110, 116)
        kind = "major-street" if major else "street"
        if n < 59 or n > 110:
            line(kind, f"West {ordinal(n)} Street", [(s, west_edge), (s, fifth)])
            line(kind, f"East {ordinal(n)} Street", [(s, fifth), (s, east_edge)])
        elif n == 59:
            line(kind, "Central Park South", [(s, cpw), (s, fifth)])
            line(kind, "West 59th Street", [(s, west_edge), (s, cpw)])
            line(kind, "East 59th Street", [(s, fifth), (s, east_edge)])
        elif n == 110:
            line(kind, "Central Park North", [(s, cpw), (s, fifth)])
            line(kind, "West 110th Street", [(s, west_edge), (s, cpw)])
            line(kind, "East 110th Street", [(s, fifth), (s, east_edge)])
        else:
            line(kind, f"West {ordinal(n)} Street", [(s, west_edge), (s, cpw)])
            line(kind, f"East {ordinal(n)} Street", [(s, fifth), (s, east_edge)])

    # Blocks: the land between street centre lines, less half of each street's width.
    def blocks_between(columns, n0, n1):
        for n in range(n0, n1):
            for (_, f0), (_, f1) in zip(columns, columns[1:]):
                w, e = min(f0, f1), max(f0, f1)
                inset_ns = lambda k: (15.0 if k in (57, 59, 72, 79, 86, 96, 106, 110, 116) else 9.0) / grid.length_m * 51.0
                s0, s1 = grid.street(n) + inset_ns(n), grid.street(n + 1) - inset_ns(n + 1)
                w, e = w + a(15), e - a(15)
                if e - w <= 0 or s1 - s0 <= 0:
                    continue
                ring = [(s0, w), (s0, e), (s1, e), (s1, w), (s0, w)]
                out.append({"kind": "block", "geometry": {"type": "Polygon", "coordinates": [[grid.point(s, f) for s, f in ring]]}})

    far_west = [("", west_edge)] + list(reversed(west))
    blocks_between(far_west, first, 59)
    blocks_between(far_west, 59, 110)
    blocks_between(far_west, 110, last)
    blocks_between(east + [("", east_edge)], first, last)
    blocks_between([west[0]] + midtown[1:] + [east[0]], first, 59)
    blocks_between([west[0]] + harlem[1:] + [east[0]], 110, last)
    return out


# ---------------------------------------------------------------------------------------------
# The hand-traced sketch and the OpenStreetMap extract


def chaikin(points, closed, rounds=2):
    """Corner cutting: a hand-traced polygon of a dozen points becomes a pen's curve."""
    for _ in range(rounds):
        pts = points[:-1] if closed else points
        out = [] if closed else [pts[0]]
        pairs = zip(pts, pts[1:] + pts[:1]) if closed else zip(pts, pts[1:])
        for p, q in pairs:
            out.append([0.75 * p[0] + 0.25 * q[0], 0.75 * p[1] + 0.25 * q[1]])
            out.append([0.25 * p[0] + 0.75 * q[0], 0.25 * p[1] + 0.75 * q[1]])
        if closed:
            out.append(out[0])
        else:
            out.append(pts[-1])
        points = out
    return points


def grown(ring, meters, grid):
    """A ring pushed out from its centre by about `meters` (a path around a lake)."""
    pts = ring[:-1]
    cs = sum(p[0] for p in pts) / len(pts), sum(p[1] for p in pts) / len(pts)
    # Park-grid units to meters: a street is length/51 m, `across` is width m.
    ms, mf = grid.length_m / 51.0, grid.width_m
    out = []
    for s, f in pts:
        ds, df = (s - cs[0]) * ms, (f - cs[1]) * mf
        r = math.hypot(ds, df) or 1.0
        k = (r + meters) / r
        out.append([cs[0] + ds * k / ms, cs[1] + df * k / mf])
    return out + out[:1]


SMOOTH = {"water", "woods", "meadow", "garden", "drive", "transverse", "bridleway", "footway", "track", "stream", "zoo", "rink"}


def sketch_features(grid, sketch):
    rings = {f["title"]: f["ring"] for f in sketch["features"] if "ring" in f and "title" in f}
    out = []
    for f in sketch["features"]:
        kind, title = f["kind"], f.get("title")
        smooth = kind in SMOOTH
        if "ring" in f:
            ring = f["ring"] + f["ring"][:1]
            ring = chaikin(ring, True) if smooth else ring
            geometry = {"type": "Polygon", "coordinates": [[grid.point(s, a) for s, a in ring]]}
        elif "around" in f:
            ring = chaikin(grown(rings[f["around"]] + rings[f["around"]][:1], f["grow"], grid), True)
            geometry = {"type": "LineString", "coordinates": [grid.point(s, a) for s, a in ring]}
        elif "line" in f:
            line = chaikin(f["line"], False) if smooth else f["line"]
            geometry = {"type": "LineString", "coordinates": [grid.point(s, a) for s, a in line]}
        else:
            geometry = {"type": "Point", "coordinates": grid.point(*f["point"])}
        feature = {"kind": kind, "geometry": geometry, "source": "sketch"}
        if title:
            feature["title"] = title
        if "radius" in f:
            feature["radius"] = f["radius"]
        if f.get("role"):
            feature["role"] = f["role"]
        out.append(feature)
    return out


def osm_features(osm):
    """What the OpenStreetMap extract has, by kind (its roads are left to the street grid,
    which carries the same streets over the whole frame)."""
    out = []
    for f in osm["features"]:
        p, g = f["properties"], f["geometry"]
        area = g["type"] in ("Polygon", "MultiPolygon")
        kind = None
        if area and ("building" in p or p.get("tourism") == "museum"):
            kind = "building"
        elif area and p.get("leisure") == "garden":
            kind = "garden"
        elif area and (p.get("natural") == "water" or p.get("amenity") == "fountain"):
            kind = "water"
        elif area and p.get("highway") == "pedestrian":
            kind = "plaza"
        elif g["type"] == "LineString" and p.get("tunnel") is None:
            kind = {"footway": "footway", "path": "footway", "pedestrian": "footway", "steps": "steps",
                    "cycleway": "cycleway", "bridleway": "bridleway"}.get(p.get("highway"))
            if kind == "footway" and p.get("footway") in ("sidewalk", "crossing"):
                kind = "sidewalk"
        if kind:
            feature = {"kind": kind, "geometry": g, "source": "osm"}
            if p.get("name"):
                feature["title"] = p["name"]
            out.append(feature)
    return out


def point_in_ring(x, y, ring):
    inside = False
    for (x0, y0), (x1, y1) in zip(ring, ring[1:]):
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            inside = not inside
    return inside


def trees(features, seed=1858):
    """Tree crowns dotted through the woods (seeded: the same every run), as a pen would draw
    a wood; none stand in water."""
    rng = random.Random(seed)
    woods = [f["geometry"]["coordinates"][0] for f in features if f["kind"] == "woods"]
    water = [f["geometry"]["coordinates"][0] for f in features if f["kind"] == "water" and f["geometry"]["type"] == "Polygon"]
    out = []
    for ring in woods:
        xs, ys = [p[0] for p in ring], [p[1] for p in ring]
        kx = math.cos(math.radians(ys[0])) * 111320.0
        area = abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(ring, ring[1:]))) / 2 * kx * 110540.0
        for _ in range(int(area / 420)):
            x, y = rng.uniform(min(xs), max(xs)), rng.uniform(min(ys), max(ys))
            if point_in_ring(x, y, ring) and not any(point_in_ring(x, y, w) for w in water):
                out.append({"kind": "tree", "geometry": {"type": "Point", "coordinates": [round(x, 7), round(y, 7)]},
                            "radius": round(rng.uniform(5.0, 8.5), 1)})
    return out


def lone_trees(features, outline, seed=1873, square_meters=600):
    """Single trees across the lawns, as park maps draw them: not in water, meadows,
    playgrounds or buildings, and not on a drive or path (12 m clear of one)."""
    rng = random.Random(seed)
    ring = outline[0][0]
    avoid = [f["geometry"]["coordinates"][0] for f in features
             if f["kind"] in ("water", "meadow", "woods", "playground", "building", "landmark", "zoo", "rink", "plaza", "garden")
             and f["geometry"]["type"] == "Polygon"]
    lat0 = sum(p[1] for p in ring) / len(ring)
    kx, ky = math.cos(math.radians(lat0)) * 111320.0, 110540.0
    cell = 12.0
    busy = set()
    for f in features:
        if f["kind"] in ("drive", "transverse", "footway", "bridleway", "track", "cycleway") and f["geometry"]["type"] == "LineString":
            for (x0, y0), (x1, y1) in zip(f["geometry"]["coordinates"], f["geometry"]["coordinates"][1:]):
                steps = max(1, int(math.hypot((x1 - x0) * kx, (y1 - y0) * ky) / 4))
                for i in range(steps + 1):
                    x, y = x0 + (x1 - x0) * i / steps, y0 + (y1 - y0) * i / steps
                    busy.add((int(x * kx // cell), int(y * ky // cell)))
    xs, ys = [p[0] for p in ring], [p[1] for p in ring]
    area = abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(ring, ring[1:]))) / 2 * kx * ky
    out = []
    for _ in range(int(area / square_meters)):
        x, y = rng.uniform(min(xs), max(xs)), rng.uniform(min(ys), max(ys))
        cx, cy = int(x * kx // cell), int(y * ky // cell)
        if any((cx + i, cy + j) in busy for i in (-1, 0, 1) for j in (-1, 0, 1)):
            continue
        if point_in_ring(x, y, ring) and not any(point_in_ring(x, y, r) for r in avoid):
            out.append({"kind": "lone-tree", "geometry": {"type": "Point", "coordinates": [round(x, 7), round(y, 7)]},
                        "radius": round(rng.uniform(4.0, 7.0), 1)})
    return out


# ---------------------------------------------------------------------------------------------
# Style: what each kind looks like at each zoom, in the parchment style of the map


def styles(kind, z):
    """The drawn features for one feature of `kind` at zoom z: a list of style property sets
    (a road is two: the ink casing, then the paper between); empty when not drawn at z."""
    wide = z - 13  # 0 at z13 ... 5 at z18
    ink = lambda w, **more: {"renderer": "wobbly", "stroke": INK, "stroke-width": w, **more}
    if kind == "park":
        return [{"fill": "#c9cf95", "fill-opacity": 0.75, "stroke-opacity": 0},
                ink(1.6 + 0.3 * wide)]
    if kind == "block":
        if z < 14:
            return [{"fill": "#dcc79c", "fill-opacity": 0.55, "stroke-opacity": 0}]
        fill = {"fill": "#dcc79c", "fill-opacity": 0.6, "stroke-opacity": 0}
        return [fill] if z < 16 else [fill, ink(0.7, **{"stroke": "#7a5a36", "stroke-opacity": 0.8})]
    if kind == "woods":
        return [{"fill": "#94ad6c", "fill-opacity": 0.75, "stroke": "#4f6b34", "stroke-width": 0.6, "stroke-opacity": 0.6}]
    if kind == "meadow":
        return [{"fill": "#bfcb85", "fill-opacity": 0.8, "stroke": "#6d7d3c", "stroke-width": 0.8, "stroke-dash": [2, 3]}]
    if kind == "garden":
        return [] if z < 14 else [{"fill": "#a9c07a", "fill-opacity": 0.8, "stroke": "#5d6b33", "stroke-width": 0.8}]
    if kind == "playground":
        return [] if z < 15 else [{"fill": "#ecd096", "fill-opacity": 0.9, "stroke": SEPIA, "stroke-width": 0.9, "stroke-dash": [3, 2]}]
    if kind == "zoo":
        return [] if z < 14 else [{"fill": "#e2c38e", "fill-opacity": 0.75, "stroke": INK, "stroke-width": 1.0, "stroke-dash": [4, 2]}]
    if kind == "rink":
        return [] if z < 15 else [{"fill": "#dfe9ec", "fill-opacity": 0.9, "stroke": "#35506b", "stroke-width": 1.0}]
    if kind == "plaza":
        return [] if z < 15 else [{"fill": "#eadcb8", "fill-opacity": 0.9, "stroke": SEPIA, "stroke-width": 0.6}]
    if kind == "water":
        return [{"renderer": "hatch", "fill": "#c6d9e0", "stroke": "#35506b", "stroke-width": 1.2 + 0.15 * wide}]
    if kind == "fountain":
        return [] if z < 16 else [{"fill": "#c6d9e0", "fill-opacity": 1, "stroke": "#35506b", "stroke-width": 1.2}]
    if kind == "stream":
        return [] if z < 15 else [ink(1.2 + 0.3 * wide, stroke="#35506b")]
    if kind == "avenue":
        return [ink(0.9 + 0.35 * wide, **{"stroke": "#6b4a2b", "stroke-opacity": 0.85})]
    if kind == "major-street":
        return [] if z < 14 else [ink(0.6 + 0.25 * wide, **{"stroke": "#6b4a2b", "stroke-opacity": 0.6})]
    if kind == "street":
        # Streets show as the paper between blocks; the line is there for its name.
        return [] if z < 15 else [{"stroke": PAPER, "stroke-width": 0.5, "stroke-opacity": 0.0}]
    if kind in ("drive", "transverse"):
        # A drive is about 10 m wide: its width doubles with each zoom from z15, as the
        # ground does, so it reads as a road beside the footpaths.
        casing = {13: 1.7, 14: 2.3, 15: 4.0, 16: 6.0, 17: 9.0, 18: 14.0}[z] * (1.0 if kind == "drive" else 0.85)
        if z < 15:
            return [ink(casing)]
        return [ink(casing), {"renderer": "wobbly", "stroke": "#ead9ad", "stroke-width": casing - 2.0}]
    if kind == "bridleway":
        return [] if z < 14 else [ink(1.0 + 0.25 * wide, stroke="#7a4a2a", **{"stroke-dash": [1, 3.5]})]
    if kind == "track":
        return [] if z < 15 else [ink(1.0 + 0.2 * wide, stroke="#9c6b3c", **{"stroke-dash": [6, 2, 1, 2]})]
    if kind == "footway":
        return [] if z < 15 else [ink(0.9 + 0.2 * wide, stroke=SEPIA, **{"stroke-dash": [5, 3]})]
    if kind == "sidewalk":
        return [] if z < 17 else [ink(0.7, stroke=SEPIA, **{"stroke-dash": [2, 2], "stroke-opacity": 0.7})]
    if kind == "cycleway":
        return [] if z < 15 else [ink(1.0 + 0.2 * wide, stroke="#2f6b57", **{"stroke-dash": [7, 2]})]
    if kind == "steps":
        return [] if z < 16 else [{"stroke": INK, "stroke-width": 1.2 + 0.4 * wide, "stroke-dash": [0.5, 2.2 + 0.4 * wide]}]
    if kind == "bridge":
        return [] if z < 15 else [{"stroke": INK, "stroke-width": 3.4 + 0.9 * wide}, {"stroke": "#efe0b8", "stroke-width": 1.8 + 0.9 * wide}]
    if kind == "landmark":
        return [] if z < 14 else [{"fill": "#c9a877", "fill-opacity": 0.95, "stroke": INK, "stroke-width": 1.1}]
    if kind == "building":
        return [] if z < 15 else [{"fill": "#d8c49a", "fill-opacity": 0.95, "stroke": INK, "stroke-width": 0.8}]
    if kind == "lone-tree":
        return [] if z < 17 else [{"fill": "#7f9c58", "fill-opacity": 0.7, "stroke": "#3f5a2a", "stroke-width": 0.7}]
    if kind == "tree":
        return [] if z < 16 else [{"fill": "#6f8f4c", "fill-opacity": 0.8, "stroke": "#3f5a2a", "stroke-width": 0.7}]
    return []


# Drawing order, bottom to top.
ORDER = ["block", "park", "woods", "meadow", "garden", "playground", "zoo", "rink", "plaza", "water", "fountain",
         "stream", "tree", "lone-tree", "street", "major-street", "avenue", "sidewalk", "bridleway", "track", "footway", "cycleway",
         "steps", "transverse", "drive", "bridge", "building", "landmark"]


# ---------------------------------------------------------------------------------------------
# Simplification to the zoom


def pixel(lon, lat, z):
    """Web Mercator world pixels at zoom z (256-pixel tiles)."""
    size = 256.0 * 2 ** z
    s = math.sin(math.radians(max(-85.05, min(85.05, lat))))
    return ((lon + 180.0) / 360.0 * size, (0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)) * size)


def douglas_peucker(points, pixels, tolerance):
    """Indices of the points kept (iterative, so long lines can't overflow the stack)."""
    keep = [False] * len(points)
    keep[0] = keep[-1] = True
    stack = [(0, len(points) - 1)]
    while stack:
        i, j = stack.pop()
        (x0, y0), (x1, y1) = pixels[i], pixels[j]
        dx, dy = x1 - x0, y1 - y0
        norm = math.hypot(dx, dy)
        best, index = -1.0, None
        for k in range(i + 1, j):
            x, y = pixels[k]
            d = abs(dy * (x - x0) - dx * (y - y0)) / norm if norm > 0 else math.hypot(x - x0, y - y0)
            if d > best:
                best, index = d, k
        if index is not None and best > tolerance:
            keep[index] = True
            stack += [(i, index), (index, j)]
    return [p for p, k in zip(points, keep) if k]


def simplify(geometry, z):
    """The geometry as drawn at zoom z, or None when it is too small to see there."""
    def line(coords, closed):
        px = [pixel(x, y, z) for x, y in coords]
        if closed:
            area = abs(sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(px, px[1:]))) / 2
            if area < MIN_AREA_PX:
                return None
        else:
            length = sum(math.hypot(x1 - x0, y1 - y0) for (x0, y0), (x1, y1) in zip(px, px[1:]))
            if length < 1.5:
                return None
        kept = douglas_peucker(coords, px, TOLERANCE_PX)
        if closed and len(kept) < 4:
            return None
        return kept

    t = geometry["type"]
    if t == "Point":
        return geometry
    if t == "LineString":
        c = line(geometry["coordinates"], False)
        return c and {"type": t, "coordinates": c}
    if t == "Polygon":
        rings = [line(r, True) for r in geometry["coordinates"]]
        if rings[0] is None:
            return None
        return {"type": t, "coordinates": [r for r in rings if r]}
    if t == "MultiPolygon":
        polygons = []
        for p in geometry["coordinates"]:
            rings = [line(r, True) for r in p]
            if rings[0]:
                polygons.append([r for r in rings if r])
        return polygons and {"type": t, "coordinates": polygons}
    return geometry


def vertices(geometry):
    c = geometry["coordinates"]
    while isinstance(c, list) and c and isinstance(c[0], list) and isinstance(c[0][0], list):
        c = [p for part in c for p in part]
    return 1 if geometry["type"] == "Point" else len(c)


def layers(features):
    """{zoom: [GeoJSON features as drawn]} and per-zoom counts: features, vertices, names."""
    by_kind = sorted(features, key=lambda f: ORDER.index(f["kind"]))
    out, stats = {}, {}
    for z in ZOOMS:
        drawn, named, count_vertices = [], set(), 0
        for f in by_kind:
            looks = styles(f["kind"], z)
            if not looks:
                continue
            geometry = simplify(f["geometry"], z)
            if not geometry:
                continue
            for i, look in enumerate(looks):
                props = dict(look)
                # The name goes on the last stroke only, so a road is one label, not two.
                if f.get("title") and i == len(looks) - 1:
                    props["title"] = f["title"]
                    named.add(f["title"])
                if "radius" in f:
                    props["radius"] = f["radius"]
                props["kind"] = f["kind"]
                drawn.append({"type": "Feature", "geometry": geometry, "properties": props})
                count_vertices += vertices(geometry)
        out[z] = drawn
        stats[z] = {"features": len(drawn), "vertices": count_vertices, "named": len(named)}
    return out, stats


def build(osm, sketch, park_outline):
    """Every source feature of the base map, by kind, before styling."""
    grid = ParkGrid(park_outline)
    features = [{"kind": "park", "title": "Central Park", "geometry": {"type": "MultiPolygon", "coordinates": park_outline}
                 if isinstance(park_outline[0][0][0], list) else {"type": "Polygon", "coordinates": park_outline}}]
    features += street_grid(grid)
    sketched = sketch_features(grid, sketch)
    features += sketched + osm_features(osm) + trees(sketched)
    if isinstance(park_outline[0][0][0], list):
        features += lone_trees(features, park_outline)
    return grid, features


def load(path):
    with open(path) as f:
        return json.load(f)
