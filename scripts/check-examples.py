#!/usr/bin/env python3
"""The three example maps and the game, as `make demo` uses them:

- prepares the examples (scripts/prepare-examples.py) and validates each map.json;
- renders a known tile of each and checks what is drawn there; central-park's base map has a
  drawing for each zoom 13-18, simpler at low zooms, with named water, meadows, woods,
  buildings, drives, bridges, playgrounds, streets and paths by kind;
- `tilekit simulate` on the Game Test route against an independent computation (gpxpy
  reads the route, a haversine walk at 1.4 m/s finds where each circle is crossed);
- serves central-park and plays the route over server-sent events;
- opens the viewer in headless Chromium: the hero walks and the goblin's and the store's
  encounter popups appear (screenshots in out/demo-*.png).

usage: check-examples.py TILEKIT
"""
import http.client
import io
import json
import math
import os
import signal
import subprocess
import sys
import time

import gpxpy
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import check, chromium, summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "Examples")
def haversine(a, b):
    r = 6371008.8
    la1, la2 = math.radians(a[1]), math.radians(b[1])
    dl, dp = la2 - la1, math.radians(b[0] - a[0])
    h = math.sin(dl / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin(dp / 2) ** 2
    return 2 * r * math.asin(math.sqrt(h))


def expected_events(gpx_path, pois, speed=1.4, hysteresis=2.0, step=0.02):
    """Walks the route in `step`-second steps (straight lines in degrees between points,
    as the simulator moves) and records where each circle is crossed."""
    with open(gpx_path) as f:
        gpx = gpxpy.parse(f)
    # A track, or (an Xcode location file) waypoints in order, at their times when they have them.
    stops = gpx.tracks[0].segments[0].points if gpx.tracks else gpx.waypoints
    points = [(p.longitude, p.latitude) for p in stops]
    times = [0.0]
    for a, b in zip(points, points[1:]):
        times.append(times[-1] + haversine(a, b) / speed)
    if stops and all(p.time for p in stops):
        times = [(p.time - stops[0].time).total_seconds() for p in stops]
    def at(t):
        for i in range(1, len(points)):
            if t <= times[i]:
                f = (t - times[i - 1]) / (times[i] - times[i - 1])
                return (points[i - 1][0] + f * (points[i][0] - points[i - 1][0]), points[i - 1][1] + f * (points[i][1] - points[i - 1][1]))
        return points[-1]
    events, inside = [], {}
    t = 0.0
    while t <= times[-1]:
        p = at(t)
        for poi in pois:
            d = haversine(p, poi["coordinates"])
            if not inside.get(poi["id"]) and d <= poi["radius"]:
                inside[poi["id"]] = True
                events.append((round(t, 1), "enter", poi["id"]))
            elif inside.get(poi["id"]) and d > poi["radius"] + hysteresis:
                inside[poi["id"]] = False
                events.append((round(t, 1), "exit", poi["id"]))
        t += step
    return events


def main():
    tilekit = os.path.abspath(sys.argv[1])
    out = os.path.join(ROOT, "out")
    os.makedirs(out, exist_ok=True)
    prepared = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "prepare-examples.py"), tilekit], capture_output=True, text=True)
    check("the examples prepare", prepared.returncode == 0, prepared.stderr[-800:] + prepared.stdout[-400:])
    for name in ("central-park", "historic-overlay", "magic-mountain"):
        valid = subprocess.run([tilekit, "validate", os.path.join(EXAMPLES, name, "map.json")], capture_output=True, text=True)
        check(f"{name}/map.json validates", valid.returncode == 0, valid.stderr)

    # A known tile of each: what should be drawn at a point.
    def pixel(name, lon, lat, zoom):
        path = os.path.join(out, f"example-{name}.png")
        subprocess.run([tilekit, "snapshot", "--base", os.path.join(EXAMPLES, name, "map.json"), "--center", f"{lon},{lat}",
                        "--zoom", str(zoom), "--size", "64x64", "--attribution", "none", "-o", path], check=True, capture_output=True)
        return Image.open(path).convert("RGB").getpixel((32, 32))
    r, g, b = pixel("central-park", -73.9627, 40.7860, 16)  # the middle of the Reservoir: deep blue water
    check("central-park: the Reservoir is water-blue", b > r + 40 and b > 120, (r, g, b))
    r, g, b = pixel("central-park", -73.99, 40.80, 15)  # off the park: parchment
    check("central-park: parchment outside the park", r > 200 and g > 185 and b > 140 and r > b, (r, g, b))
    # The base map zoom by zoom (prepare-examples.py writes what each zoom draws, and its counts).
    build = os.path.join(EXAMPLES, "central-park", "build")
    stats = {int(z): s for z, s in json.load(open(os.path.join(build, "layers.json")))["zooms"].items()}
    check("central-park: a drawing for each zoom 13-18", sorted(stats) == list(range(13, 19)), sorted(stats))
    check("central-park: fewer, simpler features at low zooms (z13 has under half z18's vertices)",
          all(stats[z]["features"] <= stats[z + 1]["features"] for z in range(13, 18)) and stats[13]["vertices"] * 2 < stats[18]["vertices"],
          {z: (s["features"], s["vertices"]) for z, s in stats.items()})
    z16 = json.load(open(os.path.join(build, "drawing-z16.geojson")))["features"]
    titles = {f["properties"].get("title") for f in z16}
    wanted = {"The Lake", "Jacqueline Kennedy Onassis Reservoir", "Harlem Meer", "The Pond", "Sheep Meadow", "The Ramble",
              "Central Park Zoo", "Belvedere Castle", "The Metropolitan Museum of Art", "East Drive", "Bow Bridge",
              "Heckscher Playground", "Fifth Avenue", "Central Park West", "East 72nd Street", "Bridle Path"}
    check("central-park: water, meadows, woods, buildings, drives, bridges, playgrounds and streets are named at z16",
          wanted <= titles, sorted(wanted - titles))
    kinds = {f["properties"]["kind"] for f in z16}
    check("central-park: paths by kind at z16 (footway, cycleway, bridleway, steps)", {"footway", "cycleway", "bridleway", "steps"} <= kinds, sorted(kinds))
    met = next(f for f in z16 if f["properties"].get("title") == "The Metropolitan Museum of Art")["geometry"]["coordinates"][0]
    # Its name is written at its centre: the points sampled lie between the centre and each corner.
    cx, cy = sum(p[0] for p in met) / len(met), sum(p[1] for p in met) / len(met)
    samples = [pixel("central-park", cx + 0.6 * (x - cx), cy + 0.6 * (y - cy), 16) for x, y in met[:-1]]
    tan = [(r, g, b) for r, g, b in samples if r > g > b and r > 150 and r - b > 40]
    check("central-park: the Met is drawn as a building (tan ink-wash)", len(tan) * 2 >= len(samples), samples)
    r, g, b = pixel("historic-overlay", 20, 50, 4)  # Central Europe on the 1689 map over paper
    check("historic-overlay: the 1689 map is drawn over the paper", 60 < r < 250 and r >= b, (r, g, b))
    r, g, b = pixel("magic-mountain", -118.5971, 34.4248, 17)  # inside the park art
    check("magic-mountain: the park art is drawn by its corners", (r, g, b) != (0, 0, 0) and abs(r - g) + abs(g - b) > 15, (r, g, b))

    # tilekit simulate against an independent walk.
    gpx = os.path.join(EXAMPLES, "central-park", "game-test.gpx")
    pois_path = os.path.join(EXAMPLES, "central-park", "build", "pois.geojson")
    pois = [{"id": f["properties"]["id"], "radius": f["properties"].get("radius", 10), "coordinates": f["geometry"]["coordinates"]}
            for f in json.load(open(pois_path))["features"]]
    simulated = subprocess.run([tilekit, "simulate", "--gpx", gpx, "--pois", pois_path], capture_output=True, text=True)
    ours = [json.loads(line) for line in simulated.stdout.splitlines()]
    theirs = expected_events(gpx, pois)
    check("simulate: the same encounters, in order, as an independent walk (gpxpy + haversine)",
          [(e["event"], e["poi"]) for e in ours] == [(k, p) for _, k, p in theirs], (ours, theirs))
    check("simulate: each within 0.1 s of where the independent walk crosses the circle",
          len(ours) == len(theirs) and all(abs(e["t"] - t) <= 0.1 for e, (t, _, _) in zip(ours, theirs)),
          [(e["t"], t) for e, (t, _, _) in zip(ours, theirs)])
    check("simulate: the goblin and then the store", [e["poi"] for e in ours if e["event"] == "enter"][-2:] == ["goblin", "store"])

    # Served: the route over server-sent events, then the viewer.
    server = subprocess.Popen([tilekit, "serve", *[os.path.join(EXAMPLES, n, "map.json") for n in ("central-park", "historic-overlay", "magic-mountain")],
                               "--host", "127.0.0.1", "--port", "0", "--json", "--quiet"], stdout=subprocess.PIPE, text=True)
    port = json.loads(server.stdout.readline())["port"]
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("GET", "/maps/central-park/play?gpx=game-test&time-warp=500")
        response = c.getresponse()
        stream = response.read().decode()
        kinds = [line[7:] for line in stream.splitlines() if line.startswith("event: ")]
        c.request("GET", "/maps/central-park/warps/station-R13.json")
        warps = json.loads(c.getresponse().read())
        check("warps: 5 Av/59 St leads to stations on the N Q R W lines, not to the 1 2 3",
              any(w["title"] == "57 St-7 Av" for w in warps["destinations"]) and not any("1" in w["lines"] for w in warps["destinations"]),
              [w["title"] for w in warps["destinations"]])
        check("play: server-sent events, positions then the encounters and the end",
              response.getheader("Content-Type") == "text/event-stream" and kinds.count("position") > 50 and kinds[-1] == "end"
              and "enter" in kinds, kinds[:5])
        c.close()
        viewer(port, out)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    return summary("example")


