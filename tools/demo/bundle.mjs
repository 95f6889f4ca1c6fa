// The demo page's script bundled for the browser by esbuild: @forge/llama's browser entry with the
// Forge packages it needs, and nothing of Node.
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const entry = fileURLToPath(new URL('page.mjs', import.meta.url));

/** The Forge package a bundled input comes from (`@forge/llama`), or undefined for others. */
export function forgePackageOf(input) {
  const match = /(?:^|\/)packages\/([a-z-]+)\/dist\//.exec(input);
  return match === null ? undefined : `@forge/${match[1]}`;
}

/**
 * Bundles page.mjs (minified ES module): its text, the inputs esbuild read, the Forge packages among
 * them, and its size raw and gzipped. `webgpu` (Dawn, Node only) stays an unresolved import the page
 * never reaches, since it passes `navigator.gpu`.
 */
export async function bundleDemo() {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    minify: true,
    write: false,
    metafile: true,
    logLevel: 'silent',
    external: ['webgpu'],
  });
  const text = result.outputFiles[0].text;
  const inputs = Object.keys(result.metafile.inputs);
  const packages = [...new Set(inputs.map(forgePackageOf).filter((name) => name !== undefined))];
  // Bytes each package contributes to the output, for the size report.
  const contributions = {};
  for (const [input, { bytesInOutput }] of Object.entries(
    Object.values(result.metafile.outputs)[0]?.inputs ?? {},
  )) {
    const name =
      forgePackageOf(input) ??
      /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules)/.exec(input)?.[1] ??
      'page';
    contributions[name] = (contributions[name] ?? 0) + bytesInOutput;
  }
  return {
    text,
    contributions,
    inputs,
    packages: packages.sort(),
    bytes: Buffer.byteLength(text),
    gzipBytes: gzipSync(text).length,
  };
}
