import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../tools/vitest-package.mjs';

export default defineConfig(
  packageTestConfig({
    setupFiles: ['src/vitest.setup.ts'],
    // `forge run` of each kernel family on input files, a golden update killed at random moments,
    // and the CLI installed from its tarball (~140 s on 2 cores): `pnpm test:full`.
    fullOnly: ['src/run-*.test.ts', 'src/golden/update-kill.test.ts', 'src/installed.test.ts'],
  }),
);
