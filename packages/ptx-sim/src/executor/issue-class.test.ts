import { describe, expect, it } from 'vitest';
import { issueClassOf } from './issue-class.js';

const of = (text: string): string => {
  const [opcode = '', ...modifiers] = text.split('.');
  return issueClassOf({ opcode, modifiers });
};

describe('issueClassOf', () => {
  it('sorts opcodes by the unit the throughput table gives them', () => {
    expect(of('fma.rn.f32')).toBe('fp32');
    expect(of('add.f32')).toBe('fp32');
    expect(of('add.u32')).toBe('int');
    // Integer multiplies and dot products issue to the FMA pipe (IMAD, IDP), not the ALU.
    expect(of('mad.lo.s32')).toBe('imad');
    expect(of('mul.wide.u32')).toBe('imad');
    expect(of('mul.lo.u32')).toBe('imad');
    expect(of('dp4a.s32.s32')).toBe('imad');
    expect(of('mul.rn.f32')).toBe('fp32');
    expect(of('mad.rn.f64')).toBe('fp64');
    // funnel_shift_right's shf too.
    expect(of('shf.r.clamp.b32')).toBe('int');
    // bit_select's lop3 too.
    expect(of('lop3.b32')).toBe('int');
    expect(of('fma.rn.f16x2')).toBe('fp16');
    expect(of('mul.rn.bf16x2')).toBe('fp16');
    expect(of('fma.rn.f64')).toBe('fp64');
    expect(of('ex2.approx.ftz.f32')).toBe('sfu');
    expect(of('rsqrt.approx.f32')).toBe('sfu');
    expect(of('sqrt.approx.f32')).toBe('sfu');
    expect(of('sqrt.rn.f32')).toBe('fp32');
    // ptxas writes f16 to f32 as HADD2.F32, an fp16 instruction; other conversions use the unit.
    expect(of('cvt.f32.f16')).toBe('fp16');
    expect(of('cvt.rn.f16.f32')).toBe('conversion');
    expect(of('cvt.rn.f32.s32')).toBe('conversion');
    expect(of('popc.b32')).toBe('bitcount');
    expect(of('shfl.sync.bfly.b32')).toBe('shuffle');
    expect(of('ld.global.nc.v4.u32')).toBe('memory');
    expect(of('st.shared.f32')).toBe('memory');
    expect(of('mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32')).toBe('tensor');
    expect(of('bra.uni')).toBe('control');
    expect(of('bar.sync')).toBe('control');
    expect(of('setp.lt.f32')).toBe('int');
  });
});
