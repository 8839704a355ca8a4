#!/usr/bin/env python3
"""End-to-end checks of `tilekit serve` on 127.0.0.1, as a client sees it: real HTTP with
keep-alive, TileJSON against the TileJSON 3.0.0 schema, 304s, every bad path the issue
names, the limits, static images, metrics, a graceful stop on SIGTERM; then the viewer in
headless Chromium (selenium): no console errors, tiles drawn, a toggle that changes the
picture, a popup on a marker, @2x tiles, the debug grid, the user's location with the
hero icon. Screenshots go to out/viewer-*.png.

usage: check-server.py TILEKIT
"""
import http.client
import io
import json
import socket
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

import jsonschema
from PIL import Image, ImageChops, ImageStat

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import check, chromium, summary  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
def make_project(tilekit, folder):
    """A map.json with an MBTiles base (z13-15 over the park, one drawn picture for every
    tile), a generated debug grid, and the README's every-overlay feature layer."""
    data = os.path.join(ROOT, "docs", "data")
    for name in ("every-overlay.geojson", "park-art.jpg", "icons"):
        source = os.path.join(data, name)
        (shutil.copytree if os.path.isdir(source) else shutil.copy)(source, os.path.join(folder, name))
    picture = os.path.join(folder, "tile.png")
    subprocess.run([tilekit, "snapshot", "--center", "-73.9725,40.7712", "--zoom", "15", "--size", "256x256",
                    "--overlay", os.path.join(folder, "every-overlay.geojson"), "--attribution", "none", "-o", picture],
                   check=True, capture_output=True)
    import mercantile
    db = sqlite3.connect(os.path.join(folder, "park.mbtiles"))
    db.executescript("CREATE TABLE metadata (name TEXT, value TEXT); CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER,"
                     " tile_row INTEGER, tile_data BLOB);")
    db.executemany("INSERT INTO metadata VALUES (?, ?)", [("name", "park"), ("format", "png"), ("minzoom", "13"), ("maxzoom", "15"),
                                                         ("bounds", "-73.99,40.76,-73.95,40.80")])
    blob = open(picture, "rb").read()
    for t in mercantile.tiles(-73.99, 40.76, -73.95, 40.80, [13, 14, 15]):
        db.execute("INSERT INTO tiles VALUES (?, ?, ?, ?)", (t.z, t.x, (1 << t.z) - 1 - t.y, blob))
    db.commit()
    db.close()
    project = {
        "name": "park", "title": "Park", "attribution": "TileKit test data",
        "center": [-73.9725, 40.7712], "zoom": 15, "minzoom": 13, "maxzoom": 18, "bounds": [-73.99, 40.76, -73.95, 40.80],
        "layers": [
            {"id": "sketch", "title": "Sketch", "type": "tiles", "source": "park.mbtiles", "native-maxzoom": 15, "fallback": "#e8dcc0"},
            {"id": "grid", "title": "Grid", "type": "generated", "base": True, "visible": False},
            {"id": "pins", "title": "Pins", "type": "features", "files": ["every-overlay.geojson"], "zindex": 10},
        ]}
    with open(os.path.join(folder, "map.json"), "w") as f:
        json.dump(project, f)
    return os.path.join(folder, "map.json")


def start(tilekit, project, folder, *options):
    log = open(os.path.join(folder, "access.log"), "w")
    server = subprocess.Popen([tilekit, "serve", project, "--host", "127.0.0.1", "--port", "0", "--json", *options],
                              stdout=subprocess.PIPE, stderr=log, text=True)
    line = server.stdout.readline()
    if not line:
        sys.exit("tilekit serve did not start: " + open(os.path.join(folder, "access.log")).read())
    return server, json.loads(line)["port"]


def request(connection, method, path, headers=None, body=None):
    connection.request(method, path, body=body, headers=headers or {})
    response = connection.getresponse()
    return response.status, dict((k.lower(), v) for k, v in response.getheaders()), response.read()


