#!/usr/bin/env python3
"""Decodes a PNG (8-bit RGB or RGBA, non-interlaced, as Chromium writes screenshots) with zlib
alone and prints what the exporter's rendering tests assert on:

  <width> <height> <distinct colours> <non-white pixels> <pixels near COLOUR>...

Usage: png_stats.py FILE.png [RRGGBB...]. A pixel is near a colour when each channel is within 40.
"""
import struct
import sys
import zlib


def paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(path: str):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit(f"{path}: not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace:
        raise SystemExit(f"{path}: unsupported PNG (depth {depth}, colour type {colour_type})")
    bpp = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, previous, pos = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = previous[i]
            upleft = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + paeth(left, up, upleft)) & 0xFF
        rows.append(line)
        previous = line
    pixels = [tuple(row[i:i + 3]) for row in rows for i in range(0, stride, bpp)]
    return width, height, pixels


def main() -> int:
    width, height, pixels = decode(sys.argv[1])
    targets = [tuple(int(c[i:i + 2], 16) for i in (0, 2, 4)) for c in sys.argv[2:]]
    near = [sum(1 for p in pixels if all(abs(p[k] - t[k]) <= 40 for k in range(3))) for t in targets]
    non_white = sum(1 for p in pixels if p != (255, 255, 255))
    print(width, height, len(set(pixels)), non_white, *near)
    return 0


if __name__ == "__main__":
    sys.exit(main())
