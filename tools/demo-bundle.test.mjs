// The demo page's bundle (issue #16): only @forge/ir, @forge/wgsl and @forge/llama of Forge, no
// Node module, and its size printed (pnpm bench prints it too).
import { describe, expect, it } from 'vitest';
import { bundleDemo } from './demo/bundle.mjs';

describe('the demo page bundle', () => {
  it('holds @forge/ir, @forge/wgsl and @forge/llama and nothing of Node', async () => {
    const { text, inputs, packages, bytes, gzipBytes, contributions } = await bundleDemo();
    expect(packages).toEqual(['@forge/ir', '@forge/llama', '@forge/wgsl']);
    expect(inputs.some((input) => input.includes('packages/llama/dist/browser.js'))).toBe(true);
    expect(inputs.filter((input) => input.startsWith('node:'))).toEqual([]);
    expect(text).not.toMatch(/["'](node:)?(fs|fs\/promises|path|url|stream)["']/);
    // The CPU engines (@forge/ptx and its simulator, the host runner) stay out of the page.
    expect(inputs.filter((input) => /ptx-sim|packages\/ptx\/|host-runner/.test(input))).toEqual([]);
    console.log(
      `demo bundle: ${bytes} bytes minified, ${gzipBytes} gzipped; by package: ${Object.entries(
        contributions,
      )
        .map(([name, size]) => `${name} ${size}`)
        .join(', ')}`,
    );
  });
});
