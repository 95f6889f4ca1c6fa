// The browser suite (`src/**/*.browser.test.ts`): WGSL kernels run in headless Chromium on its own
// WebGPU (SwiftShader), through Playwright driving Debian's /usr/bin/chromium; Playwright's own
// browsers are never downloaded. `bash tools/setup-browser.sh` installs Chromium.
import { existsSync } from 'node:fs';
import { playwright } from '@vitest/browser-playwright';
import { defineConfig } from 'vitest/config';

const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  throw new Error(
    `${CHROMIUM} is missing: the browser suite runs WGSL kernels in headless Chromium; install it with \`bash tools/setup-browser.sh\` (as root)`,
  );
}

export default defineConfig({
  test: {
    include: ['src/**/*.browser.test.ts'],
    setupFiles: ['src/vitest.setup.ts'],
    // tools/test-summary.mjs reads this file beside .vitest-result.json (the Node suites').
    reporters: ['default', ['json', { outputFile: '.vitest-browser-result.json' }]],
    // The largest attention shaders take ~40 s to compile in lavapipe alone; Chromium's too may.
    testTimeout: 180_000,
    hookTimeout: 60_000,
    browser: {
      enabled: true,
      headless: true,
      screenshotFailures: false,
      provider: playwright({
        launchOptions: {
          executablePath: CHROMIUM,
          // WebGPU on Chromium's bundled SwiftShader, with no GPU, no sandbox (CI runs as root).
          args: [
            '--no-sandbox',
            '--enable-unsafe-webgpu',
            '--use-webgpu-adapter=swiftshader',
            '--disable-dev-shm-usage',
          ],
        },
      }),
      instances: [{ browser: 'chromium' }],
    },
  },
});
