import { ForgeError } from '@forge/ir';
import { afterAll, describe, expect, it } from 'vitest';
import { compileWgsl, wgslDiagnostics } from './compile.js';
import { WgslCompileError, formatWgslDiagnostic } from './errors.js';
import { closeSharedWebGpu, sharedWebGpu } from './shared.js';

afterAll(closeSharedWebGpu);

const UNRESOLVED = [
  'struct Params { n: u32 }',
  '@group(0) @binding(0) var<uniform> params: Params;',
  '@compute @workgroup_size(1) fn main() {',
  '  let a = foo + params.n;',
  '}',
  '',
].join('\n');

describe('compileWgsl', () => {
  it('compiles a valid source with no warnings', async () => {
    const context = await sharedWebGpu();
    const source = '@compute @workgroup_size(1) fn main() {\n}\n';
    const compiled = await compileWgsl(context, source);
    expect(compiled.warnings).toEqual([]);
    expect(compiled.module).toBeDefined();
  });

  it("reports Tint's first error with line:column, the message and the source line", async () => {
    const context = await sharedWebGpu();
    const error = await compileWgsl(context, UNRESOLVED).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WgslCompileError);
    expect(error).toBeInstanceOf(ForgeError);
    if (!(error instanceof WgslCompileError)) return;
    expect(error.line).toBe(4);
    expect(error.column).toBe(11);
    expect(error.diagnostic).toBe("unresolved value 'foo'");
    expect(error.sourceLine).toBe('  let a = foo + params.n;');
    expect(error.message.split('\n')).toEqual([
      "4:11: error: unresolved value 'foo'",
      '    let a = foo + params.n;',
      '            ^',
    ]);
  });

  it('returns warnings instead of throwing them', async () => {
    const context = await sharedWebGpu();
    const source = '@compute @workgroup_size(1) fn main() {\n  return;\n  let a = 1;\n}\n';
    const compiled = await compileWgsl(context, source);
    expect(compiled.warnings).toEqual([
      { type: 'warning', line: 3, column: 3, message: 'code is unreachable' },
    ]);
  });

  it('rejects `enable f16;` on a device without shader-f16', async () => {
    const context = await sharedWebGpu();
    const source = 'enable f16;\n@compute @workgroup_size(1) fn main() {\n}\n';
    await expect(compileWgsl(context, source)).rejects.toThrow(/^1:8: error: .*'f16'/);
  });

  it('accepts `enable f16;` and `enable subgroups;` on a device with both features', async () => {
    const context = await sharedWebGpu(['shader-f16', 'subgroups']);
    const source = [
      'enable f16;',
      'enable subgroups;',
      '@group(0) @binding(0) var<storage, read_write> y: array<f16>;',
      '@compute @workgroup_size(8) fn main(@builtin(local_invocation_index) i: u32) {',
      '  y[i] = subgroupAdd(f16(i));',
      '}',
      '',
    ].join('\n');
    expect((await compileWgsl(context, source)).warnings).toEqual([]);
  });
});

describe('wgslDiagnostics', () => {
  it('lists every message with its location, and nothing for a valid source', async () => {
    const context = await sharedWebGpu();
    expect(await wgslDiagnostics(context, '@compute @workgroup_size(1) fn main() {}\n')).toEqual(
      [],
    );
    const diagnostics = await wgslDiagnostics(context, UNRESOLVED);
    expect(diagnostics).toEqual([
      { type: 'error', line: 4, column: 11, message: "unresolved value 'foo'" },
    ]);
    expect(diagnostics.map(formatWgslDiagnostic)).toEqual(["4:11: error: unresolved value 'foo'"]);
  });

  it('reports a syntax error at its position', async () => {
    const context = await sharedWebGpu();
    const diagnostics = await wgslDiagnostics(context, 'fn main() {\n  let x = ;\n}\n');
    expect(diagnostics[0]).toMatchObject({ type: 'error', line: 2, column: 11 });
  });
});
