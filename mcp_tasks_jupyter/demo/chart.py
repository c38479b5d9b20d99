"""Draws a bar chart of numbers into a PNG (no fonts: bars, a zero line and a light grid)."""

from __future__ import annotations

from .png import encode_png

BACKGROUND = (255, 255, 255)
GRID = (230, 230, 236)
AXIS = (90, 90, 100)
POSITIVE = (66, 118, 200)
NEGATIVE = (214, 96, 77)


class _Canvas:
    def __init__(self, width: int, height: int) -> None:
        self.width = width
        self.height = height
        self.pixels = bytearray(bytes(BACKGROUND) * (width * height))

    def fill(self, x0: int, y0: int, x1: int, y1: int, colour: tuple[int, int, int]) -> None:
        """Fill the rectangle [x0, x1) x [y0, y1), clipped to the canvas."""
        x0, x1 = max(0, min(x0, x1)), min(self.width, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.height, max(y0, y1))
        if x0 >= x1 or y0 >= y1:
            return
        run = bytes(colour) * (x1 - x0)
        for y in range(y0, y1):
            start = (y * self.width + x0) * 3
            self.pixels[start : start + len(run)] = run


def render_bar_chart(values: list[float], width: int = 480, height: int = 270) -> bytes:
    """PNG bytes of one bar per value, scaled to fit; negative values hang below the zero line."""
    if not values:
        raise ValueError("need at least one value")
    canvas = _Canvas(width, height)
    left, right, top, bottom = 24, width - 16, 16, height - 24
    high = max(max(values), 0.0)
    low = min(min(values), 0.0)
    span = (high - low) or 1.0

    def y_of(value: float) -> int:
        return round(bottom - (value - low) / span * (bottom - top))

    for i in range(5):  # horizontal grid lines
        y = top + i * (bottom - top) // 4
        canvas.fill(left, y, right, y + 1, GRID)
    slot = (right - left) / len(values)
    gap = max(1, int(slot * 0.2)) if slot >= 3 else 0
    zero = y_of(0.0)
    for index, value in enumerate(values):
        x0 = round(left + index * slot) + gap // 2
        x1 = max(x0 + 1, round(left + (index + 1) * slot) - (gap - gap // 2))
        y = y_of(value)
        if y == zero:  # keep zero-height bars visible as a sliver
            y = zero - 1
        canvas.fill(x0, min(y, zero), x1, max(y, zero), POSITIVE if value >= 0 else NEGATIVE)
    canvas.fill(left, zero, right, zero + 1, AXIS)  # the zero line
    canvas.fill(left - 1, top, left, bottom + 1, AXIS)  # the vertical axis
    return encode_png(width, height, canvas.pixels)
