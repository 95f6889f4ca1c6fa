// Case names spell out what a case runs, so a failing test name says how to reproduce it.

export const magnitudeLabel = (magnitude: number): string =>
  magnitude === 1 ? '1' : magnitude.toExponential().replace('e+', 'e');

export function scheduleLabel(schedule: Readonly<Record<string, number>>): string {
  const entries = Object.entries(schedule);
  return entries.length === 0
    ? 'default'
    : entries.map(([knob, value]) => `${knob}=${value}`).join(',');
}
