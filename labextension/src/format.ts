/** Small text helpers shared by the views (the sidebar and the widgets). */

/**
 * `0.4 s`, `12.3 s`, `4 min 05 s`, `2 h 03 min`: the kernel's
 * `views/text.py`'s `format_duration`, to the digit (a negative or non-finite time is 0).
 */
export function formatDuration(seconds: number): string {
  const s = Number.isFinite(seconds) ? Math.max(0, seconds) : 0;
  if (s < 60) {
    return `${tenths(s)} s`;
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)} min ${pad(Math.floor(s % 60))} s`;
  }
  return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
}

/** Seconds since a task started, up to its end if it has one. */
export function elapsedSeconds(
  started: number,
  finished: number | null,
  now: number = Date.now() / 1000
): number {
  return (finished ?? now) - started;
}

/**
 * `s` to one decimal as Python's `f"{s:.1f}"` writes it. `toFixed` rounds an
 * exact tie up, Python to the even digit; the only exact ties of a double are
 * the odd quarters (x.25, x.75), and of those only x.25 differs.
 */
function tenths(s: number): string {
  const quarters = s * 4; // exact: a power of two
  if (Number.isInteger(quarters) && quarters % 4 === 1) {
    return (s - 0.05).toFixed(1);
  }
  return s.toFixed(1);
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}
