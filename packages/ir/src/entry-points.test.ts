// The package's three entries, as a consumer loads them: built dist files in a fresh node process.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const PACKAGE = new URL('../', import.meta.url);
const manifest = JSON.parse(readFileSync(new URL('package.json', PACKAGE), 'utf8')) as {
  exports: Record<string, { types: string; default: string }>;
};
const entry = (subpath: string): URL => {
  const target = manifest.exports[subpath];
  if (target === undefined) throw new Error(`package.json exports no '${subpath}'`);
  return new URL(target.default, PACKAGE);
};

// A module hook in the child prints every file it loads, so the test sees the whole import graph.
const HOOK = `data:text/javascript,${encodeURIComponent(
  'export async function load(url, context, next) { if (url.startsWith("file:")) console.log(url); return next(url, context); }',
)}`;

/** The package's dist files (relative to dist/) that importing `subpath` loads, in a fresh node. */
function loadedBy(subpath: string): string[] {
  const script = `import { register } from 'node:module'; register(${JSON.stringify(HOOK)}); await import(${JSON.stringify(entry(subpath).href)});`;
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
  });
  const dist = new URL('dist/', PACKAGE).href;
  return output
    .split('\n')
    .filter((url) => url.startsWith(dist))
    .map((url) => url.slice(dist.length));
}

const namesOf = async (subpath: string): Promise<string[]> =>
  Object.keys((await import(entry(subpath).href)) as object);

// Test data lives in the private @forge/test-fixtures; none of it may be published here.
const FIXTURES = ['OP_ZOO', 'EXECUTION_CASES', 'LOAD_VECTOR_PROBE', 'UNPACK_HALF_PROBE', 'limitSpec', 'countReads', 'executionCasesFor']; // prettier-ignore

describe('@forge/ir entry points', () => {
  it('the root loads the IR alone: no kernel, catalog or codec module', () => {
    const loaded = loadedBy('.');
    expect(loaded).toContain('index.js');
    expect(loaded).toContain('interpreter/run.js');
    expect(loaded.filter((file) => /^(kernels\/|quant\/|gguf\.js)/.test(file))).toEqual([]);
  });

  it('@forge/ir/kernels loads the catalog, and @forge/ir/gguf the codecs without any kernel', () => {
    expect(loadedBy('./kernels')).toEqual(
      expect.arrayContaining(['kernels/catalog.js', 'kernels/q4k-gemv.js', 'quant/formats.js']),
    );
    const gguf = loadedBy('./gguf');
    expect(gguf).toContain('quant/q6-k.js');
    expect(gguf.filter((file) => file.startsWith('kernels/'))).toEqual([]);
  });

  it('no name is exported by two entries, and none is test data', async () => {
    const [root, kernels, gguf] = await Promise.all(['.', './kernels', './gguf'].map(namesOf));
    expect(root).toEqual(
      expect.arrayContaining(['defineKernel', 'validateSpec', 'interpret', 'ir']),
    );
    expect(kernels).toEqual(
      expect.arrayContaining(['CATALOG', 'getKernel', 'makeCaseInputs', 'Rng']),
    );
    expect(gguf).toEqual(expect.arrayContaining(['quantize', 'dequantize', 'repack', 'packWords']));
    const all = [...(root ?? []), ...(kernels ?? []), ...(gguf ?? [])];
    expect(all.length).toBe(new Set(all).size);
    expect(all.filter((name) => FIXTURES.includes(name))).toEqual([]);
  });
});
