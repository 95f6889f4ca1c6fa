import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../tools/vitest-package.mjs';

export default defineConfig(
  packageTestConfig({
    setupFiles: ['src/vitest.setup.ts'],
    // Schedule sweeps and traffic counts on the simulator (~3 min on 2 cores): `pnpm test:full`.
    fullOnly: ['src/*-schedules.test.ts', 'src/*-traffic.test.ts'],
  }),
);
