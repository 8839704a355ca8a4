#!/usr/bin/env python3
"""Writes the hostile PMTiles and MBTiles files of issue 11 (and a valid one of each kind).

Each file differs from a valid store in one number: a length, offset, count, id delta, run
length, zoom or metadata value that once made TileKit trap, allocate gigabytes or walk
for minutes. The tests in HostileStoreTests.swift open each and assert the exact error.

    python3 make-hostile-stores.py [--corpus DIR]

writes into this script's folder (pmtiles-header/, pmtiles-directory/, mbtiles/) and, with
--corpus, copies the same files into DIR/<kind>/ as seeds for the fuzz targets.
The output is deterministic: running it again changes nothing.
"""
import gzip
import os
import shutil
import sqlite3
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
U64 = 2**64 - 1


def png(size=256, rgb=(0xF4, 0xE8, 0xC8)):
    """A solid RGB PNG, size x size."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    raw = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


TILE = png()
# 40 MiB of zeros in 40 KB of gzip: a leaf directory that inflates past the reader's limit.
BOMB = gzip.compress(bytes(40 << 20), compresslevel=9, mtime=0)


def gz(data):
    # mtime 0: the same bytes on every run.
    return gzip.compress(data, compresslevel=9, mtime=0)


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def directory(entries, count=None):
    """Raw (uncompressed) directory: entries are (tile_id, offset, length, run_length),
    serialised exactly as given (ids as deltas, offsets as offset + 1), unchecked."""
    out = varint(len(entries) if count is None else count)
    last = 0
    for tile_id, _, _, _ in entries:
        out += varint((tile_id - last) % 2**64)
        last = tile_id
    for _, _, _, run in entries:
        out += varint(run)
    for _, _, length, _ in entries:
        out += varint(length)
    for _, offset, _, _ in entries:
        out += varint(offset + 1)
    return out


def header(root_offset, root_length, metadata_offset, metadata_length, leaf_offset, leaf_length,
           data_offset, data_length, min_zoom=0, max_zoom=0, center_zoom=0, internal=2):
    return (b"PMTiles" + bytes([3])
            + struct.pack("<11Q", root_offset, root_length, metadata_offset, metadata_length, leaf_offset, leaf_length,
                          data_offset, data_length, 1, 1, 1)
            + bytes([1, internal, 1, 2, min_zoom, max_zoom])  # clustered, gzip, no tile compression, png
            + struct.pack("<4i", -1800000000, -850511287, 1800000000, 850511287)
            + bytes([center_zoom]) + struct.pack("<2i", 0, 0))


def pmtiles(root=None, leaves=b"", metadata=None, data=TILE, min_zoom=0, max_zoom=0, raw_root=None, **overrides):
    """A PMTiles file laid out as header, root, metadata, leaves, data; `overrides` replace
    header fields after layout (root_offset=..., metadata_length=...)."""
    if root is None:
        root = [(0, 0, len(data), 1)]
    root_bytes = raw_root if raw_root is not None else gz(directory(root))
    metadata_bytes = gz(b'{"name":"hostile","tile_size":256}') if metadata is None else metadata
    fields = dict(root_offset=127, root_length=len(root_bytes))
    fields["metadata_offset"] = fields["root_offset"] + fields["root_length"]
    fields["metadata_length"] = len(metadata_bytes)
    fields["leaf_offset"] = fields["metadata_offset"] + fields["metadata_length"]
    fields["leaf_length"] = len(leaves)
    fields["data_offset"] = fields["leaf_offset"] + fields["leaf_length"]
    fields["data_length"] = len(data)
    fields.update(min_zoom=min_zoom, max_zoom=max_zoom)
    fields.update(overrides)
    head = header(**fields)
    assert len(head) == 127
    return head + root_bytes + metadata_bytes + leaves + data


def leaf_file(levels, fan_out, max_zoom):
    """Root -> `levels` levels of one shared leaf each: every directory has `fan_out` entries
    with ids 0..fan_out-1, all pointing at the one leaf below; the deepest holds runs."""
    leaves = []
    bottom = gz(directory([(i, 0, len(TILE), 1) for i in range(fan_out)]))
    leaves.append(bottom)
    for _ in range(levels - 1):
        below_offset = sum(len(x) for x in leaves[:-1])
        leaves.append(gz(directory([(i, below_offset, len(leaves[-1]), 0) for i in range(fan_out)])))
    # Leaves are laid out in the order built: the deepest first.
    offsets = []
    position = 0
    for leaf in leaves:
        offsets.append(position)
        position += len(leaf)
    top = len(leaves) - 1
    root = [(i, offsets[top], len(leaves[top]), 0) for i in range(fan_out)]
    return pmtiles(root=root, leaves=b"".join(leaves), max_zoom=max_zoom)


def pmtiles_cases():
    base = pmtiles()
    size = len(base)
    headers = {
        "valid": base,
        "root-length-2e63": pmtiles(root_length=2**63 - 1),
        "root-offset-overflow": pmtiles(root_offset=U64 - 15),
        "root-beyond-16k": pmtiles(root_offset=16_384 - 20, data=TILE + bytes(16_384)),
        "metadata-length-3gb": pmtiles(metadata_length=3_000_000_000),
        "metadata-length-beyond-file": pmtiles(metadata_length=size),
        "metadata-not-gzip": pmtiles(metadata=b"{not gzip at all}"),
        "leaf-offset-2e64": pmtiles(leaf_offset=U64, leaf_length=2),
        "tile-data-offset-2e63": pmtiles(data_offset=2**63),
        "tile-data-length-2e64": pmtiles(data_length=U64),
        "minzoom-200": pmtiles(min_zoom=200, max_zoom=200),
        "maxzoom-200": pmtiles(max_zoom=200),
        "minzoom-above-maxzoom": pmtiles(min_zoom=5, max_zoom=2),
        "zoom-31": pmtiles(root=[(6_148_914_691_236_517_205 - 1, 0, len(TILE), 1)], min_zoom=31, max_zoom=31),
        "center-zoom-200": pmtiles(center_zoom=200),
        "internal-compression-brotli": pmtiles(internal=3),
        "short-header": base[:60],
        "version-2": base[:7] + bytes([2]) + base[8:],
    }
    one = len(TILE)
    leaf_with_bad_offset = gz(directory([(0, U64 - 1, 100, 1)]))
    leaf_ok = gz(directory([(0, 0, one, 1)]))
    directories = {
        "entry-count-2e63": pmtiles(raw_root=gz(varint(2**63) + bytes(8))),
        "entry-count-above-bytes": pmtiles(raw_root=gz(varint(1000) + bytes(8))),
        "varint-11-bytes": pmtiles(raw_root=gz(b"\xff" * 10 + b"\x01" + bytes(8))),
        "varint-above-64-bits": pmtiles(raw_root=gz(b"\x01" + b"\xff" * 9 + b"\x02" + bytes(3))),
        "id-delta-overflow": pmtiles(root=[(1, 0, one, 1), (0, 0, one, 1)], max_zoom=31),
        "id-beyond-maxzoom": pmtiles(root=[(5, 0, one, 1)], max_zoom=1),
        "ids-not-ascending": pmtiles(root=[(0, 0, one, 1), (0, 0, one, 1)]),
        "run-length-2e32-1": pmtiles(root=[(0, 0, one, 2**32 - 1)], max_zoom=5),
        "run-length-2e40": pmtiles(root=[(0, 0, one, 2**40)], max_zoom=31),
        "run-overlaps-next": pmtiles(root=[(0, 0, one, 3), (1, 0, one, 1)], max_zoom=1),
        "length-2e40": pmtiles(root=[(0, 0, 2**40, 1)]),
        "length-zero": pmtiles(root=[(0, 0, 0, 1)]),
        "entry-offset-overflow": pmtiles(root=[(0, U64 - 1, 100, 1)]),
        "implicit-offset-overflow": pmtiles(raw_root=gz(directory([(0, U64 - 10, 100, 1), (1, -1, 100, 1)])), max_zoom=1),
        "first-offset-zero": pmtiles(raw_root=gz(directory([(0, -1, one, 1)]))),
        "not-gzip": pmtiles(raw_root=b"not a gzip directory"),
        "leaf-gzip-bomb": pmtiles(root=[(0, 0, len(BOMB), 0)], leaves=BOMB),
        "leaf-pointer-beyond-section": pmtiles(root=[(0, 0, 1000, 0)], leaves=leaf_ok),
        "leaf-entry-offset-overflow": pmtiles(root=[(0, 0, len(leaf_with_bad_offset), 0)], leaves=leaf_with_bad_offset),
        "leaf-empty": pmtiles(root=[(0, 0, len(gz(directory([]))), 0)], leaves=gz(directory([]))),
        "leaf-below-pointer": pmtiles(root=[(1, 0, len(leaf_ok), 0)], leaves=leaf_ok, max_zoom=1),
        "self-referencing-leaf": pmtiles(root=[(0, 0, len(gz(directory([(0, 0, 20, 0)]))), 0)],
                                         leaves=gz(directory([(0, 0, len(gz(directory([(0, 0, 20, 0)]))), 0)]))),
        "fan-out-100-three-levels": leaf_file(levels=3, fan_out=100, max_zoom=5),
        # Valid: one run of 2^32 - 1 tiles within maxzoom 16. Reading it is fine; counting its
        # tiles must not take 4 billion steps.
        "valid-run-2e32-1-z16": pmtiles(root=[(0, 0, one, 2**32 - 1)], max_zoom=16),
    }
    return headers, directories


def fix_self_reference(directories):
    # The self-referencing leaf must name its own length: find the fixed point.
    length = 20
    for _ in range(5):
        leaf = gz(directory([(0, 0, length, 0)]))
        length = len(leaf)
    leaf = gz(directory([(0, 0, length, 0)]))
    assert len(leaf) == length
    directories["self-referencing-leaf"] = pmtiles(root=[(0, 0, length, 0)], leaves=leaf)


# Views that never end: every row of `tiles` is tile 0/0/x for x = 0, 1, 2, ... (a sorted
# listing never gets its first row; a lookup finds 0/0/0 and then waits for the next), and
# a metadata view of endless rows.
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM c)"
ENDLESS_TILES = (f"CREATE VIEW tiles AS {ENDLESS} SELECT 0 AS zoom_level, 0 AS tile_column, x AS tile_row, "
                 "(SELECT tile_data FROM tile_bytes) AS tile_data FROM c")
ENDLESS_METADATA = f"CREATE VIEW metadata AS {ENDLESS} SELECT 'key' || x AS name, 'value' AS value FROM c"


def mbtiles(path, metadata, tiles=((0, 0, 0),), tiles_view=None, metadata_view=None):
    """An MBTiles with the spec's plain `tiles` table; `tiles` are (zoom, column, row) rows,
    each holding the same PNG; metadata values are stored as given. A view replaces either
    table when given."""
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.execute("PRAGMA page_size=512")
    if metadata_view:
        db.execute(metadata_view)
    else:
        db.execute("CREATE TABLE metadata (name TEXT, value TEXT)")
        db.executemany("INSERT INTO metadata VALUES (?, ?)", sorted(metadata.items()))
    if tiles_view:
        db.execute("CREATE TABLE tile_bytes (tile_data BLOB)")
        db.execute("INSERT INTO tile_bytes VALUES (?)", (TILE,))
        db.execute(tiles_view)
    else:
        db.execute("CREATE TABLE tiles (zoom_level INTEGER, tile_column INTEGER, tile_row INTEGER, tile_data BLOB)")
        db.executemany("INSERT INTO tiles VALUES (?, ?, ?, ?)", [(z, x, y, TILE) for z, x, y in tiles])
    db.commit()
    db.execute("VACUUM")
    db.close()


def mbtiles_cases():
    base = {"name": "hostile", "format": "png", "minzoom": "0", "maxzoom": "0"}

    def with_(**values):
        out = dict(base)
        for key, value in values.items():
            if value is None:
                out.pop(key, None)
            else:
                out[key] = value
        return out
    return {
        "valid": (base, ((0, 0, 0),)),
        "maxzoom--1": (with_(maxzoom="-1"), ((0, 0, 0),)),
        "minzoom-200": (with_(minzoom="200", maxzoom="200"), ((0, 0, 0),)),
        "minzoom-above-maxzoom": (with_(minzoom="5", maxzoom="2"), ((0, 0, 0),)),
        "maxzoom-1e309": (with_(maxzoom="1e309"), ((0, 0, 0),)),
        "maxzoom-text": (with_(maxzoom="ten"), ((0, 0, 0),)),
        "center-zoom-1e309": (with_(center="0,0,1e309"), ((0, 0, 0),)),
        "center-nan": (with_(center="nan,nan,0"), ((0, 0, 0),)),
        "bounds-1e309": (with_(bounds="-1e309,-85,1e309,85"), ((0, 0, 0),)),
        "tile-size--2147483649": (with_(tile_size="-2147483649"), ((0, 0, 0),)),
        "tile-size-0": (with_(tile_size="0"), ((0, 0, 0),)),
        "tile-size-1e12": (with_(tile_size="1e12"), ((0, 0, 0),)),
        "tile-zoom--1": (base, ((0, 0, 0), (-1, 0, 0))),
        "tile-zoom--1-no-zooms": (with_(minzoom=None, maxzoom=None), ((0, 0, 0), (-1, 0, 0))),
        "tile-zoom-2e62-no-zooms": (with_(minzoom=None, maxzoom=None), ((0, 0, 0), (2**62, 0, 0))),
        "tile-zoom-text-no-zooms": (with_(minzoom=None, maxzoom=None), ((0, 0, 0), ("one", 0, 0))),
        "tile-column-out-of-range": (with_(maxzoom="1"), ((0, 0, 0), (1, 5, 0))),
        "tile-row-2e62": (with_(maxzoom="2"), ((0, 0, 0), (2, 0, 2**62))),
        "endless-tiles-view": (base, (), ENDLESS_TILES, None),
        "endless-metadata-view": ({}, ((0, 0, 0),), None, ENDLESS_METADATA),
    }


def main():
    corpus = None
    if "--corpus" in sys.argv:
        corpus = sys.argv[sys.argv.index("--corpus") + 1]
    headers, directories = pmtiles_cases()
    fix_self_reference(directories)
    written = []
    for kind, cases in (("pmtiles-header", headers), ("pmtiles-directory", directories)):
        os.makedirs(os.path.join(HERE, kind), exist_ok=True)
        for name, data in cases.items():
            path = os.path.join(HERE, kind, name + ".pmtiles")
            with open(path, "wb") as f:
                f.write(data)
            written.append((kind, path))
    os.makedirs(os.path.join(HERE, "mbtiles"), exist_ok=True)
    for name, case in mbtiles_cases().items():
        path = os.path.join(HERE, "mbtiles", name + ".mbtiles")
        mbtiles(path, *case)
        written.append(("mbtiles", path))
    if corpus:
        for kind, path in written:
            os.makedirs(os.path.join(corpus, kind), exist_ok=True)
            shutil.copyfile(path, os.path.join(corpus, kind, os.path.basename(path)))
    for kind, path in written:
        print(f"{os.path.getsize(path):>9}  {kind}/{os.path.basename(path)}")


if __name__ == "__main__":
    main()
