import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.mjs'],
    exclude: ['node_modules/**'],
    reporters: ['default', ['json', { outputFile: '.vitest-result.json' }]],
    testTimeout: 120_000,
  },
});
