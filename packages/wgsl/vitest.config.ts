import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../tools/vitest-package.mjs';

export default defineConfig(
  packageTestConfig({
    setupFiles: ['src/vitest.setup.ts'],
    // The subgroup-size sweeps (every subgroup case at sizes 4 to 128, ~11 min on 2 cores):
    // `pnpm test:full`.
    fullOnly: ['src/subgroup-sizes.test.ts', 'src/subgroup-sizes-interpreted.test.ts'],
  }),
);
