import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../tools/vitest-package.mjs';

export default defineConfig(
  packageTestConfig({
    setupFiles: ['src/vitest.setup.ts'],
    // Multi-step decoding on the PTX simulator (~3 min on 2 cores): `pnpm test:full`.
    fullOnly: ['src/decode-ptx-sim.test.ts', 'src/decode-ptx-sim-quantized.test.ts'],
  }),
);
