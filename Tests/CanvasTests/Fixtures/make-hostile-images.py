#!/usr/bin/env python3
"""Writes the hostile images CanvasTests reads (issue 11): decompression bombs that declare
more pixels than any limit allows, and images cut short. Deterministic: run it again and
the files come out byte for byte the same.

usage: make-hostile-images.py [OUT_DIR] [--full-bomb]
  OUT_DIR      where to write (default: this script's folder)
  --full-bomb  also write png-bomb-50000x50000-full.png: the whole 312 MB of pixel data
               compressed (300 KB; for fuzz corpora, too large to commit)

The JPEG and WebP seeds are 8x8 images TileKit encoded (`tilekit snapshot --size 8x8`), the
progressive JPEG that one through `jpegtran -progressive`.
"""
import os
import random
import struct
import sys
import zlib

TINY_JPEG = bytes.fromhex(
    "ffd8ffe000104a46494600010100000100010000ffdb0043000503040404030504040405050506070c08070707070f0b0b090c110f12"
    "12110f111113161c1713141a1511111821181a1d1d1f1f1f13172224221e241c1e1f1effdb0043010505050706070e08080e1e141114"
    "1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1effc00011"
    "080008000803012200021101031101ffc4001f0000010501010101010100000000000000000102030405060708090a0bffc400b51000"
    "02010303020403050504040000017d01020300041105122131410613516107227114328191a1082342b1c11552d1f02433627282090a"
    "161718191a25262728292a3435363738393a434445464748494a535455565758595a636465666768696a737475767778797a83848586"
    "8788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5"
    "e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffc4001f0100030101010101010101010000000000000102030405060708090a0bffc400b51100"
    "020102040403040705040400010277000102031104052131061241510761711322328108144291a1b1c109233352f0156272d10a1624"
    "34e125f11718191a262728292a35363738393a434445464748494a535455565758595a636465666768696a737475767778797a828384"
    "85868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4"
    "e5e6e7e8e9eaf2f3f4f5f6f7f8f9faffda000c03010002110311003f00faca8a28ac4b3fffd9")
JPEG_SOF = 158  # FF C0 Lf(2) P(1) Y(2) X(2)

# The same image made progressive (`jpegtran -progressive`): ten scans, SOF2 at byte 158.
PROGRESSIVE_JPEG = bytes.fromhex(
    "ffd8ffe000104a46494600010100000100010000ffdb0043000503040404030504040405050506070c08070707070f0b0b090c110f12"
    "12110f111113161c1713141a1511111821181a1d1d1f1f1f13172224221e241c1e1f1effdb0043010505050706070e08080e1e141114"
    "1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1e1effc20011"
    "080008000803012200021101031101ffc4001500010100000000000000000000000000000007ffc40015010101000000000000000000"
    "00000000000102ffda000c03010002100310000001ac887fffc40014100100000000000000000000000000000000ffda000801010001"
    "05027fffc40014110100000000000000000000000000000000ffda0008010301013f017fffc400141101000000000000000000000000"
    "00000000ffda0008010201013f017fffc40014100100000000000000000000000000000000ffda0008010100063f027fffc400141001"
    "00000000000000000000000000000000ffda0008010100013f217fffda000c0301000200030000001007ffc400141101000000000000"
    "00000000000000000000ffda0008010301013f107fffc40014110100000000000000000000000000000000ffda0008010201013f107f"
    "ffc40014100100000000000000000000000000000000ffda0008010100013f107fffd9")

TINY_WEBP = bytes.fromhex("524946462800000057454250565038201c0000003001009d012a08000800014026259c00037000fefc06737bdd121800")
WEBP_VP8_SIZE = 26  # after the start code 9d 01 2a: width(2) height(2), 14 bits each


def jpeg_scans(bands):
    """An 8x8 grey progressive JPEG, every coefficient 0 (a flat 128 grey), written scan by
    scan: one DC scan, then for each of the first `bands` AC coefficients a first scan at
    Al 13 and 13 refinements down to Al 0, so 1 + 14 * bands scans. Each scan codes one
    block as a single symbol 0 (DC difference 0, or end of block) of code "0", padded with
    1 bits: the byte 0x7f. A valid file that costs a pass over the image per scan."""
    def segment(marker, body):
        return bytes([0xFF, marker]) + struct.pack(">H", len(body) + 2) + body
    one_code = bytes([1] + [0] * 15) + b"\x00"  # one symbol, 0, with a 1-bit code
    out = b"\xff\xd8"
    out += segment(0xDB, b"\x00" + bytes([1] * 64))
    out += segment(0xC2, struct.pack(">BHHB", 8, 8, 8, 1) + b"\x01\x11\x00")
    out += segment(0xC4, b"\x00" + one_code) + segment(0xC4, b"\x10" + one_code)

    def scan(ss, se, ah, al):
        return segment(0xDA, b"\x01\x01\x00" + bytes([ss, se, ah << 4 | al])) + b"\x7f"
    out += scan(0, 0, 0, 0)
    for k in range(1, bands + 1):
        out += scan(k, k, 0, 13)
        for al in range(12, -1, -1):
            out += scan(k, k, al + 1, al)
    return out + b"\xff\xd9"


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width, height, bit_depth, color_type, idat, interlace=0):
    ihdr = struct.pack(">IIBBBBB", width, height, bit_depth, color_type, 0, 0, interlace)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


