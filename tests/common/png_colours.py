#!/usr/bin/env python3
"""Checks a Chromium screenshot of a chart (standard library only: no PIL on
the build machine): it is not blank, and every colour named on the command
line shows in at least MIN pixels (an anti-aliased line is never quite its
colour: a channel may be off by up to 28).
  png_colours.py SCREENSHOT.png MIN [#rrggbb ...]"""
import struct
import sys
import zlib


def pixels(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
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
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, f"{path}: unexpected PNG format {header}"
    channels = 4 if colour_type == 6 else 3
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, corner = previous[i], previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(line)
        previous = line
    return [tuple(row[x * channels:x * channels + 3]) for row in rows for x in range(width)]


def main():
    path, least, colours = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    seen = pixels(path)
    inked = sum(1 for p in seen if p != (255, 255, 255))
    if inked < 0.01 * len(seen):
        sys.exit(f"FAIL: {path} is blank ({inked} of {len(seen)} pixels not white)")
    for colour in colours:
        want = tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
        count = sum(1 for p in seen if all(abs(a - b) <= 28 for a, b in zip(p, want)))
        if count < least:
            sys.exit(f"FAIL: {path} shows {colour} in {count} pixels, fewer than {least}")
    print(f"{path}: {inked} of {len(seen)} pixels inked, {len(colours)} colours each in {least}+ pixels")


main()
