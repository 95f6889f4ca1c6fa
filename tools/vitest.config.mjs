import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.mjs'],
    exclude: ['node_modules/**'],
    reporters: ['default', ['json', { outputFile: '.vitest-result.json' }]],
    testTimeout: 120_000,
    // Hooks that build test data (1500 fuzz cases) share the machine too: the same budget as tests.
    hookTimeout: 120_000,
    // vitest's default (cores - 1) runs one file at a time on a 2-core machine, idling a core.
    maxWorkers: availableParallelism(),
  },
});
