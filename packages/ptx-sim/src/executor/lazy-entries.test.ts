import { describe, expect, it } from 'vitest';
import { PtxSyntaxError } from '../errors.js';
import { parsePtx } from '../parser/index.js';
import { simulate } from './simulate.js';

// A module as nvcc writes large ones: a device function and an entry calling it, which the
// simulator cannot run, next to an entry it can.
const MODULE = [
  '.version 8.0', // 1
  '.target sm_80',
  '.address_size 64',
  '.func (.param .b32 ret) helper(.param .b32 a)',
  '{',
  '  .reg .b32 %r<2>;', // 6
  '  ld.param.b32 %r1, [a];',
  '  st.param.b32 [ret], %r1;',
  '  ret;',
  '}',
  '.visible .entry uses_call(.param .u64 out)', // 11
  '{',
  '  .reg .b32 %r<3>;',
  '  { .param .b32 p; st.param.b32 [p], %r1; }', // 14
  '  ret;',
  '}',
  '.visible .entry plain(.param .u64 out)', // 17
  '{',
  '  .reg .b32 %r<2>;',
  '  .reg .b64 %rd<3>;',
  '  ld.param.u64 %rd1, [out];',
  '  cvta.to.global.u64 %rd2, %rd1;',
  '  mov.u32 %r1, 7;',
  '  st.global.u32 [%rd2], %r1;',
  '  ret;',
  '}',
].join('\n');

describe('lazyEntries', () => {
  it('is off by default: the first unsupported construct is thrown', () => {
    expect(() => parsePtx(MODULE)).toThrow(/line 4: device functions are not supported/);
  });

  it('parses the module and runs the entry that needs nothing missing', () => {
    const module = parsePtx(MODULE, { lazyEntries: true });
    expect(module.entries.map((entry) => entry.name)).toEqual(['uses_call', 'plain']);
    expect(module.entries[1]?.unsupported).toBeUndefined();
    const out = new Uint8Array(4);
    const result = simulate(module, {
      entry: 'plain',
      grid: [1, 1, 1],
      block: [1, 1, 1],
      args: { out: { kind: 'buffer', bytes: out } },
    });
    expect(result.findings).toEqual([]);
    expect(new Uint32Array(out.buffer)[0]).toBe(7);
  });

  it('reports the construct, its line and the entry when that entry is launched', () => {
    const module = parsePtx(MODULE, { lazyEntries: true });
    expect(module.entries[0]?.unsupported?.line).toBe(14);
    const launch = () =>
      simulate(module, {
        entry: 'uses_call',
        grid: [1, 1, 1],
        block: [1, 1, 1],
        args: { out: { kind: 'buffer', bytes: new Uint8Array(4) } },
      });
    expect(launch).toThrow(PtxSyntaxError);
    expect(launch).toThrow(
      "line 14: entry 'uses_call' cannot run: .param inside a body (call sequences) is not supported: { .param .b32 p; st.param.b32 [p], %r1; }",
    );
  });

  it('keeps an unsupported directive of an entry for its launch', () => {
    const clustered = MODULE.replace(
      '.visible .entry uses_call(.param .u64 out)',
      '.visible .entry uses_call(.param .u64 out) .explicitcluster .reqnctapercluster 2, 1, 1',
    );
    const withoutFunction = clustered.replace(/\.func[^]*?\n\}\n/, '');
    expect(() => parsePtx(withoutFunction)).toThrow(/unknown or unsupported directive/);
    const module = parsePtx(clustered, { lazyEntries: true });
    expect(module.entries[0]?.unsupported?.reason).toBe(
      "unknown or unsupported directive '.explicitcluster' on entry 'uses_call'",
    );
    expect(module.entries[1]?.unsupported).toBeUndefined();
  });

  it('still throws errors outside entry bodies, and unclosed bodies', () => {
    expect(() => parsePtx(`${MODULE}\n.bogus;`, { lazyEntries: true })).toThrow(
      /line 27: unknown or unsupported directive '.bogus'/,
    );
    const unclosed = MODULE.split('\n').slice(0, 24).join('\n');
    expect(() => parsePtx(unclosed, { lazyEntries: true })).toThrow(/never closed/);
  });
});
