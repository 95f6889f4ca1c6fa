// The vitest settings every package under packages/ shares; each package's vitest.config.ts passes
// what differs (its setup file).
import { availableParallelism } from 'node:os';
import { configDefaults } from 'vitest/config';

/** Whether this run is `pnpm test:full` (FORGE_TESTS=full, what CI runs) rather than `pnpm test`. */
export const fullTier = process.env.FORGE_TESTS === 'full';

/**
 * A package's vitest config: `src/**\/*.test.ts` (not `*.browser.test.ts`), JSON results for the
 * CI summary, `setupFiles`; `fullOnly` lists the long test files `pnpm test` leaves to
 * `pnpm test:full`.
 */
export function packageTestConfig({ setupFiles = [], fullOnly = [] } = {}) {
  return {
    test: {
      include: ['src/**/*.test.ts'],
      // `*.browser.test.ts` run in headless Chromium, by the package's vitest.browser.config.ts.
      exclude: [
        ...configDefaults.exclude,
        'src/**/*.browser.test.ts',
        ...(fullTier ? [] : fullOnly),
      ],
      setupFiles,
      // tools/test-summary.mjs reads this file for the closing "N passed, N failed" line.
      reporters: ['default', ['json', { outputFile: '.vitest-result.json' }]],
      testTimeout: 60_000,
      // Hooks that build shared test data (a WebGPU device, sampled cases) get the tests' budget.
      hookTimeout: 60_000,
      // vitest's default (cores - 1) runs one file at a time on a 2-core machine, idling a core.
      maxWorkers: availableParallelism(),
      // Test files share their worker's module cache (no file mocks modules or changes their
      // state): importing and setting up the packages once per file was half of ptx-sim's test time.
      isolate: false,
      // The workspace packages' built JavaScript loads as Node loads it, untransformed by Vite (a
      // third of a file's start-up went to transforming dist files that are not in node_modules).
      server: { deps: { external: [/\/packages\/[^/]+\/dist\//] } },
    },
  };
}
