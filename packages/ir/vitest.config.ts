import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../tools/vitest-package.mjs';

export default defineConfig(
  packageTestConfig({
    setupFiles: ['src/vitest.setup.ts'],
    // Decode attention's split, head and window families on the interpreter (~70 s on 2 cores):
    // `pnpm test:full` (`pnpm test` runs each engine's sdpa-decode execution case).
    fullOnly: ['src/kernels/sdpa-decode.test.ts', 'src/kernels/sdpa-decode-quantize.test.ts'],
  }),
);
