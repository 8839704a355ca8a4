#!/usr/bin/python3
"""Mapnik's side of the feature-layer benchmark (run with Debian's python3, which has
python3-mapnik): renders every 256 px tile of a box at one zoom from a GeoJSON file with
a style like TileKit's simplestyle defaults, once only drawn and once drawn and encoded as
full-colour PNG (zlib level 2), on one core. Prints one JSON line.

usage: bench-mapnik.py GEOJSON W,S,E,N ZOOM SECONDS
"""
import json
import math
import sys
import time

import mapnik

STYLE = """<Map srs="epsg:3857" background-color="transparent">
  <Style name="features">
    <Rule>
      <Filter>[mapnik::geometry_type]=polygon</Filter>
      <PolygonSymbolizer fill="#7fa65a" fill-opacity="0.6"/>
      <LineSymbolizer stroke="#4a3520" stroke-width="1.5" stroke-linejoin="round" stroke-linecap="round"/>
    </Rule>
    <Rule>
      <Filter>[mapnik::geometry_type]=linestring</Filter>
      <LineSymbolizer stroke="#1f5fbf" stroke-width="2" stroke-linejoin="round" stroke-linecap="round"/>
    </Rule>
  </Style>
  <Layer name="features" srs="epsg:4326">
    <StyleName>features</StyleName>
    <Datasource><Parameter name="type">geojson</Parameter><Parameter name="file">{file}</Parameter></Datasource>
  </Layer>
</Map>"""


def tiles(west, south, east, north, zoom):
    n = 2 ** zoom
    def x(lon): return int((lon + 180) / 360 * n)
    def y(lat):
        r = math.radians(lat)
        return int((1 - math.log(math.tan(r) + 1 / math.cos(r)) / math.pi) / 2 * n)
    return [(zoom, tx, ty) for tx in range(x(west), x(east) + 1) for ty in range(y(north), y(south) + 1)]


def mercator_bounds(z, x, y):
    size = 2 * math.pi * 6378137 / 2 ** z
    west = -math.pi * 6378137 + x * size
    north = math.pi * 6378137 - y * size
    return mapnik.Box2d(west, north - size, west + size, north)


def main():
    path, bbox, zoom, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    m = mapnik.Map(256, 256)
    mapnik.load_map_from_string(m, STYLE.replace("{file}", path))
    m.buffer_size = 96  # TileKit draws features within 96 px of a tile too
    todo = tiles(*map(float, bbox.split(",")), zoom)

    def rate(encode):
        count, size, start = 0, 0, time.perf_counter()
        while True:
            for tile in todo:
                m.zoom_to_box(mercator_bounds(*tile))
                image = mapnik.Image(256, 256)
                mapnik.render(m, image)
                if encode:
                    size += len(image.tostring("png32:z=2"))
                count += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                return count / elapsed, size // count

    drawn, _ = rate(False)
    encoded, mean_bytes = rate(True)
    print(json.dumps({"tiles": len(todo), "drawn_per_second": drawn, "png_per_second": encoded, "mean_bytes": mean_bytes}))


if __name__ == "__main__":
    main()
