import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    setupFiles: ['src/vitest.setup.ts'],
    reporters: ['default', ['json', { outputFile: '.vitest-result.json' }]],
    testTimeout: 60_000,
    // vitest's default (cores - 1) runs one file at a time on a 2-core machine, idling a core.
    maxWorkers: availableParallelism(),
    // Test files share their worker's module cache (no file mocks modules or changes their state):
    // importing and setting up the packages once per file was half of ptx-sim's test time.
    isolate: false,
  },
});
