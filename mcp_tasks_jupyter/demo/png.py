"""A tiny PNG encoder (8-bit RGB, no interlace) built on :mod:`zlib` and :mod:`struct`."""

from __future__ import annotations

import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


def encode_png(width: int, height: int, rgb: bytes | bytearray) -> bytes:
    """PNG bytes for ``height`` rows of ``width`` RGB pixels given row by row, top first."""
    if width <= 0 or height <= 0:
        raise ValueError("image must be at least 1x1")
    stride = width * 3
    if len(rgb) != stride * height:
        raise ValueError(f"expected {stride * height} bytes of RGB data, got {len(rgb)}")
    raw = bytearray()
    for row in range(height):
        raw.append(0)  # filter type 0 (None) for every scanline
        raw += rgb[row * stride : (row + 1) * stride]
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit truecolour
    return (
        PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(bytes(raw), 9))
        + _chunk(b"IEND", b"")
    )
