// The API check the consumer project runs against the installed packages, once through `import`
// and once through `require()`: the same function, sent there as source text.

/**
 * The API check the consumer runs, once loaded by `import` and once by `require()`. It is sent
 * there as source text (Function#toString), so it uses nothing but its arguments.
 */
export async function consumerCheck({ ir, kernels, ptx, ptxas, wgsl, readFileSync }, expected) {
  const problems = [];
  const check = (ok, message) => {
    if (!ok) problems.push(message);
  };
  check(typeof ir.ready === 'function', '@forge/ir exports no ready()');
  check(
    ptx.ready === ir.ready && wgsl.ready === ir.ready,
    'ready() of @forge/ptx or @forge/wgsl is not the one of @forge/ir (two copies of @forge/ir?)',
  );
  await ir.ready();
  const spec = kernels.getKernel('rmsnorm').spec;
  const shaders = {
    ptx: ptx.emitPtx(spec, {}, ptx.ptxTarget('sm_80')),
    wgsl: wgsl.emitWgsl(spec, {}, wgsl.wgslTarget()),
  };
  const backends = { ptx: ptx.PTX_BACKEND, wgsl: wgsl.WGSL_BACKEND };
  for (const kind of ['ptx', 'wgsl']) {
    const shader = shaders[kind];
    const backend = `@forge/${kind}@${expected.versions[`@forge/${kind}`]}`;
    check(backends[kind] === backend, `${kind} backend is ${backends[kind]}, published ${backend}`);
    // What the cache key covers (generatedShader in @forge/ir), with the published version.
    const cacheKey = ir.blake3Hex(
      ir.canonicalJson({
        backend,
        semanticHash: shader.semanticHash,
        target: shader.target,
        schedule: shader.schedule,
      }),
    );
    check(shader.cacheKey === cacheKey, `${kind} cacheKey is not the one for ${backend}`);
    check(
      shader.source === readFileSync(expected.golden[kind], 'utf8'),
      `${kind} source differs from ${expected.golden[kind]}`,
    );
  }
  const assembled = ptxas.assemblePtx(shaders.ptx.source, 'sm_80');
  check(assembled.ok, `ptxas (through @forge/ptx/ptxas) rejected it: ${assembled.diagnostics}`);
  for (const [name, info] of [
    ['@forge/ir', ir.IR_PACKAGE],
    ['@forge/ptx', ptx.PTX_PACKAGE],
    ['@forge/wgsl', wgsl.WGSL_PACKAGE],
  ])
    check(
      info?.version === expected.versions[name],
      `${name} says it is ${info?.version}, published ${expected.versions[name]}`,
    );
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return {
    ptxCacheKey: shaders.ptx.cacheKey,
    wgslCacheKey: shaders.wgsl.cacheKey,
    registers: assembled.registers,
  };
}

/** The consumer's script: loads the packages as an ES module (`esm`) or CommonJS (`cjs`). */
export function consumerScript(kind) {
  const load =
    kind === 'esm'
      ? [
          "import { readFileSync } from 'node:fs';",
          "import * as ir from '@forge/ir';",
          "import * as kernels from '@forge/ir/kernels';",
          "import * as ptx from '@forge/ptx';",
          "import * as ptxas from '@forge/ptx/ptxas';",
          "import * as wgsl from '@forge/wgsl';",
        ]
      : [
          "const { readFileSync } = require('node:fs');",
          "const ir = require('@forge/ir');",
          "const kernels = require('@forge/ir/kernels');",
          "const ptx = require('@forge/ptx');",
          "const ptxas = require('@forge/ptx/ptxas');",
          "const wgsl = require('@forge/wgsl');",
        ];
  return [
    `// Written by pnpm release:rehearse: the installed packages through their API (${kind}).`,
    ...load,
    '',
    consumerCheck.toString(),
    '',
    'consumerCheck({ ir, kernels, ptx, ptxas, wgsl, readFileSync }, JSON.parse(process.env.FORGE_REHEARSAL_EXPECT)).then(',
    '  (result) => console.log(JSON.stringify(result)),',
    '  (error) => {',
    '    console.error(error && error.stack ? error.stack : error);',
    '    process.exitCode = 1;',
    '  },',
    ');',
    '',
  ].join('\n');
}
