/**
 * Which tests a run holds: `quick` (`pnpm test`, sized for a 2-core machine) or `full`
 * (`pnpm test:full`, what CI runs: nothing sampled or left out).
 */
export type TestTier = 'quick' | 'full';

/** The tier the environment asks for: `FORGE_TESTS=full` is the full tier, anything else quick. */
export function testTier(): TestTier {
  // A browser page has no process; the browser suite runs in the full tier only and says so.
  return globalThis.process?.env?.['FORGE_TESTS'] === 'full' ? 'full' : 'quick';
}

/**
 * `items` whole in the full tier; in the quick tier the first `perGroup` of each group (by
 * `groupOf`), taking those `preferred` picks first, in `items`' order either way.
 */
export function sampleForTier<T>(
  items: readonly T[],
  tier: TestTier,
  groupOf: (item: T) => string,
  {
    perGroup = 1,
    preferred = () => false,
  }: { perGroup?: number; preferred?: (item: T) => boolean } = {},
): T[] {
  if (tier === 'full') return [...items];
  const taken = new Set<T>();
  const counts = new Map<string, number>();
  for (const pass of [true, false])
    for (const item of items) {
      if (preferred(item) !== pass) continue;
      const group = groupOf(item);
      const count = counts.get(group) ?? 0;
      if (count >= perGroup) continue;
      counts.set(group, count + 1);
      taken.add(item);
    }
  return items.filter((item) => taken.has(item));
}
