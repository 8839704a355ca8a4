#!/usr/bin/env python3
"""PMTiles over HTTP end to end, with the release build: nginx (Debian) serves on 127.0.0.1
a PMTiles file with leaf directories written by the PyPI `pmtiles` package (another
writer than TileKit's); `tilekit info`, `convert` and `serve` (a store URL, and a map.json
layer) read it by URL and give what the pmtiles package reads from the file; nginx's
access log counts the range requests; a file replaced on disk is noticed; bad URLs exit
74 (unreachable, 404) and 65 (not PMTiles).

usage: check-pmtiles-http.py TILEKIT
"""
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

from pmtiles.reader import MmapSource, Reader, all_tiles

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import check, free_port, start_nginx, summary, write_leafy_pmtiles  # noqa: E402


def read_all(path):
    with open(path, "rb") as f:
        reader = Reader(MmapSource(f))
        return reader.header(), {zxy: data for zxy, data in all_tiles(reader.get_bytes)}


def leaf_count(path):
    """Leaf directories the root points at (entries with run length 0)."""
    from pmtiles.tile import deserialize_directory
    with open(path, "rb") as f:
        header = Reader(MmapSource(f)).header()
        f.seek(header["root_offset"])
        root = deserialize_directory(f.read(header["root_length"]))
    return sum(1 for entry in root if entry.run_length == 0)


def run(*command):
    return subprocess.run(command, capture_output=True, text=True)


def ranges(log_path):
    with open(log_path) as f:
        return [line for line in f if line.startswith("206 ")]


def start_serve(tilekit, target, folder):
    log = open(os.path.join(folder, "serve.log"), "w")
    server = subprocess.Popen([tilekit, "serve", target, "--host", "127.0.0.1", "--port", "0", "--json", "--quiet"],
                              stdout=subprocess.PIPE, stderr=log, text=True)
    line = server.stdout.readline()
    if not line:
        sys.exit("tilekit serve did not start: " + open(os.path.join(folder, "serve.log")).read())
    return server, json.loads(line)["port"]


def fetch(connection, path):
    connection.request("GET", path)
    response = connection.getresponse()
    return response.status, response.read()


