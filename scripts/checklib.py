"""What the end-to-end check scripts share: one line per check, and a summary."""
import os
import socket
import subprocess
import time

FAILURES = []
COUNT = [0]


def check(name, condition, detail=""):
    COUNT[0] += 1
    print(("ok   " if condition else "FAIL ") + name + ("" if condition else f" {detail}"), flush=True)
    if not condition:
        FAILURES.append(name)


def summary(what):
    """Prints `passed/total what checks passed` and returns the exit code."""
    print(f"{COUNT[0] - len(FAILURES)}/{COUNT[0]} {what} checks passed")
    return 1 if FAILURES else 0


def chromium(*arguments):
    """Headless Debian Chromium under selenium, keeping the browser's console log."""
    from selenium import webdriver
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", *arguments):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=webdriver.ChromeService(executable_path="/usr/bin/chromedriver"), options=options)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nginx(directory, root, port=None):
    """nginx (Debian) serving `root` on a free 127.0.0.1 port, its files in `directory`, each
    request logged as `STATUS "METHOD" "URI" "RANGE" "IF-MATCH" BYTES`. Returns the
    process (to terminate), the port and the access log's path."""
    port = port or free_port()
    user = "user root;" if os.geteuid() == 0 else ""  # as root, workers would become nobody
    temp = " ".join(f"{m}_temp_path {directory}/nginx-{m};" for m in ("client_body", "proxy"))
    with open(f"{directory}/nginx.conf", "w") as f:
        f.write(f"{user} daemon off; worker_processes 1; error_log {directory}/nginx-error.log; pid {directory}/nginx.pid;\n"
                f"events {{ worker_connections 1024; }}\n"
                f"http {{ log_format ranges '$status \"$request_method\" \"$uri\" \"$http_range\" \"$http_if_match\" $body_bytes_sent';"
                f" access_log {directory}/nginx-access.log ranges; default_type application/octet-stream; {temp}"
                f" server {{ listen 127.0.0.1:{port}; root {root}; location / {{ }} }} }}\n")
    process = subprocess.Popen(["nginx", "-p", directory, "-e", f"{directory}/nginx-error.log", "-c", f"{directory}/nginx.conf"])
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.02)
    return process, port, f"{directory}/nginx-access.log"


def write_leafy_pmtiles(path, seed, zooms=8):
    """A PMTiles file written by the PyPI `pmtiles` package: half the tiles of z0 to
    zooms-1 (about 11,000 for 8), at random, 256 px PNGs of 512 kinds, with ids and lengths
    irregular enough that the directory needs leaves. Written beside `path`, then renamed."""
    import io
    import random
    from PIL import Image, ImageDraw
    from pmtiles.tile import Compression, TileType, zxy_to_tileid
    from pmtiles.writer import Writer
    rng = random.Random(seed)
    pngs = []
    for _ in range(512):
        image = Image.new("RGB", (256, 256), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
        draw = ImageDraw.Draw(image)
        for _ in range(rng.randint(0, 6)):
            x, y = rng.randrange(200), rng.randrange(200)
            draw.rectangle((x, y, x + rng.randint(4, 56), y + rng.randint(4, 56)), fill=(rng.randrange(256), rng.randrange(256), rng.randrange(256)))
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
        pngs.append(buffer.getvalue())
    tiles = [(zxy_to_tileid(z, x, y), pngs[rng.randrange(len(pngs))])
             for z in range(zooms) for x in range(1 << z) for y in range(1 << z) if rng.random() < 0.5]
    with open(path + ".tmp", "wb") as f:
        writer = Writer(f)
        for tile_id, data in sorted(tiles):
            writer.write_tile(tile_id, data)
        writer.finalize({"tile_type": TileType.PNG, "tile_compression": Compression.NONE, "min_zoom": 0, "max_zoom": zooms - 1,
                         "min_lon_e7": -1800000000, "min_lat_e7": -850511287, "max_lon_e7": 1800000000, "max_lat_e7": 850511287,
                         "center_zoom": 1, "center_lon_e7": 0, "center_lat_e7": 0}, {"name": f"leafy {seed}", "attribution": "check"})
    os.replace(path + ".tmp", path)
