/** Small text helpers shared by the views. */

/** "12s", "3m 04s", "2h 05m". */
export function formatElapsed(seconds: number): string {
  const total = Math.max(0, Math.floor(seconds));
  if (total < 60) {
    return `${total}s`;
  }
  const minutes = Math.floor(total / 60);
  if (minutes < 60) {
    return `${minutes}m ${pad(total % 60)}s`;
  }
  const hours = Math.floor(minutes / 60);
  return `${hours}h ${pad(minutes % 60)}m`;
}

/** Seconds since a task started, up to its end if it has one. */
export function elapsedSeconds(
  started: number,
  finished: number | null
): number {
  const end = finished ?? Date.now() / 1000;
  return end - started;
}

function pad(n: number): string {
  return n < 10 ? `0${n}` : `${n}`;
}
