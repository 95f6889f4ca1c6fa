import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { fullTier } from './vitest-package.mjs';

// The long files `pnpm test` leaves to `pnpm test:full` (~10 min of file time in CI, two at a time
// on 2 cores, the whole sweep 4.5 of them): the whole ptxas schedule sweep, the semantic-hash
// property, a new op carried through every package, the packaged tarballs, the fuzzers' runs, the
// engine examples and the demo page in Chromium.
const FULL_ONLY = [
  'schedule-sweep.test.mjs',
  'semantic-hash.property.test.mjs',
  'new-op.test.mjs',
  'published-packages.test.mjs',
  'fuzz/ptx-fuzz.test.mjs',
  'fuzz/gguf-fuzz.test.mjs',
  'fuzz/fuzz.test.mjs',
  'engine-examples.test.mjs',
  'demo.test.mjs',
];

export default defineConfig({
  test: {
    include: ['**/*.test.mjs'],
    exclude: ['node_modules/**', ...(fullTier ? [] : FULL_ONLY)],
    reporters: ['default', ['json', { outputFile: '.vitest-result.json' }]],
    testTimeout: 120_000,
    // Hooks that build test data (1500 fuzz cases) share the machine too: the same budget as tests.
    hookTimeout: 120_000,
    // vitest's default (cores - 1) runs one file at a time on a 2-core machine, idling a core.
    maxWorkers: availableParallelism(),
  },
});