def png_bomb_header_only():
    """50000 x 50000 1-bit grey: the first 64 rows of zeros, then the file ends (as a bomb
    looks to a decoder that checks the size first: it never reads further)."""
    rows = b"".join(b"\x00" + bytes(6250) for _ in range(64))
    return png(50000, 50000, 1, 0, zlib.compress(rows, 9))


def png_bomb_full():
    """All 50000 rows: 312 MB of zeros, about 300 KB compressed."""
    compressor = zlib.compressobj(9)
    row = b"\x00" + bytes(6250)
    parts = [compressor.compress(row * 500) for _ in range(100)]
    parts.append(compressor.flush())
    return png(50000, 50000, 1, 0, b"".join(parts))


def png_noise(width, height, seed):
    rng = random.Random(seed)
    raw = b"".join(b"\x00" + bytes(rng.randrange(256) for _ in range(width * 4)) for _ in range(height))
    return png(width, height, 8, 6, zlib.compress(raw, 6))


def tiff(width, height, rows_per_strip=None, tile=None, pixels=None, cut=None, compression=1):
    """A little-endian 8-bit RGB TIFF, uncompressed. `pixels(x, y)` gives (r, g, b); strips
    of `rows_per_strip` rows (None: no RowsPerStrip tag, one strip) or tiles of `tile`
    (w, h). `cut` truncates the file to that many bytes. Without `pixels` the image data
    is a single short block (a bomb: the header is all a decoder should read). Bombs are
    Deflate-compressed (`compression` 8): libtiff cuts a single uncompressed strip into
    small ones by itself, but not a compressed one."""
    header = b"II*\x00" + struct.pack("<I", 8)
    blocks = []
    if pixels is None:
        if tile:
            count = -(-width // tile[0]) * -(-height // tile[1])
        else:
            count = -(-height // (rows_per_strip or height))
        blocks = [zlib.compress(bytes(4096))] * count
    elif tile:
        tw, th = tile
        for ty in range(0, height, th):
            for tx in range(0, width, tw):
                block = bytearray()
                for y in range(ty, ty + th):
                    for x in range(tx, tx + tw):
                        block += bytes(pixels(x, y)) if x < width and y < height else b"\x00\x00\x00"
                blocks.append(bytes(block))
    else:
        rps = rows_per_strip or height
        for top in range(0, height, rps):
            blocks.append(b"".join(bytes(pixels(x, y)) for y in range(top, min(height, top + rps)) for x in range(width)))
    offsets_tag, counts_tag = (324, 325) if tile else (273, 279)
    tags = {256: (4, [width]), 257: (4, [height]), 258: (3, [8, 8, 8]), 259: (3, [compression]), 262: (3, [2]), 277: (3, [3]),
            284: (3, [1]), offsets_tag: (4, [0] * len(blocks)), counts_tag: (4, [len(b) for b in blocks])}
    if tile:
        tags[322], tags[323] = (4, [tile[0]]), (4, [tile[1]])
    elif rows_per_strip:
        tags[278] = (4, [rows_per_strip])

    def encode(type_, values):
        return b"".join(struct.pack("<H" if type_ == 3 else "<I", v) for v in values)

    # Layout: the IFD at 8, values longer than 4 bytes after it, then the image data.
    ifd_size = 2 + 12 * len(tags) + 4
    at = 8 + ifd_size
    value_at = {}
    for tag in sorted(tags):
        size = len(encode(*tags[tag]))
        if size > 4:
            value_at[tag] = at
            at += size
    positions = []
    for block in blocks:
        positions.append(at)
        at += len(block)
    tags[offsets_tag] = (4, positions)
    body, extra = bytearray(struct.pack("<H", len(tags))), bytearray()
    for tag in sorted(tags):
        type_, values = tags[tag]
        data = encode(type_, values)
        inline = struct.pack("<I", value_at[tag]) if tag in value_at else data.ljust(4, b"\x00")
        if tag in value_at:
            extra += data
        body += struct.pack("<HHI", tag, type_, len(values)) + inline
    body += struct.pack("<I", 0)
    out = header + bytes(body) + bytes(extra) + b"".join(blocks)
    return out[:cut] if cut else out


def card(x, y):
    """The pixels the streaming test expects: a colour from the position."""
    return ((x * 7) % 256, (y * 11) % 256, (x + y) % 256)


def main():
    out = os.path.dirname(os.path.abspath(__file__))
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if args:
        out = args[0]
    os.makedirs(out, exist_ok=True)
    files = {}
    files["png-bomb-50000x50000.png"] = png_bomb_header_only()
    files["png-wide-2147483647x1.png"] = png(2147483647, 1, 1, 0, zlib.compress(b"\x00" * 64))
    noise = png_noise(64, 64, 11)
    idat_end = noise.index(b"IEND") - 4
    files["png-truncated.png"] = noise[:(33 + idat_end) // 2]  # half way through the IDAT
    files["png-truncated-near-end.png"] = noise[:idat_end - 200]
    # The same pixels with a wrong zlib Adler-32 but right chunk CRCs (decoded: TileKit skips
    # the Adler-32, as the CRC covers the same bytes), and with a wrong IDAT CRC (refused).
    raw = b"".join(b"\x00" + bytes(random.Random(11 + y).randrange(256) for _ in range(16 * 4)) for y in range(16))
    stream = zlib.compress(raw, 6)
    files["png-wrong-adler32.png"] = png(16, 16, 8, 6, stream[:-4] + bytes(b ^ 0xFF for b in stream[-4:]))
    changed = bytearray(png(16, 16, 8, 6, stream))
    changed[changed.index(b"IDAT") + 4 + len(stream)] ^= 0x01  # the first byte of its CRC
    files["png-idat-crc-mismatch.png"] = bytes(changed)
    files["png-16x16-noise.png"] = png(16, 16, 8, 6, stream)

    jpeg = bytearray(TINY_JPEG)
    jpeg[JPEG_SOF + 5:JPEG_SOF + 9] = struct.pack(">HH", 65000, 65000)
    files["jpeg-bomb-65000x65000.jpg"] = bytes(jpeg)
    files["jpeg-truncated.jpg"] = TINY_JPEG[:len(TINY_JPEG) - 12]
    files["jpeg-progressive-8x8.jpg"] = PROGRESSIVE_JPEG
    files["jpeg-141-scans.jpg"] = jpeg_scans(10)
    files["jpeg-883-scans.jpg"] = jpeg_scans(63)
    progressive = bytearray(PROGRESSIVE_JPEG)
    progressive[JPEG_SOF + 5:JPEG_SOF + 9] = struct.pack(">HH", 20000, 20000)
    files["jpeg-progressive-20000x20000.jpg"] = bytes(progressive)
    files["jpeg-no-frame-header.jpg"] = TINY_JPEG[:JPEG_SOF] + TINY_JPEG[JPEG_SOF + 19:]

    webp = bytearray(TINY_WEBP)
    webp[WEBP_VP8_SIZE:WEBP_VP8_SIZE + 4] = struct.pack("<HH", 16383, 16383)
    files["webp-bomb-16383x16383.webp"] = bytes(webp)
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\x00\x00\x00\x00" + (2**24 - 1).to_bytes(3, "little") * 2
    files["webp-vp8x-16777216x16777216.webp"] = b"RIFF" + struct.pack("<I", 4 + len(vp8x) + len(TINY_WEBP) - 12) + b"WEBP" + vp8x + TINY_WEBP[12:]
    files["webp-truncated.webp"] = TINY_WEBP[:30]

    files["tiff-bomb-200000x200000.tif"] = tiff(200000, 200000, compression=8)
    files["tiff-one-strip-30000x30000.tif"] = tiff(30000, 30000, rows_per_strip=30000, compression=8)
    files["tiff-tile-1048576-wide.tif"] = tiff(64, 64, tile=(1048576, 16), compression=8)
    files["tiff-truncated.tif"] = tiff(64, 64, rows_per_strip=8, pixels=card, cut=8 + 200 + 64 * 3 * 40)
    files["tiff-tiled-40x24.tif"] = tiff(40, 24, tile=(16, 16), pixels=card)
    files["tiff-strips-40x24.tif"] = tiff(40, 24, rows_per_strip=5, pixels=card)
    if "--full-bomb" in sys.argv:
        files["png-bomb-50000x50000-full.png"] = png_bomb_full()
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
