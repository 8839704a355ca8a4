#!/usr/bin/env python3
"""Cross-checks the `tilekit tile` commands against mercantile, live, on random inputs fed
through each command's stdin batch mode. Prints 'mercantile cross-check: N passed, N failed'
and exits non-zero on any disagreement.

    python3 scripts/check-cli-against-mercantile.py .build/debug/tilekit
"""
import json
import random
import subprocess
import sys

import mercantile

tilekit = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/tilekit"
rng = random.Random()
seed = rng.randrange(1 << 30)
rng.seed(seed)
passed = failed = 0


def run(args, lines):
    result = subprocess.run([tilekit, *args], input="\n".join(lines) + "\n", capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"tilekit {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result.stdout.splitlines()


def check(name, got, expected, close=False):
    global passed, failed
    ok = (abs(got - expected) < 1e-9) if close else got == expected
    if ok:
        passed += 1
    else:
        failed += 1
        if failed <= 10:
            print(f"MISMATCH {name}: tilekit {got!r}, mercantile {expected!r}")


def random_tile(maxz=28):
    z = rng.randint(0, maxz)
    return mercantile.Tile(rng.randrange(2 ** z), rng.randrange(2 ** z), z)


for zoom in (0, 1, 7, 15, 22, 28):
    points = [(rng.uniform(-180, 180), rng.uniform(-85.05, 85.05)) for _ in range(500)]
    for (lng, lat), line in zip(points, run(["tile", "at", "-", "--zoom", str(zoom)], [f"{a!r},{b!r}" for a, b in points])):
        got = json.loads(line)
        t = mercantile.tile(lng, lat, zoom)
        check(f"tile at {lng},{lat} z{zoom}", (got["z"], got["x"], got["y"]), (t.z, t.x, t.y))

tiles = [random_tile() for _ in range(1000)]
for t, line in zip(tiles, run(["tile", "bounds", "-"], [f"{t.z}/{t.x}/{t.y}" for t in tiles])):
    got, b = json.loads(line), mercantile.bounds(t)
    for key in ("west", "south", "east", "north"):
        check(f"bounds {t} {key}", got[key], getattr(b, key), close=True)
for t, line in zip(tiles, run(["tile", "quadkey", "-"], [f"{t.z}/{t.x}/{t.y}" for t in tiles])):
    check(f"quadkey {t}", line, mercantile.quadkey(t))
keys = [mercantile.quadkey(t) for t in tiles if t.z > 0]
for key, line in zip(keys, run(["tile", "from-quadkey", "-"], keys)):
    t = mercantile.quadkey_to_tile(key)
    check(f"from-quadkey {key}", line, f"{t.z}/{t.x}/{t.y}")
nonzero = [t for t in tiles if t.z > 0]
for t, line in zip(nonzero, run(["tile", "parent", "-"], [f"{t.z}/{t.x}/{t.y}" for t in nonzero])):
    p = mercantile.parent(t)
    check(f"parent {t}", line, f"{p.z}/{p.x}/{p.y}")
shallow = [t for t in tiles if t.z < 28][:200]
children = run(["tile", "children", "-"], [f"{t.z}/{t.x}/{t.y}" for t in shallow])
for i, t in enumerate(shallow):
    check(f"children {t}", children[4 * i:4 * i + 4], [f"{c.z}/{c.x}/{c.y}" for c in mercantile.children(t)])

boxes = []
for _ in range(100):
    w, s = rng.uniform(-180, 180), rng.uniform(-85, 80)
    span = 10 ** rng.uniform(-3, 1)
    e = w + span
    boxes.append((w, s, e - 360 if e > 180 else e, min(85, s + span)))
for box, line in zip(boxes, run(["tile", "list", "--bbox", "-", "--zoom", "0-12", "--count"], [",".join(map(repr, b)) for b in boxes])):
    got = {entry["zoom"]: entry["tiles"] for entry in json.loads(line)["zooms"]}
    for z in range(0, 13):
        check(f"count {box} z{z}", got.get(z), len(set(mercantile.tiles(*box, [z]))))
for box in boxes[:20]:
    got = run(["tile", "list", "--bbox", ",".join(map(repr, box)), "--zoom", "10-12"], [])
    expected = sorted({(t.z, t.x, t.y) for t in mercantile.tiles(*box, range(10, 13))})
    check(f"list {box}", got, [f"{z}/{x}/{y}" for z, x, y in expected])

print(f"mercantile cross-check (seed {seed}): {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