def main():
    tilekit = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as folder:
        os.chmod(folder, 0o755)  # nginx's worker may run unprivileged
        www = os.path.join(folder, "www")
        os.mkdir(www)
        path = os.path.join(www, "leafy.pmtiles")
        write_leafy_pmtiles(path, seed=1)
        with open(os.path.join(www, "page.pmtiles"), "w") as f:
            f.write("<html><body>Welcome to nginx!</body></html>")
        header, tiles = read_all(path)
        check("the pmtiles package wrote leaf directories", header["leaf_directory_length"] > 0 and len(tiles) > 10000, header)
        nginx, port, access_log = start_nginx(folder, www)
        url = f"http://127.0.0.1:{port}/leafy.pmtiles"
        try:
            local, remote = run(tilekit, "info", path), run(tilekit, "info", url)
            check("tilekit info URL = tilekit info FILE", remote.returncode == 0 and remote.stdout == local.stdout
                  and json.loads(remote.stdout)["tiles"] == len(tiles), remote.stderr)

            copy = os.path.join(folder, "copy.mbtiles")
            converted = run(tilekit, "convert", url, copy, "--quiet")
            check("tilekit convert URL copies every tile", converted.returncode == 0
                  and json.loads(run(tilekit, "info", copy).stdout)["tiles"] == len(tiles), converted.stderr)

            before = len(ranges(access_log))
            server, serve_port = start_serve(tilekit, url, folder)
            try:
                connection = http.client.HTTPConnection("127.0.0.1", serve_port, timeout=30)
                sample = random.Random(3).sample(sorted(tiles), 300)
                served = {zxy: fetch(connection, f"/maps/leafy/layers/leafy/{zxy[0]}/{zxy[1]}/{zxy[2]}.png") for zxy in sample}
                wrong = [zxy for zxy, (status, body) in served.items() if status != 200 or body != tiles[zxy]]
                check("tilekit serve URL answers each tile with the file's bytes", not wrong, wrong[:5])
                absent = next((z, x, y) for z in range(7, 8) for x in range(128) for y in range(128) if (z, x, y) not in tiles)
                status, _ = fetch(connection, f"/maps/leafy/layers/leafy/{absent[0]}/{absent[1]}/{absent[2]}.png")
                check("a tile the file lacks is no tile (204)", status == 204, status)
                time.sleep(0.2)  # nginx logs a request once answered
                asked = len(ranges(access_log)) - before
                leaves = leaf_count(path)
                check("serving costs one range request per tile, plus each leaf once and the opens",
                      asked <= 2 + leaves + len(sample), f"{asked} range requests for {len(sample)} tiles, {leaves} leaves")
                print(f"     {asked} range requests: {len(sample)} tiles, the leaves they needed (of {leaves}), 2 opens")

                # Replace the file as a deploy would; a tile not asked for yet, in both files,
                # comes from the new one (its read meets the new ETag). A tile the old file
                # lacked is answered from the old directories until a read meets it.
                write_leafy_pmtiles(path, seed=2)
                os.utime(path, (time.time() + 10, time.time() + 10))
                _, new_tiles = read_all(path)
                fresh = next(zxy for zxy in sorted(new_tiles) if zxy not in served and zxy in tiles and zxy[0] == 7
                             and new_tiles[zxy] != tiles[zxy])
                status, body = fetch(connection, f"/maps/leafy/layers/leafy/{fresh[0]}/{fresh[1]}/{fresh[2]}.png")
                check("after the file is replaced, tiles come from the new file", status == 200 and body == new_tiles[fresh], status)

                # nginx stops: an uncached tile is 503 with Retry-After; it comes back with nginx.
                nginx.terminate()
                nginx.wait()
                later = next(zxy for zxy in sorted(new_tiles) if zxy not in served and zxy != fresh and zxy[0] == 7)
                connection.request("GET", f"/maps/leafy/layers/leafy/{later[0]}/{later[1]}/{later[2]}.png")
                response = connection.getresponse()
                response.read()
                check("with the file's server down, a tile is 503 with Retry-After", response.status == 503
                      and response.getheader("Retry-After") is not None, response.status)
                nginx, _, _ = start_nginx(folder, www, port=port)
                status, body = fetch(connection, f"/maps/leafy/layers/leafy/{later[0]}/{later[1]}/{later[2]}.png")
                check("and served once it is back", status == 200 and body == new_tiles[later], status)
            finally:
                server.send_signal(signal.SIGTERM)
                code = server.wait(timeout=30)
            check("tilekit serve URL stops cleanly", code == 0, code)

            project = os.path.join(folder, "map.json")
            with open(project, "w") as f:
                json.dump({"name": "remote", "layers": [{"id": "cdn", "type": "tiles", "source": url}]}, f)
            server, serve_port = start_serve(tilekit, project, folder)
            try:
                connection = http.client.HTTPConnection("127.0.0.1", serve_port, timeout=30)
                zxy = next(iter(sorted(new_tiles)))
                status, body = fetch(connection, f"/maps/remote/layers/cdn/{zxy[0]}/{zxy[1]}/{zxy[2]}.png")
                check("a map.json tiles layer may be a PMTiles URL", status == 200 and body == new_tiles[zxy], status)
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(timeout=30)

            missing = run(tilekit, "info", f"http://127.0.0.1:{port}/missing.pmtiles")
            check("a 404 exits 74 naming the URL", missing.returncode == 74 and "missing.pmtiles" in missing.stderr
                  and "HTTP 404" in missing.stderr, missing.stderr)
            page = run(tilekit, "info", f"http://127.0.0.1:{port}/page.pmtiles")
            check("a body that is not PMTiles exits 65", page.returncode == 65 and "not a PMTiles file" in page.stderr, page.stderr)
            down = run(tilekit, "serve", f"http://127.0.0.1:{free_port()}/leafy.pmtiles", "--port", "0")
            check("an unreachable URL exits 74", down.returncode == 74 and "cannot reach the server" in down.stderr, down.stderr)
        finally:
            nginx.terminate()
            nginx.wait()
    return summary("PMTiles over HTTP")


if __name__ == "__main__":
    sys.exit(main())
