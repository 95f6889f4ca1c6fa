// The decode demo (issue #16 point 3): the page served on 127.0.0.1, loaded in headless Chromium
// (SwiftShader WebGPU), decodes 16 steps of the tiny F32 model on the page's WebGPU; its logits
// match the float64 reference computed here in Node within the Node bound, and a screenshot shows
// the rendered token list.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizedMse } from '@forge/ir/kernels';
import { createReferenceDecoder, dequantizedModel, readLlamaModel } from '@forge/llama';
import { darkFraction, decodePng } from './demo/png.mjs';
import { startDemoServer } from './demo/serve.mjs';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--no-sandbox',
  '--enable-unsafe-webgpu',
  '--use-webgpu-adapter=swiftshader',
  '--disable-dev-shm-usage',
];
const F32_MODEL = fileURLToPath(
  new URL('../fixtures/tiny-llama/tiny-llama-f32.gguf', import.meta.url),
);

let server;
let browser;
beforeAll(async () => {
  server = await startDemoServer();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS }).catch((error) => {
    throw new Error(
      `cannot start ${CHROMIUM} (install it with \`bash tools/setup-browser.sh\`): ${error.message}`,
    );
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the decode demo page in headless Chromium', () => {
  it('decodes 16 steps of the tiny F32 model on WebGPU within the Node bound, and shows them', async () => {
    const page = await browser.newPage({ viewport: { width: 820, height: 900 } });
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${server.url}?run`);
    await page.waitForFunction(() => window.forgeDemoResult !== undefined, null, {
      timeout: 240_000,
    });
    const result = await page.evaluate(() => window.forgeDemoResult);
    expect(errors).toEqual([]);
    expect(result.error).toBeUndefined();
    expect(result.steps).toBe(16);
    expect(result.adapter).toMatch(/swiftshader/i);

    // The page's logits against the float64 reference run here, fed the page's own tokens.
    const model = await readLlamaModel(F32_MODEL);
    const reference = createReferenceDecoder(dequantizedModel(model), { kv: 'f32' });
    const worst = Math.max(
      ...result.inputs.map((token, position) =>
        normalizedMse(result.logits[position], reference.step(token, position)),
      ),
    );
    expect(worst).toBeLessThanOrEqual(1e-8);
    expect(Math.max(...result.nmse)).toBeLessThanOrEqual(1e-8);

    const items = await page.locator('#output li').allTextContents();
    expect(items).toHaveLength(16);
    items.forEach((text, position) =>
      expect(text).toMatch(
        new RegExp(`^pos ${position}: ${result.inputs[position]} → \\d+ \\(logit`),
      ),
    );
    // The screenshot shows the token list: its region holds text, not a blank page.
    const directory = mkdtempSync(join(tmpdir(), 'forge-demo-'));
    const path = join(directory, 'demo.png');
    writeFileSync(path, await page.screenshot({ fullPage: true }));
    const list = decodePng(await page.locator('#output').screenshot());
    expect(list.height).toBeGreaterThan(100);
    expect(darkFraction(list)).toBeGreaterThan(0.01);
    console.log(
      `demo: ${result.steps} steps of ${result.model} on ${result.adapter}, ${result.tokensPerSecond.toFixed(1)} tokens/s, max logit NMSE ${worst.toExponential(2)} against the float64 reference; screenshot ${path}`,
    );
  }, 300_000);
});
