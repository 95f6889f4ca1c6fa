import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    setupFiles: ['src/vitest.setup.ts'],
    reporters: ['default', ['json', { outputFile: '.vitest-result.json' }]],
    testTimeout: 60_000,
  },
});
