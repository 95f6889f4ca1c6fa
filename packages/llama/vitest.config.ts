import { defineConfig } from 'vitest/config';
import { packageTestConfig } from '../../tools/vitest-package.mjs';

export default defineConfig(packageTestConfig({ setupFiles: ['src/vitest.setup.ts'] }));
