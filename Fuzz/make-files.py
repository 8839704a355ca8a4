#!/usr/bin/env python3
"""Writes the generated files of Fuzz/: seed inputs (corpus/<target>/) and the known crash
inputs of issue 11 (crashes/<target>/). Deterministic: a second run writes the same bytes.

    python3 Fuzz/make-files.py          # needs Pillow (a test dependency: scripts/install-test-deps.sh)

Seeds copied from the repository (Examples/, test goldens) and the inputs the fuzzer found
are committed as they are; this script does not touch them.
"""
import gzip
import io
import os
import sqlite3
import struct
import zlib

from PIL import Image, ImageDraw

ROOT = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(ROOT)


def write(kind, target, name, data):
    folder = os.path.join(ROOT, kind, target)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


def seed(target, name, data):
    write("corpus", target, name, data)


def crash(target, name, data):
    write("crashes", target, name, data)


def copy(target, path, name=None):
    with open(os.path.join(REPO, path), "rb") as f:
        seed(target, name or os.path.basename(path), f.read())


def gz(data):
    # mtime 0: the same bytes on every run.
    return gzip.compress(data, compresslevel=6, mtime=0)


# ---------------------------------------------------------------- images

def picture(size=(16, 16), mode="RGBA"):
    """A small image with edges, a gradient and transparency: something for every filter."""
    w, h = size
    image = Image.new("RGBA", size, (240, 230, 200, 255))
    draw = ImageDraw.Draw(image)
    for x in range(w):
        draw.line([(x, 0), (x, h // 2)], fill=(x * 255 // max(1, w - 1), 80, 160, 255))
    draw.ellipse([w // 4, h // 4, 3 * w // 4, 3 * h // 4], fill=(200, 30, 30, 128))
    draw.rectangle([0, h - 3, w - 1, h - 1], fill=(0, 0, 0, 0))
    return image.convert(mode) if mode != "RGBA" else image


def encode(image, fmt, **options):
    out = io.BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()


def png_chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bomb(width, height):
    """A valid black-and-white PNG of width x height, all black: 1 bit a pixel compresses
    about 1000:1, so 50000 x 50000 (10 GB as RGBA) fits in ~300 KB."""
    row = b"\0" * (1 + (width + 7) // 8)
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    compressor = zlib.compressobj(9)
    data = b"".join(compressor.compress(row * 1000) for _ in range(height // 1000))
    data += compressor.compress(row * (height % 1000)) + compressor.flush()
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", data) + png_chunk(b"IEND", b"")


def jpeg_declaring(width, height):
    """A valid small baseline JPEG with its frame header (SOF0) rewritten to width x height."""
    data = bytearray(encode(picture((16, 16), "RGB"), "JPEG", quality=80))
    at = data.index(b"\xff\xc0")
    struct.pack_into(">HH", data, at + 5, height, width)
    return bytes(data)


def images():
    rgba = picture()
    # PNG: every colour type, bit depths, palette with transparency, interlacing, 16 bits.
    seed("png", "rgba.png", encode(rgba, "PNG"))
    seed("png", "rgb.png", encode(rgba.convert("RGB"), "PNG"))
    seed("png", "grey.png", encode(rgba.convert("L"), "PNG"))
    seed("png", "grey-alpha.png", encode(rgba.convert("LA"), "PNG"))
    seed("png", "palette.png", encode(rgba.convert("P"), "PNG", transparency=0))
    seed("png", "1bit.png", encode(rgba.convert("1"), "PNG"))
    seed("png", "interlaced.png", encode(rgba, "PNG", interlace=1))
    seed("png", "16bit-grey.png", encode(rgba.convert("I;16"), "PNG"))
    seed("png", "wide.png", encode(picture((40, 3)), "PNG"))
    seed("png", "one-pixel.png", encode(Image.new("RGBA", (1, 1), (1, 2, 3, 4)), "PNG"))
    # JPEG: baseline, progressive, greyscale, 4:4:4, CMYK, restart markers.
    rgb = rgba.convert("RGB")
    seed("jpeg", "baseline.jpg", encode(rgb, "JPEG", quality=80))
    seed("jpeg", "progressive.jpg", encode(rgb, "JPEG", quality=80, progressive=True))
    seed("jpeg", "grey.jpg", encode(rgba.convert("L"), "JPEG"))
    seed("jpeg", "444.jpg", encode(rgb, "JPEG", subsampling=0))
    seed("jpeg", "cmyk.jpg", encode(rgb.convert("CMYK"), "JPEG"))
    seed("jpeg", "odd-size.jpg", encode(picture((13, 7), "RGB"), "JPEG"))
    # WebP: lossy, lossy with alpha, lossless, animated (two frames).
    seed("webp", "lossy.webp", encode(rgb, "WEBP", quality=80))
    seed("webp", "lossy-alpha.webp", encode(rgba, "WEBP", quality=80))
    seed("webp", "lossless.webp", encode(rgba, "WEBP", lossless=True))
    second = rgba.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    seed("webp", "animated.webp", encode(rgba, "WEBP", save_all=True, append_images=[second], duration=100, lossless=True))
    # TIFF: strips and tiles, compressions, greyscale, palette, 16 bits, both byte orders.
    seed("tiff", "rgba-raw.tif", encode(rgba, "TIFF"))
    seed("tiff", "rgb-lzw.tif", encode(rgb, "TIFF", compression="tiff_lzw"))
    seed("tiff", "rgb-deflate.tif", encode(rgb, "TIFF", compression="tiff_adobe_deflate"))
    seed("tiff", "rgb-packbits.tif", encode(rgb, "TIFF", compression="packbits"))
    seed("tiff", "rgb-jpeg.tif", encode(picture((16, 16), "RGB"), "TIFF", compression="jpeg"))
    seed("tiff", "grey.tif", encode(rgba.convert("L"), "TIFF"))
    seed("tiff", "palette.tif", encode(rgba.convert("P"), "TIFF"))
    seed("tiff", "16bit.tif", encode(rgba.convert("I;16"), "TIFF"))
    seed("tiff", "tiled.tif", encode(picture((32, 32), "RGB"), "TIFF", tiffinfo={322: 16, 323: 16}))
    seed("tiff", "rows-per-strip-3.tif", encode(rgb, "TIFF", tiffinfo={278: 3}))
    seed("tiff", "1bit-group4.tif", encode(rgba.convert("1"), "TIFF", compression="group4"))

    # Issue 11: images that declare more pixels than any map needs.
    crash("png", "50000x50000.png", png_bomb(50000, 50000))
    crash("jpeg", "declares-65000x65000.jpg", jpeg_declaring(65000, 65000))
    # A real 16383 x 16383 WebP (lossless, one colour: a few hundred bytes that decode to 1 GiB).
    bomb = Image.new("L", (16383, 16383), 0)
    crash("webp", "16383x16383.webp", encode(bomb, "WEBP", lossless=True, quality=0, method=0))
    del bomb


def png_filtered(samples, width, height, bpp, filters):
    """Rows filtered as PNG does (spec section 9), the filter type of row y filters[y % len]."""
    stride = width * bpp
    out = bytearray()
    for y in range(height):
        kind = filters[y % len(filters)]
        out.append(kind)
        for i in range(stride):
            x = samples[y * stride + i]
            a = samples[y * stride + i - bpp] if i >= bpp else 0
            b = samples[(y - 1) * stride + i] if y > 0 else 0
            c = samples[(y - 1) * stride + i - bpp] if i >= bpp and y > 0 else 0
            if kind == 1:
                x -= a
            elif kind == 2:
                x -= b
            elif kind == 3:
                x -= (a + b) // 2
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                x -= a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            out.append(x & 0xFF)
    return bytes(out)


def png_of(width, height, colour_type, samples, filters=(0, 1, 2, 3, 4), before=(), after=(), idat_splits=()):
    """A PNG put together chunk by chunk: 8 bits, no interlace, `before` chunks (PLTE, tRNS,
    gAMA...) between IHDR and IDAT, the zlib stream cut into IDATs at `idat_splits`."""
    bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour_type]
    stream = zlib.compress(png_filtered(samples, width, height, bpp, filters), 6)
    bounds = [0, *idat_splits, len(stream)]
    out = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0))
    out += b"".join(png_chunk(kind, data) for kind, data in before)
    out += b"".join(png_chunk(b"IDAT", stream[bounds[i]:bounds[i + 1]]) for i in range(len(bounds) - 1))
    out += b"".join(png_chunk(kind, data) for kind, data in after)
    return out + png_chunk(b"IEND", b"")


def noise(count, seed, below=256):
    """Seeded bytes below `below` (a 64-bit LCG, as the Swift tests use)."""
    state, out = seed, bytearray()
    for _ in range(count):
        state = (state * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        out.append((state >> 33) % below)
    return bytes(out)


def deflate_fixed(symbols):
    """A zlib stream of one fixed-Huffman deflate block (RFC 1951 3.2.6) of (kind, value)
    symbols: ("lit", 0-287) a literal/length code, ("dist", 0-31) a distance code, ("bits",
    (value, count)) extra bits. Any code at all, the ones zlib refuses too; no Adler-32."""
    out, acc, n = bytearray(b"\x78\x01"), 0, 0

    def put(value, count, msb_first=False):
        nonlocal acc, n
        order = reversed(range(count)) if msb_first else range(count)
        for i in order:
            acc |= ((value >> i) & 1) << n
            n += 1
            if n == 8:
                out.append(acc)
                acc, n = 0, 0

    put(1, 1)  # BFINAL
    put(1, 2)  # BTYPE 01: fixed codes
    for kind, value in symbols + [("lit", 256)]:
        if kind == "lit":
            code, length = ((0x30 + value, 8) if value < 144 else (0x190 + value - 144, 9) if value < 256
                            else (value - 256, 7) if value < 280 else (0xC0 + value - 280, 8))
            put(code, length, msb_first=True)
        elif kind == "dist":
            put(value, 5, msb_first=True)
        else:
            put(*value)
    if n:
        out.append(acc)
    return bytes(out)


def png_reader_crashes():
    """PNGs whose deflate stream libdeflate inflates and zlib refuses: PNGReader decodes
    them, libpng does not (crashes/README.md). Gray, all zeros, the Adler-32 right."""
    def gray(width, height, stream):
        stream += struct.pack(">I", zlib.adler32(bytes((width + 1) * height)))
        return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
                + png_chunk(b"IDAT", stream) + png_chunk(b"IEND", b""))
    # A zero, then length code 286 (read by libdeflate as 258, like 285) at distance 1.
    crash("pngreader", "length-code-286.png", gray(258, 1, deflate_fixed([("lit", 0), ("lit", 286), ("dist", 0)])))
    # A zero, 256 copies of 258 at distance 1, the 201st at distance code 30 (read as 29's
    # 24577 + 13 extra bits) instead: 257 rows of 257 bytes.
    copies = [[("lit", 285), ("dist", 30), ("bits", (0, 13))] if m == 200 else [("lit", 285), ("dist", 0)] for m in range(256)]
    crash("pngreader", "distance-code-30.png", gray(256, 257, deflate_fixed([("lit", 0)] + [s for c in copies for s in c])))


def png_reader_seeds():
    """For `pngreader` (PNGReader against libpng): every colour type and filter type, the
    chunks PNGReader reads or leaves to libpng, IDATs split. Small: 8 x 6 px, or 16 x 16."""
    palette = noise(16 * 3, 7)
    for colour_type, name in [(0, "gray"), (2, "rgb"), (3, "palette"), (4, "gray-alpha"), (6, "rgba")]:
        bpp = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour_type]
        samples = noise(8 * 6 * bpp, colour_type + 1, 16 if colour_type == 3 else 256)
        before = [(b"PLTE", palette)] if colour_type == 3 else []
        seed("pngreader", f"{name}-filters-0-4.png", png_of(8, 6, colour_type, samples, before=before))
    rgba = noise(16 * 16 * 4, 11)
    for kind in range(5):
        seed("pngreader", f"rgba-16x16-filter-{kind}.png", png_of(16, 16, 6, rgba, filters=(kind,)))
    seed("pngreader", "rgba-four-idats.png", png_of(16, 16, 6, rgba, idat_splits=(1, 100, 100)))
    indices = noise(8 * 6, 5, 16)
    seed("pngreader", "palette-trns.png", png_of(8, 6, 3, indices, before=[(b"PLTE", palette), (b"tRNS", noise(9, 3))]))
    gray = noise(8 * 6, 2)
    seed("pngreader", "gray-key.png", png_of(8, 6, 0, gray, before=[(b"tRNS", bytes([0, gray[3]]))]))
    rgb = noise(8 * 6 * 3, 3)
    seed("pngreader", "rgb-key.png", png_of(8, 6, 2, rgb, before=[(b"tRNS", bytes([0, rgb[3], 0, rgb[4], 0, rgb[5]]))]))
    colour = [(b"gAMA", struct.pack(">I", 45455)), (b"sRGB", b"\0"), (b"cHRM", struct.pack(">8I", 31270, 32900, 64000, 33000, 30000, 60000, 15000, 6000)),
              (b"sBIT", b"\x08\x08\x08"), (b"iCCP", b"x\0\0" + zlib.compress(b"\7" * 200, 6)), (b"tEXt", b"Software\0seed")]
    seed("pngreader", "rgb-colour-chunks.png", png_of(8, 6, 2, rgb, before=colour, after=[(b"tIME", bytes([7, 234, 12, 2, 0, 0, 0]))]))
    seed("pngreader", "rgb-gamma-1.png", png_of(8, 6, 2, rgb, before=[(b"gAMA", struct.pack(">I", 100000))]))
    seed("pngreader", "rgba-1x1.png", png_of(1, 1, 6, bytes([1, 2, 3, 4])))
    # Recipes (PNGRecipe in Sources/TileKitFuzz/PNGReaderTarget.swift): colour type, width - 1,
    # height - 1, options, palette entries - 1, then the gamma byte, filters, palette, tRNS, samples.
    for colour, options in [(0, 0b0000001), (1, 0b0010011), (2, 0b0000101), (3, 0b1001000), (4, 0b0100110), (2, 0b0001101)]:
        header = bytes([colour, 11, 7, options, 15])
        seed("pngreader", f"recipe-type{[0, 2, 3, 4, 6][colour]}-{options:07b}.bin", header + noise(600, colour * 16 + options))


# ---------------------------------------------------------------- world files

def world_files():
    def text(a, d, b, e, c, f):
        return "\n".join(repr(float(v)) for v in (a, d, b, e, c, f)) + "\n"

    seed("worldfile", "degrees.pgw", text(0.01, 0, 0, -0.01, -10.005, 50.005))
    meters = text(2.388657133911758, 0, 0, -2.388657133911758, -8238000.0, 4979000.0)
    seed("worldfile", "meters.pgw", "EPSG:3857\n" + meters)
    seed("worldfile", "degrees-named.pgw", "EPSG:4326\n" + text(0.001, 0, 0, -0.001, 24.9, 60.2))
    seed("worldfile", "rotated.jgw", text(0.01, 0.002, 0.002, -0.01, 5.0, 45.0))
    seed("worldfile", "world-16384.tfw", text(360 / 16384, 0, 0, -170 / 8192, -180 + 180 / 16384, 85 - 85 / 8192))
    seed("worldfile", "crlf.wld", text(0.005, 0, 0, -0.005, 0.0025, 10.0025).replace("\n", "\r\n"))
    seed("worldfile", "exponents.pgw", "1e-2\n0\n0\n-1e-2\n-7.4E1\n4.07e1\n")
    # Issue 11: a top-left latitude of 91, a positive y scale (rows going north), 2^32 m pixels.
    crash("worldfile", "latitude-91.pgw", text(0.001, 0, 0, -0.001, 10.0005, 91.0))
    crash("worldfile", "positive-y-scale.pgw", text(0.01, 0, 0, 0.01, -10.005, 40.005))
    crash("worldfile", "pixel-2e32.pgw", text(2.0 ** 32, 0, 0, -(2.0 ** 32), 0, 0))
    crash("worldfile", "pixel-2e32-meters.pgw", "EPSG:3857\n" + text(2.0 ** 32, 0, 0, -(2.0 ** 32), 0, 0))
    crash("worldfile", "mercator-read-as-degrees.pgw", meters)


# ---------------------------------------------------------------- XML and JSON

def xml_crashes():
    comment = b"<!--\x8b-->"  # 8 bytes: invalid UTF-8 inside a comment
    for target, extension in [("gpx", "gpx"), ("kml", "kml"), ("plist", "plist")]:
        crash(target, "comment-invalid-utf8." + extension, comment)
    # 37,000 nested elements (one file: GPX, KML and plists share the XML reader).
    depth = 37_000
    crash("gpx", "nested-37000.gpx", '<?xml version="1.0"?><gpx version="1.1">' + "<a>" * depth + "</a>" * depth + "</gpx>")
    # Billion laughs: ten levels of ten references, 10^9 "lol"s once expanded.
    entities = ['<!ENTITY lol0 "lol">'] + [
        '<!ENTITY lol%d "%s">' % (i, ("&lol%d;" % (i - 1)) * 10) for i in range(1, 10)]
    crash("gpx", "billion-laughs.gpx", '<?xml version="1.0"?>\n<!DOCTYPE gpx [\n ' + "\n ".join(entities) + "\n]>\n"
          '<gpx version="1.1"><wpt lat="1" lon="2"><name>&lol9;</name></wpt></gpx>\n')


def feature_seeds():
    for path in ["Examples/central-park/landmarks.geojson", "Examples/magic-mountain/art.geojson"]:
        if not os.path.exists(os.path.join(REPO, path)):
            # landmarks.geojson is made from OSM data by `make demo`; the corpus keeps the copy
            # committed from a run that had it.
            print(f"skipped {path}: not made yet (`make demo` makes it); the corpus keeps its committed copy")
            continue
        copy("geojson", path)
        copy("snapshot", path)
    samples = {
        "point.geojson": '{"type": "Point", "coordinates": [-73.97, 40.77]}',
        "multipoint.geojson": '{"type": "MultiPoint", "coordinates": [[0, 0], [1.5, -2.25]]}',
        "linestring.geojson": '{"type": "Feature", "properties": {"stroke": "#f00", "stroke-width": 4, "stroke-opacity": 0.5,'
                              ' "stroke-dash": [4, 2]}, "geometry": {"type": "LineString", "coordinates": [[0, 0], [10, 10], [20, 0]]}}',
        "multilinestring.geojson": '{"type": "MultiLineString", "coordinates": [[[0, 0], [1, 1]], [[2, 2], [3, 3]]]}',
        "polygon-hole.geojson": '{"type": "Feature", "properties": {"fill": "#0a0", "fill-opacity": 0.3, "title": "Park",'
                                ' "description": "with a lake"}, "geometry": {"type": "Polygon", "coordinates": ['
                                '[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]], [[1, 1], [2, 1], [2, 2], [1, 1]]]}}',
        "multipolygon.geojson": '{"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[5, 5], [6, 5], [6, 6], [5, 5]]]]}',
        "collection.geojson": '{"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [1, 2]},'
                              ' {"type": "LineString", "coordinates": [[1, 2], [3, 4]]}]}',
        "markers.geojson": '{"type": "FeatureCollection", "features": ['
                           '{"type": "Feature", "id": 7, "properties": {"title": "Café", "marker-color": "#3bb2d0", "marker-size": "large",'
                           ' "marker-symbol": "star"}, "geometry": {"type": "Point", "coordinates": [2.35, 48.85]}},'
                           '{"type": "Feature", "properties": {"marker-image": "icon.png", "marker-anchor": [0.5, 1]},'
                           ' "geometry": {"type": "Point", "coordinates": [2.36, 48.86]}},'
                           '{"type": "Feature", "properties": {"radius": 250, "fill": "#f80"}, "geometry": {"type": "Point", "coordinates": [2.34, 48.84]}},'
                           '{"type": "Feature", "properties": null, "geometry": null}]}',
        "image-overlays.geojson": '{"type": "FeatureCollection", "features": ['
                                  '{"type": "Feature", "properties": {"image": "map.png", "image-bbox": [-10, 40, 10, 50], "image-opacity": 0.6},'
                                  ' "geometry": null},'
                                  '{"type": "Feature", "properties": {"image": "scan.png", "image-corners": [[-5, 45], [5, 46], [6, 40], [-4, 39]]},'
                                  ' "geometry": null}]}',
        "renderers.geojson": '{"type": "FeatureCollection", "features": ['
                             '{"type": "Feature", "properties": {"renderer": "shimmer"}, "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}},'
                             '{"type": "Feature", "properties": {"renderer": "wobbly"}, "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}},'
                             '{"type": "Feature", "properties": {"renderer": "hatch"}, "geometry": {"type": "Polygon", "coordinates": [[[2, 2], [3, 2], [3, 3], [2, 2]]]}}]}',
        "antimeridian.geojson": '{"type": "LineString", "coordinates": [[179.5, 10], [-179.5, 11]]}',
        "mercator-limits.geojson": '{"type": "Feature", "properties": {"fill": "#00f"}, "geometry": {"type": "Polygon", '
                                   '"coordinates": [[[-180, -85], [180, -85], [180, 85], [-180, 85], [-180, -85]]]}}',
        "elevation.geojson": '{"type": "LineString", "coordinates": [[0, 0, 100], [1, 1, 200.5]]}',
    }
    for name, text in samples.items():
        seed("geojson", name, text)
        seed("snapshot", name, text)

    raster_seeds()

    # Issue 11: a snapshot fitted to an image overlay that reaches latitude -90.
    crash("snapshot", "overlay-to-latitude-90.geojson", '{"type": "Feature", "properties": {"image": "map.png", "image-bbox": [-180, -90, 180, 90]},'
                                                      ' "geometry": null}')

    copy("gpx", "Examples/central-park/game-test.gpx")
    seed("gpx", "track-times.gpx", """<?xml version="1.0" encoding="UTF-8"?>
<gpx version="1.1" creator="tilekit" xmlns="http://www.topografix.com/GPX/1/1">
  <metadata><name>Morning</name></metadata>
  <wpt lat="60.17" lon="24.94"><ele>12</ele><name>Start</name><desc>Market square</desc><sym>Flag</sym></wpt>
  <trk><name>Walk</name><desc>along the shore</desc>
    <trkseg>
      <trkpt lat="60.1675" lon="24.9520"><ele>5</ele><time>2024-05-01T07:00:00Z</time></trkpt>
      <trkpt lat="60.1680" lon="24.9555"><ele>6.5</ele><time>2024-05-01T07:01:10.5Z</time></trkpt>
      <trkpt lat="60.1690" lon="24.9600"><time>2024-05-01T07:03:00+02:00</time></trkpt>
    </trkseg>
    <trkseg><trkpt lat="60.17" lon="24.97"/><trkpt lat="60.171" lon="24.98"/></trkseg>
  </trk>
</gpx>
""")
    seed("gpx", "route.gpx", """<?xml version="1.0"?>
<gpx version="1.0" creator="x"><rte><name>R</name><rtept lat="-33.86" lon="151.21"><name>A</name></rtept>
<rtept lat="-33.87" lon="151.22"/><rtept lat="-33.88" lon="151.20"/></rte></gpx>
""")
    seed("gpx", "waypoints-cdata.gpx", """<?xml version="1.0" encoding="UTF-8"?>
<!-- comment --><gpx version="1.1"><wpt lat="0" lon="0"><name><![CDATA[Null & Island]]></name></wpt>
<wpt lat="-90" lon="180"><name>South &amp; east</name></wpt><wpt lat="90" lon="-180"/></gpx>
""")

    seed("kml", "placemarks.kml", """<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2"><Document><name>Places</name>
  <Style id="red"><LineStyle><color>ff0000ff</color><width>3</width></LineStyle><PolyStyle><color>7f00ff00</color><fill>1</fill></PolyStyle>
    <IconStyle><color>ff00ffff</color><Icon><href>pin.png</href></Icon></IconStyle></Style>
  <StyleMap id="both"><Pair><key>normal</key><styleUrl>#red</styleUrl></Pair><Pair><key>highlight</key><styleUrl>#red</styleUrl></Pair></StyleMap>
  <Placemark><name>Point</name><description>here</description><styleUrl>#both</styleUrl><Point><coordinates>24.94,60.17,0</coordinates></Point></Placemark>
  <Placemark><styleUrl>#red</styleUrl><LineString><coordinates>24.94,60.17 24.95,60.18
    24.96,60.17</coordinates></LineString></Placemark>
  <Placemark><Polygon><outerBoundaryIs><LinearRing><coordinates>0,0 1,0 1,1 0,0</coordinates></LinearRing></outerBoundaryIs>
    <innerBoundaryIs><LinearRing><coordinates>0.2,0.2 0.4,0.2 0.4,0.4 0.2,0.2</coordinates></LinearRing></innerBoundaryIs></Polygon></Placemark>
  <Placemark><MultiGeometry><Point><coordinates>1,1</coordinates></Point><LineString><coordinates>1,1 2,2</coordinates></LineString></MultiGeometry></Placemark>
  <GroundOverlay><name>Scan</name><Icon><href>scan.png</href></Icon><LatLonBox><north>61</north><south>60</south><east>25</east><west>24</west></LatLonBox></GroundOverlay>
</Document></kml>
""")
    seed("kml", "folder-multigeometry.kml", """<kml><Folder><Placemark><Style><LineStyle><width>1.5</width></LineStyle></Style>
<LineString><coordinates> -122.0,37.0,10 -122.1,37.1,20 </coordinates></LineString></Placemark></Folder></kml>
""")
    for name in ["BatmanLocations.plist", "EntranceToGoliathRoute.plist", "MagicMountain.plist", "MagicMountainAttractions.plist"]:
        copy("plist", "Examples/magic-mountain/" + name)
    seed("plist", "types.plist", """<?xml version="1.0" encoding="UTF-8"?>
<plist version="1.0"><dict><key>name</key><string>x</string><key>n</key><integer>-3</integer><key>r</key><real>2.5e1</real>
<key>t</key><true/><key>f</key><false/><key>d</key><date>2024-05-01T10:00:00Z</date><key>b</key><data>AAEC</data>
<key>location</key><string>{1.5, -2}</string><key>a</key><array/></dict></plist>
""")


def map_json_seeds():
    for name in ["central-park", "historic-overlay", "magic-mountain"]:
        copy("mapjson", "Examples/%s/map.json" % name, name + ".json")
    # Maps over the files the target puts beside map.json (Sources/TileKitFuzz/MapJSONTarget.swift).
    seed("mapjson", "every-layer.json", """{
  "name": "every-layer", "title": "Every layer", "attribution": "fuzz", "description": "one of each",
  "center": [0, 0], "zoom": 1, "minzoom": 0, "maxzoom": 4, "bounds": [-180, -85, 180, 85], "missing-tile": 404, "cors": "*",
  "layers": [
    {"id": "mb", "title": "MBTiles", "type": "tiles", "source": "tiles.mbtiles", "base": true, "native-maxzoom": 1, "fallback": "parchment.png",
     "max-age": 60, "format": "png", "tile-size": 256},
    {"id": "pm", "type": "tiles", "source": "tiles.pmtiles", "opacity": 0.5, "zindex": 2, "replaces-base": false},
    {"id": "folder", "type": "tiles", "source": "tiles", "scheme": "xyz", "native-minzoom": 0, "native-maxzoom": 0, "visible": false},
    {"id": "grid", "type": "generated", "generator": "debug-grid", "base": true, "visible": false},
    {"id": "paper", "type": "generated", "generator": "parchment", "base": true, "visible": false},
    {"id": "pins", "type": "features", "files": ["features.geojson", "places.kml", "route.gpx"], "zindex": 10, "antialias": "fast"},
    {"id": "park", "type": "features", "files": ["park.plist"], "overlay-image": "parchment.png", "minzoom": 1, "maxzoom": 3}
  ],
  "game": {"pois": "pois.geojson", "routes": {"walk": "route.gpx"}, "speed": 2, "tick": 0.5, "time-warp": 10, "autoplay": "walk"}
}
""")
    seed("mapjson", "remote.json", """{"name": "remote", "layers": [
  {"id": "osm", "type": "remote", "source": "https://{s}.tile.example.org/{z}/{x}/{y}{r}.png", "subdomains": "abc",
   "cache": "cache.mbtiles", "user-agent": "tilekit-fuzz/1.0", "max-age": 86400, "base": true},
  {"id": "bing", "type": "remote", "source": "https://t{s}.example.net/tiles/a{q}.jpeg", "subdomains": "0,1,2,3", "user-agent": "x", "format": "jpg"}]}
""")
    seed("mapjson", "minimal.json", '{"layers": [{"id": "t", "source": "tiles.mbtiles"}]}')
    seed("mapjson", "bounds-antimeridian.json", '{"name": "am", "bounds": [170, -10, -170, 10], "center": [180, 0], '
                                                '"layers": [{"id": "f", "files": ["features.geojson"]}]}')


def url_template_seeds():
    for name, text in {
        "osm.txt": "https://{s}.tile.openstreetmap.org/{z}/{x}/{y}.png\nabc\n",
        "tms.txt": "http://localhost:8080/tiles/{z}/{x}/{-y}.jpg\n\n",
        "retina.txt": "https://tiles.example.com/{z}/{x}/{y}{r}.png?key={apikey}\na\napikey=secret\n",
        "quadkey.txt": "https://ecn.t{s}.tiles.example.net/tiles/a{q}.jpeg?g=1\nt0,t1,t2,t3\n",
        "variables.txt": "https://{s}.example.org/{variant}/{z}/{x}/{y}@{scale}x.webp\nab\nvariant=dark\nscale=2\n",
        "quadkey-long.txt": "{quadkey}\n",
        "unicode.txt": "https://kartta.example.fi/näkymä/{z}/{x}/{y}.png\n",
    }.items():
        seed("urltemplate", name, text)


def route_seeds():
    paths = [
        "/", "/health", "/metrics", "/favicon.ico", "/assets/leaflet.js", "/assets/images/layers-2x.png",
        "/maps/central-park", "/maps/central-park/", "/maps/central-park.json", "/maps/central-park/16/19299/24630.png",
        "/maps/central-park/16/19299/24630@2x.webp", "/maps/x/0/0/0@3x.jpg", "/maps/x/layers/pins.json",
        "/maps/x/layers/pins/15/9649/12315.png", "/maps/x/play", "/maps/x/warps/station-1.json", "/maps/x/features/pins.geojson",
        "/maps/x/static/-73.97,40.77,15/600x400@2x.png?markers=-73.97,40.77,red,star|-73.96,40.78&path=-73.97,40.77;-73.96,40.78",
        "/maps/x/static/auto/300x200.json?path=enc:_p~iF~ps|U_ulLnnqC_mqNvxq`@&padding=10",
        "/maps/x/static/-74.0,40.7,-73.9,40.8/256x256.jpg", "/maps/x/%2e%2e/secret", "/maps/x/16/1%2C2/3.png",
    ]
    for i, path in enumerate(paths):
        seed("route", "path-%02d.txt" % i, path)


def http1_seeds():
    """Answers for the `http1` target (Sources/TileKitFuzz/HTTP1Target.swift): a byte for
    the size of the pieces they arrive in, then an HTTP/1 response."""
    png = bytes.fromhex("89504e470d0a1a0a")
    answers = [
        b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: 8\r\nETag: \"a1\"\r\n\r\n" + png,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\n" + png[:4] + b"\r\n4\r\n" + png[4:] + b"\r\n0\r\nX-Trailer: 1\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nContent-Type: image/png\r\n\r\n" + png,
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 304 Not Modified\r\nCache-Control: max-age=60\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n",
        b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nConnection: close\r\nContent-Length: 4\r\n\r\nbusy",
        b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\nContent-Length: 3\nX-A: 1\nx-a: 2\n\nabc",
    ]
    for i, answer in enumerate(answers):
        seed("http1", "answer-%02d.bin" % i, bytes([i * 9 % 64]) + answer)


# ---------------------------------------------------------------- stores

def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def directory(entries):
    """A PMTiles v3 directory before compression: (tile id, offset, length, run length)."""
    out = bytearray(varint(len(entries)))
    last = 0
    for tile_id, _, _, _ in entries:
        out += varint(tile_id - last)
        last = tile_id
    for _, _, _, run in entries:
        out += varint(run)
    for _, _, length, _ in entries:
        out += varint(length)
    for i, (_, offset, _, _) in enumerate(entries):
        previous = entries[i - 1] if i else None
        out += varint(0 if previous and offset == previous[1] + previous[2] else offset + 1)
    return bytes(out)


def pmtiles(root, leaves=b"", metadata=b'{"name":"seed","attribution":"fuzz"}', tiles=b"", min_zoom=0, max_zoom=2,
            center_zoom=1, compress=True, tile_type=2, **overrides):
    pack = gz if compress else (lambda b: b)
    root_bytes, metadata_bytes = pack(root), pack(metadata)
    fields = {
        "root_offset": 127, "root_length": len(root_bytes),
        "metadata_offset": 127 + len(root_bytes), "metadata_length": len(metadata_bytes),
    }
    fields["leaf_offset"] = fields["metadata_offset"] + fields["metadata_length"]
    fields["leaf_length"] = len(leaves)
    fields["data_offset"] = fields["leaf_offset"] + len(leaves)
    fields["data_length"] = len(tiles)
    fields.update(overrides)
    header = b"PMTiles" + bytes([3]) + struct.pack(
        "<QQQQQQQQQQQ", fields["root_offset"], fields["root_length"], fields["metadata_offset"], fields["metadata_length"],
        fields["leaf_offset"], fields["leaf_length"], fields["data_offset"], fields["data_length"], 3, 2, 1)
    header += bytes([1, 2 if compress else 1, 1, tile_type, min_zoom, max_zoom])
    header += struct.pack("<iiii", -1800000000, -850511287, 1800000000, 850511287)
    header += bytes([center_zoom]) + struct.pack("<ii", 0, 0)
    assert len(header) == 127
    return header + root_bytes + metadata_bytes + leaves + tiles


def stores():
    tile_a = encode(Image.new("RGB", (256, 256), (200, 220, 240)), "PNG")
    tile_b = encode(picture((256, 256), "RGB"), "PNG")
    tiles = tile_a + tile_b
    a, b = (0, len(tile_a)), (len(tile_a), len(tile_b))
    # Tile ids: z0 is 0, z1 is 1-4, z2 is 5-20 (Hilbert order within a zoom).
    flat = directory([(0, a[0], a[1], 1), (1, b[0], b[1], 4), (5, a[0], a[1], 16)])
    seed("pmtiles", "flat.pmtiles", pmtiles(flat, tiles=tiles))
    leaf = gz(directory([(5, a[0], a[1], 8), (13, b[0], b[1], 8)]))
    with_leaf = directory([(0, a[0], a[1], 1), (1, b[0], b[1], 4), (5, 0, len(leaf), 0)])
    seed("pmtiles", "leaf.pmtiles", pmtiles(with_leaf, leaves=leaf, tiles=tiles))
    seed("pmtiles", "jpeg-type-no-metadata.pmtiles", pmtiles(flat, metadata=b"", tiles=tiles, tile_type=3))
    seed("pmtiles", "uncompressed.pmtiles", pmtiles(flat, tiles=tiles, compress=False))
    seed("pmtiles", "zoom-5.pmtiles", pmtiles(directory([(341, a[0], a[1], 1024)]), tiles=tile_a, min_zoom=5, max_zoom=5, center_zoom=5))

    # pmtiles-directory: 3 zoom bytes, then the directory itself (the target compresses it;
    # its leaf section is the root: a leaf entry at offset 0 of 200 bytes reads the root again).
    for name, zooms, entries in [
        ("one-tile.bin", (0, 0, 0), [(0, 0, len(tile_b), 1)]),
        ("runs.bin", (0, 2, 1), [(0, 0, 100, 1), (1, 100, 200, 4), (5, 0, 100, 16)]),
        ("leaf-to-root.bin", (0, 3, 2), [(0, 0, 300, 1), (1, 0, 200, 0)]),
        ("zoom-10.bin", (10, 10, 10), [(349525, 0, 300, 1048576)]),
    ]:
        seed("pmtiles-directory", name, bytes(zooms) + directory(entries))

    # MBTiles: a database file, and metadata lines.
    def mbtiles(name, metadata, rows, deduplicated):
        path = os.path.join(ROOT, "corpus", "mbtiles", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.exists(path):
            os.remove(path)
        db = sqlite3.connect(path)
        db.execute("PRAGMA page_size=1024")
        db.execute("CREATE TABLE metadata (name TEXT, value TEXT)")
        if deduplicated:
            db.executescript("""
                CREATE TABLE map (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_id TEXT);
                CREATE TABLE images (tile_data BLOB, tile_id TEXT);
                CREATE VIEW tiles AS SELECT map.zoom_level AS zoom_level, map.tile_column AS tile_column,
                    map.tile_row AS tile_row, images.tile_data AS tile_data FROM map JOIN images ON images.tile_id = map.tile_id;""")
            for i, (z, x, y, data) in enumerate(rows):
                db.execute("INSERT INTO images VALUES (?, ?)", (data, str(i)))
                db.execute("INSERT INTO map VALUES (?, ?, ?, ?)", (z, x, y, str(i)))
        else:
            db.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
            db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", rows)
        db.executemany("INSERT INTO metadata VALUES (?, ?)", sorted(metadata.items()))
        db.commit()
        db.execute("VACUUM")
        db.close()

    small_a = encode(Image.new("RGB", (8, 8), (200, 220, 240)), "PNG")
    small_b = encode(picture((8, 8), "RGB"), "PNG")
    meta = {"name": "seed", "format": "png", "minzoom": "0", "maxzoom": "1", "bounds": "-180,-85,180,85", "center": "0,0,1",
            "attribution": "fuzz", "type": "baselayer", "version": "1.3", "tile_size": "8"}
    mbtiles("flat.mbtiles", meta, [(0, 0, 0, small_a), (1, 0, 0, small_b), (1, 1, 1, small_a)], False)
    mbtiles("deduplicated.mbtiles", meta, [(0, 0, 0, small_a), (1, 0, 1, small_b)], True)
    mbtiles("no-metadata.mbtiles", {}, [(2, 1, 1, small_b)], False)

    for name, lines in {
        "full.txt": ["name=Seed", "format=png", "minzoom=0", "maxzoom=1", "bounds=-180,-85.0511,180,85.0511", "center=0,0,1",
                     "attribution=© fuzz", "description=seed", "type=overlay", "version=1.3", "tile_size=256"],
        "jpeg-256.txt": ["format=jpg", "minzoom=0", "maxzoom=3", "center=-73.97,40.77,2", "tile_size=256"],
        "webp-small-bounds.txt": ["format=webp", "bounds=24.9,60.1,25.0,60.2", "minzoom=1", "maxzoom=1"],
        "overzoom.txt": ["minzoom=0", "maxzoom=0", "tile_size=512"],
        "empty.txt": [],
    }.items():
        seed("mbtiles-metadata", name, "\n".join(lines) + ("\n" if lines else ""))

    # Issue 11: PMTiles headers with lengths and offsets near 2^63, a 3 GB metadata length.
    crash("pmtiles", "root-length-2e63.pmtiles", pmtiles(flat, tiles=tiles, root_length=2 ** 63))
    crash("pmtiles", "root-offset-above-2e63.pmtiles", pmtiles(flat, tiles=tiles, root_offset=2 ** 63 + 16))
    crash("pmtiles", "metadata-length-3gb.pmtiles", pmtiles(flat, tiles=tiles, metadata_length=3_000_000_000))
    # ... and a minimum zoom of 200 (the server's GET of 0/0/0 traps on the zoom range).
    crash("pmtiles", "minzoom-200.pmtiles", pmtiles(flat, tiles=tiles, min_zoom=200, max_zoom=2))
    # MBTiles metadata: a centre zoom of 1e309 (infinity), a maximum zoom of -1.
    crash("mbtiles-metadata", "center-zoom-1e309.txt", "minzoom=0\nmaxzoom=2\ncenter=0,0,1e309\n")
    crash("mbtiles-metadata", "maxzoom-minus-1.txt", "minzoom=0\nmaxzoom=-1\n")


def raster_seeds():
    """Path commands for the `raster` target (Sources/TileKitFuzz/RasterTarget.swift): an op
    byte (low 3 bits: move, line, curve, arc, close, fill, stroke, antialias; 0x80: operands
    are raw 8-byte Doubles, else 2-byte sixteenths of a pixel), then its operands."""
    def n(v):
        return struct.pack(">h", int(v * 16))

    def raw(v):
        return struct.pack(">d", v)

    def op(code, *values, flags=0):
        pack = raw if flags & 0x80 else n
        return bytes([code | flags]) + b"".join(pack(v) for v in values)

    colour = bytes([30, 90, 190, 153])
    square = op(0, 4, 4) + op(1, 60, 4) + op(1, 60, 44) + op(1, 4, 44) + op(4)
    hole = op(0, 20, 14) + op(1, 40, 14) + op(1, 40, 34) + op(1, 20, 34) + op(4)
    walk = op(0, 3, 40) + op(1, 20, 10) + op(1, 35, 42) + op(1, 8, 25) + op(1, 60, 20)
    seeds = {
        "polygon": square + op(5) + colour,
        "hole-even-odd": square + hole + op(5, flags=8) + colour,
        "walk-round-caps": walk + op(6, 2.0, flags=8) + colour,
        "walk-square-caps-miter": walk + op(6, 3.5, flags=0x40 | 16) + colour,
        "hairpin": op(0, 5, 20) + op(1, 60, 21) + op(1, 5, 22) + op(6, 4) + colour,
        "circle": op(0, 42, 24) + op(3, 32, 24, 10, 0, 6.283) + op(4) + op(5) + colour + op(0, 42, 24) + op(3, 32, 24, 10, 0, 6.283) + op(4) + op(6, 1.5) + colour,
        "curve": op(0, 2, 46) + op(2, 62, 2, 10, -30, 50, 80) + op(6, 2.5, flags=8) + colour,
        "dot": op(0, 30, 30) + op(1, 30, 30) + op(6, 6, flags=8) + colour,
        "fast": op(7, flags=8) + walk + op(6, 2.0) + colour,
        "huge": op(0, -1e300, 5, flags=0x80) + op(1, 1e300, 5, flags=0x80) + op(1, 0, 1e12, flags=0x80) + op(5) + colour,
        "not-finite": op(0, float("nan"), 5, flags=0x80) + op(1, float("inf"), 40, flags=0x80) + op(1, 3, 3, flags=0x80) + op(6, 2, flags=0x88) + colour,
        "subnormal": op(0, 0, 0, flags=0x80) + op(1, 60, 5e-324, flags=0x80) + op(1, 30, 40, flags=0x80) + op(5) + colour,
    }
    for name, data in seeds.items():
        seed("raster", name, data)


def main():
    images()
    png_reader_seeds()
    png_reader_crashes()
    world_files()
    xml_crashes()
    feature_seeds()
    map_json_seeds()
    url_template_seeds()
    route_seeds()
    http1_seeds()
    stores()


if __name__ == "__main__":
    main()