def task_answer_checks(port):
    """Tiles drawn for the request (z16, past the store's z15: the sketch overzoomed under the
    pins) are made in a task while the connection is suspended; the task's answer must wake
    the connection's thread at once. One client alone, so nothing else wakes it: when resuming
    woke nobody, each answer waited for the thread's 1 s tick."""
    import mercantile
    tiles = list(mercantile.tiles(-73.98, 40.765, -73.96, 40.78, [16]))[:30]
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    times, statuses = [], set()
    for t in tiles:
        started = time.perf_counter()
        status, _, _ = request(connection, "GET", f"/maps/park/{t.z}/{t.x}/{t.y}.png")
        times.append(time.perf_counter() - started)
        statuses.add(status)
    connection.close()
    times.sort()
    check(f"{len(tiles)} tiles drawn in tasks, one after another: each answered as soon as drawn (median < 250 ms)",
          statuses == {200} and times[len(times) // 2] < 0.25,
          f"statuses {sorted(statuses)}; median {times[len(times) // 2] * 1000:.0f} ms, slowest {times[-1] * 1000:.0f} ms")


def crowd_checks(port, seconds=3):
    """Crowds of keep-alive connections on one server thread (--threads 1), through wrk.
    libmicrohttpd's own epoll loop slept through a batch of exactly 128 ready connections
    (until the 30 s idle timeout): with 128 to 256 busy connections a thread answered each a
    handful of times, then nothing, and wrk's every connection timed out. TileKit drives each
    daemon's epoll itself. No request may time out (5 s), and each connection must be answered
    again and again (at least 20 times in 3 s; a thread answers some 50,000 a second)."""
    for count in (128, 200, 256):
        run = subprocess.run(["wrk", "-t2", f"-c{count}", f"-d{seconds}s", "--timeout", "5s", f"http://127.0.0.1:{port}/health"],
                             capture_output=True, text=True, timeout=seconds + 30)
        requests = int(re.search(r"(\d+) requests in", run.stdout).group(1)) if "requests in" in run.stdout else 0
        errors = re.search(r"Socket errors: (.*)", run.stdout)
        check(f"{count} busy connections on one thread: every one answered again and again, none timing out",
              run.returncode == 0 and errors is None and requests >= 20 * count,
              f"{requests} requests in {seconds} s" + (f"; socket errors: {errors.group(1)}" if errors else ""))


def http_checks(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    status, headers, body = request(c, "GET", "/maps/park/15/9650/12314.png")
    check("tile 200 PNG", status == 200 and body[:8] == b"\x89PNG\r\n\x1a\n", status)
    socket_before = c.sock
    status, headers2, body2 = request(c, "GET", "/maps/park/15/9650/12314.png")
    check("keep-alive: a second request on the same connection", status == 200 and c.sock is socket_before)
    etag = headers.get("etag")
    status, _, body = request(c, "GET", "/maps/park/15/9650/12314.png", {"If-None-Match": etag})
    check("If-None-Match -> 304 without a body", status == 304 and body == b"", status)
    status, h, body = request(c, "HEAD", "/maps/park/15/9650/12314.png")
    check("HEAD: headers, no body", status == 200 and body == b"" and h.get("content-length") == headers.get("content-length"))
    check("Cache-Control and CORS on tiles", headers.get("cache-control", "").startswith("public, max-age=") and headers.get("access-control-allow-origin") == "*")
    status, h, body = request(c, "GET", "/maps/park/15/9650/12314@2x.webp")
    check("@2x WebP", status == 200 and body[8:12] == b"WEBP" and Image.open(io.BytesIO(body)).size == (512, 512))
    status, h, body = request(c, "GET", "/maps/park/layers/sketch/17/38602/49256.png")
    check("overzoom served transparently", status == 200 and h.get("x-tile-provenance", "").startswith("overzoomed"), h.get("x-tile-provenance"))
    status, _, _ = request(c, "GET", "/maps/park/13/0/0.png")
    check("outside the bounds -> 204 (the default missing-tile status)", status == 204, status)

    schema = json.load(open(os.path.join(ROOT, "scripts", "schemas", "tilejson-3.0.0.json")))
    for path in ("/maps/park.json", "/maps/park/layers/sketch.json", "/maps/park/layers/pins.json"):
        status, h, body = request(c, "GET", path)
        document = json.loads(body)
        try:
            jsonschema.validate(document, schema)
            valid = True
        except jsonschema.ValidationError as error:
            valid = str(error).splitlines()[0]
        w, s, e, n = document["bounds"]
        lon, lat, zoom = document["center"]
        check(f"TileJSON {path} valid against the 3.0.0 schema", valid is True and document["minzoom"] <= zoom <= document["maxzoom"]
              and w <= lon <= e and s <= lat <= n, valid)
    status, _, tile = request(c, "GET", document["tiles"][0].split(str(port), 1)[1].replace("{z}", "15").replace("{x}", "9650").replace("{y}", "12314"))
    check("TileJSON's tile URL answers", status == 200)

    status, h, body = request(c, "GET", "/maps/park/features/pins.geojson", {"Accept-Encoding": "gzip"})
    import gzip
    features = json.loads(gzip.decompress(body)) if h.get("content-encoding") == "gzip" else {}
    titles = {f["properties"].get("title") for f in features.get("features", [])}
    check("features as gzipped GeoJSON with titles", "Goblin" in titles and h.get("content-type") == "application/geo+json")

    bad = [("/maps/park/../../etc/passwd", 400), ("/maps/park/%2e%2e/%2e%2e/etc/passwd", 400), ("/maps/%2E%2E%2Fetc/1/0/0.png", 400),
           ("/maps/park/1/0/0.png%00", 400), ("/maps/park/99/0/0.png", 400), ("/maps/park/3/8/0.png", 400),
           ("/maps/park/3/0/0.gif", 404), ("/maps/nowhere/15/9650/12314.png", 404), ("/etc/passwd", 404),
           ("/maps/park/layers/nope/15/9650/12314.png", 404), ("/assets/../../../etc/passwd", 400), ("/maps/park/15/9650/12314.png/x", 404)]
    for path, expected in bad:
        status, _, body = request(c, "GET", path)
        check(f"{path} -> {expected}", status == expected and b"root:" not in body, f"got {status}: {body[:80]!r}")
    status, h, _ = request(c, "DELETE", "/maps/park/15/9650/12314.png")
    check("DELETE -> 405 with Allow", status == 405 and "GET" in h.get("allow", ""))

    status, h, body = request(c, "GET", "/maps/park/static/-73.9725,40.7712,15/400x300@2x.png?markers=-73.9725,40.7712,%230000ff,star")
    image = Image.open(io.BytesIO(body)).convert("RGB")
    geometry = json.loads(h.get("x-snapshot-geometry", "{}"))
    check("static image with a marker at its computed place", status == 200 and image.size == (800, 600) and geometry.get("zoom") == 15
          and image.getpixel((400, 300))[2] > 200, (status, geometry))
    status, h, body = request(c, "GET", "/maps/park/static/auto/400x300.json?markers=-73.9725,40.7712|-73.96,40.78&padding=30")
    markers = json.loads(body).get("markers", []) if status == 200 else []
    check("static geometry twin lists every marker", len(markers) == 2 and all(0 <= m["x"] <= 400 and 0 <= m["y"] <= 300 for m in markers))
    feature = json.dumps({"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[-73.98, 40.765], [-73.96, 40.78]]},
                          "properties": {"stroke": "#ff0000", "stroke-width": 6}})
    status, _, body = request(c, "POST", "/maps/park/static/auto/300x300.png", {"Content-Type": "application/geo+json"}, feature)
    check("POST a GeoJSON body", status == 200 and body[:4] == b"\x89PNG", status)
    status, _, body = request(c, "GET", "/maps/park/static/0,0,3/5000x100.png")
    check("static size limit -> 400 with a message", status == 400 and b"2048" in body, body[:80])
    # The 413 comes from the head alone, before any byte of the body is sent (as with
    # curl's Expect: 100-continue), and the connection is closed.
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall(b"POST /maps/park/static/auto/300x300.png HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % (2 << 20))
        answer = raw.recv(4096)
    check("body limit -> 413 before the body is sent", answer.startswith(b"HTTP/1.1 413"), answer[:40])
    c.close()
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    status, _, body = request(c, "GET", "/metrics")
    text = body.decode()
    check("metrics: requests by route and status, latency, cache",
          'tilekit_requests_total{route="tile",status="304"} 1' in text and "tilekit_request_duration_seconds_count" in text
          and "tilekit_tile_cache_hits_total" in text, text[:200])
    status, _, body = request(c, "GET", "/health")
    check("health", status == 200 and body.strip() == b"ok")
    c.close()


def viewer_checks(port, out):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver = chromium("--window-size=1000,700", "--force-device-scale-factor=2")
    try:
        base = f"http://127.0.0.1:{port}"
        driver.execute_cdp_cmd("Browser.grantPermissions", {"origin": base, "permissions": ["geolocation"]})
        driver.execute_cdp_cmd("Emulation.setGeolocationOverride", {"latitude": 40.7745, "longitude": -73.9700, "accuracy": 10})
        driver.get(base + "/maps/park/")
        wait = WebDriverWait(driver, 20)
        wait.until(lambda d: d.execute_script("return document.querySelectorAll('img.leaflet-tile-loaded').length") >= 6)
        wait.until(lambda d: d.execute_script("return document.querySelectorAll('path.tk-hit').length") > 0)
        time.sleep(0.5)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        check("viewer loads without console errors", not errors, errors[:3])
        sources = driver.execute_script("return Array.from(document.querySelectorAll('img.leaflet-tile')).map(i => i.src)")
        check("@2x tiles on a high-DPI screen", sources and all("@2x." in s for s in sources), sources[:2])
        first = os.path.join(out, "viewer.png")
        driver.save_screenshot(first)
        shot = Image.open(first).convert("RGB")
        check("tiles appear (not blank)", max(ImageStat.Stat(shot).stddev) > 20)
        zoom = driver.execute_script("var m = window.tilekitMap; m.setZoom(3, {animate: false}); return m.getZoom();")
        check("the map's zoom range is enforced", zoom == 13, zoom)
        driver.execute_script("window.tilekitMap.setView([40.7712, -73.9725], 15, {animate: false})")
        time.sleep(1.0)
        driver.save_screenshot(first)

        def label(text):
            return driver.find_element(By.XPATH, f"//label[.//span[normalize-space()='{text}']]//input")
        label("Pins").click()
        time.sleep(1.0)
        second = os.path.join(out, "viewer-no-pins.png")
        driver.save_screenshot(second)
        difference = ImageChops.difference(Image.open(first).convert("RGB"), Image.open(second).convert("RGB"))
        changed = difference.convert("L").point(lambda v: 255 if v > 40 else 0).histogram()[255]
        check("toggling the Pins overlay changes what is drawn", changed > 5000, changed)
        label("Pins").click()
        wait.until(lambda d: d.execute_script("return document.querySelectorAll('path.tk-hit').length") > 0)
        point = driver.execute_script("var p = window.tilekitMap.latLngToContainerPoint([40.767769, -73.971870]); return [p.x, p.y];")
        element = driver.find_element(By.ID, "map")
        size = element.size
        ActionChains(driver).move_to_element_with_offset(element, point[0] - size["width"] / 2, point[1] - size["height"] / 2).click().perform()
        try:
            text = wait.until(lambda d: "".join(e.text for e in d.find_elements(By.CSS_SELECTOR, ".leaflet-popup-content")) or None)
        except Exception:
            text = ""
        check("a click on the goblin opens its popup with title and subtitle", "Goblin" in text and "Central Park Zoo" in text, text)
        driver.save_screenshot(os.path.join(out, "viewer-popup.png"))
        check("the shimmering pond is animated in the browser",
              driver.execute_script("return !!document.querySelector('#tk-shimmer animateTransform') && !!document.querySelector('path.tk-shimmer')"))
        label("Tile grid (debug)").click()
        wait.until(lambda d: d.execute_script("return Array.from(document.querySelectorAll('.tk-grid span')).some(s => s.textContent.indexOf('·') > 0)"))
        grid = driver.execute_script("return Array.from(document.querySelectorAll('.tk-grid span')).map(s => s.textContent)")
        check("debug grid labels tiles with z/x/y and how they were made", any(g.startswith("15/") for g in grid), grid[:3])
        driver.save_screenshot(os.path.join(out, "viewer-debug.png"))
        driver.find_element(By.CSS_SELECTOR, ".tk-locate").click()
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "img.leaflet-marker-icon[src$='/assets/hero.png']"))
        check("the user's location is shown with the hero icon", True)
        errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        check("still no console errors", not errors, errors[:3])
    finally:
        driver.quit()


def main():
    tilekit = os.path.abspath(sys.argv[1])
    out = os.path.join(ROOT, "out")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        project = make_project(tilekit, folder)
        status = subprocess.run([tilekit, "validate", project], capture_output=True, text=True)
        check("validate accepts the project", status.returncode == 0, status.stderr)
        server, port = start(tilekit, project, folder)
        try:
            http_checks(port)
            task_answer_checks(port)
            viewer_checks(port, out)
        finally:
            server.send_signal(signal.SIGTERM)
            code = server.wait(timeout=30)
        log = open(os.path.join(folder, "access.log")).read()
        check("SIGTERM stops the server cleanly", code == 0 and "stopping" in log, code)
        check("access log lines", "GET /maps/park/15/9650/12314.png 200" in log)
        server, port = start(tilekit, project, folder, "--threads", "1", "--quiet")
        try:
            crowd_checks(port)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    return summary("server")


if __name__ == "__main__":
    sys.exit(main())
