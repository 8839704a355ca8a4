#!/usr/bin/env python3
"""Writes the binary fixtures of InitCommandTests (run from this folder; the output is committed):
scan.png, a 64x32 RGB gradient that stands for a user's scan or artwork."""
import struct
import zlib


def png(width, height, pixel):
    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


with open("scan.png", "wb") as f:
    f.write(png(64, 32, lambda x, y: (x * 4, y * 8, 128)))
