import { describe, expect, it } from 'vitest';

import { elapsedSeconds, formatDuration } from '../src/format';

describe('formatDuration', () => {
  // The same cases give the same text from the kernel's text.format_duration
  // (Python's f"{s:.1f}" rounds an exact tie to the even digit: 0.25 -> 0.2).
  it.each([
    [0, '0.0 s'],
    [0.4, '0.4 s'],
    [0.25, '0.2 s'],
    [0.75, '0.8 s'],
    [1.25, '1.2 s'],
    [0.35, '0.3 s'],
    [0.45, '0.5 s'],
    [9.96, '10.0 s'],
    [12.3, '12.3 s'],
    [59.94, '59.9 s'],
    [59.96, '60.0 s'],
    [60, '1 min 00 s'],
    [245, '4 min 05 s'],
    [3599.9, '59 min 59 s'],
    [3600, '1 h 00 min'],
    [7380, '2 h 03 min'],
    [90061, '25 h 01 min']
  ])('%s s reads %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it('reads a negative or non-finite time as 0', () => {
    expect(formatDuration(-5)).toBe('0.0 s');
    expect(formatDuration(Number.NaN)).toBe('0.0 s');
    expect(formatDuration(Number.POSITIVE_INFINITY)).toBe('0.0 s');
  });
});

describe('elapsedSeconds', () => {
  it('runs to now until the task finished, then to its end', () => {
    expect(elapsedSeconds(100, null, 130)).toBe(30);
    expect(elapsedSeconds(100, 112, 130)).toBe(12);
  });
});