def viewer(port, out):
    from selenium.webdriver.support.ui import WebDriverWait
    driver = chromium("--window-size=1100,800")
    try:
        driver.get(f"http://127.0.0.1:{port}/maps/central-park/")
        wait = WebDriverWait(driver, 30)
        wait.until(lambda d: d.execute_script("return window.tilekitPositions") > 3)
        first = driver.execute_script("var m = document.querySelector(\"img.leaflet-marker-icon[src$='/assets/hero.png']\"); return m && m.style.transform")
        time.sleep(2)
        second = driver.execute_script("var m = document.querySelector(\"img.leaflet-marker-icon[src$='/assets/hero.png']\"); return m && m.style.transform")
        check("the viewer opens with the hero walking the Game Test route", first and second and first != second, (first, second))
        driver.save_screenshot(os.path.join(out, "demo-walking.png"))
        # The route starts in the 5 Av/59 St warp zone: its popup offers stations on its lines.
        from selenium.webdriver.common.by import By
        link = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "a.tk-warp"))[0]
        target = link.text
        link.click()
        warped = wait.until(lambda d: d.execute_script("return window.tilekitWarped"))
        check(f"a warp zone's popup warps the hero ({target})", warped and warped.startswith("station-"), warped)
        # At the demo's pace the goblin comes after ~70 s: play again, faster, and wait for both popups.
        driver.execute_script("window.tilekitEncounters = []; window.tilekitPlay('game-test', 60);")
        wait.until(lambda d: d.execute_script("return window.tilekitEncounters.map(e => e.poi).indexOf('store') >= 0"))
        texts = driver.execute_script("return Array.from(document.querySelectorAll('.tk-encounter')).map(e => e.textContent)")
        check("encounter popups appear at the goblin and the store", any("Goblin" in t for t in texts) and any("store" in t for t in texts), texts)
        driver.save_screenshot(os.path.join(out, "demo-encounters.png"))
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        check("no console errors", not errors, errors[:3])
        for name in ("historic-overlay", "magic-mountain"):
            driver.get(f"http://127.0.0.1:{port}/maps/{name}/")
            wait.until(lambda d: d.execute_script("return document.querySelectorAll('img.leaflet-tile-loaded').length") >= 4)
            time.sleep(1)
            driver.save_screenshot(os.path.join(out, f"demo-{name}.png"))
            errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
            check(f"{name} opens in the viewer without console errors", not errors, errors[:3])
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
