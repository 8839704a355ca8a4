#!/usr/bin/env python3
"""The README's pictures of the central-park map: the viewer (served by `tilekit serve`, in
headless Chromium) at zooms 14, 16 and 18, and a `tilekit snapshot` of the zoo corner at
zoom 17. Run after `make demo` has prepared the example (or prepare-examples.py).

usage: screenshot-central-park.py TILEKIT [OUT_FOLDER]   (default docs/)
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import chromium  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAP = os.path.join(ROOT, "Examples", "central-park", "map.json")
# (zoom, latitude, longitude): the whole park; the Lake, the Ramble and Belvedere Castle;
# Bethesda Terrace and Bow Bridge close up.
VIEWS = [(14, 40.7812, -73.9660), (16, 40.7765, -73.9690), (18, 40.7745, -73.9712)]
ZOO = (-73.9718, 40.7678)


def main():
    tilekit = os.path.abspath(sys.argv[1])
    out = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(ROOT, "docs")
    os.makedirs(out, exist_ok=True)
    subprocess.run([tilekit, "snapshot", "--base", MAP, "--center", f"{ZOO[0]},{ZOO[1]}", "--zoom", "17",
                    "--size", "900x600", "-o", os.path.join(out, "central-park-zoo-z17.png")], check=True, capture_output=True)
    server = subprocess.Popen([tilekit, "serve", MAP, "--host", "127.0.0.1", "--port", "0", "--json", "--quiet"],
                              stdout=subprocess.PIPE, text=True)
    port = json.loads(server.stdout.readline())["port"]
    driver = chromium("--window-size=1000,700")
    try:
        driver.get(f"http://127.0.0.1:{port}/maps/central-park/")
        time.sleep(2)
        # The hero's encounters open popups that pan the map to them: keep each view where it
        # is put, and the popups out of the pictures.
        driver.execute_script("L.Popup.prototype.options.autoPan = false;")
        for zoom, lat, lon in VIEWS:
            driver.execute_script("window.tilekitMap.setView([arguments[0], arguments[1]], arguments[2], {animate: false});", lat, lon, zoom)
            deadline = time.time() + 30
            while time.time() < deadline:
                loading = driver.execute_script("return document.querySelectorAll('img.leaflet-tile:not(.leaflet-tile-loaded)').length")
                if loading == 0:
                    break
                time.sleep(0.3)
            time.sleep(1)
            driver.execute_script("window.tilekitMap.closePopup(); document.querySelectorAll('.leaflet-popup').forEach(function (p) { p.remove(); });")
            driver.save_screenshot(os.path.join(out, f"central-park-z{zoom}.png"))
            print(f"screenshot: central-park-z{zoom}.png")
        # The README's first picture: the route played to its end at 20x, popups left open.
        driver.execute_script("window.tilekitMap.setView([40.7672, -73.9712], 17, {animate: false}); window.tilekitPlay('game-test', 20);")
        time.sleep(493 / 20 + 4)
        shot = os.path.join(out, "example-central-park.png")
        driver.save_screenshot(shot)
        from PIL import Image
        Image.open(shot).convert("RGB").save(os.path.join(out, "example-central-park.jpg"), quality=85)
        os.remove(shot)
        print("screenshot: example-central-park.jpg")
    finally:
        driver.quit()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
    print("screenshot: central-park-zoo-z17.png")


if __name__ == "__main__":
    main()
