import { describe, expect, it } from 'vitest';
import { PtxSyntaxError } from '../errors.js';
import { parsePtx } from './index.js';

const HEADER = '.version 7.0\n.target sm_80\n.address_size 64\n';
const ENTRY = `${HEADER}.visible .entry k()\n{\n`;

function errorOf(source: string): PtxSyntaxError {
  try {
    parsePtx(source);
  } catch (error) {
    if (error instanceof PtxSyntaxError) return error;
    throw error;
  }
  throw new Error('expected a PtxSyntaxError');
}

/** Source, 1-based line of the error, and what its reason says. */
type Case = readonly [string, number, RegExp];

function check([source, line, reason]: Case): void {
  const error = errorOf(source);
  expect(error.reason).toMatch(reason);
  expect(error.line).toBe(line);
  expect(error.text).toBe((source.split('\n')[line - 1] ?? '').trim());
  expect(error.message).toBe(`line ${line}: ${error.reason}: ${error.text}`);
}

describe('unterminated and unbalanced', () => {
  it.each<Case>([
    [
      `${ENTRY}add.u32 %r1, %r2, %r3\nret;\n}\n`,
      6,
      /unterminated instruction 'add.u32' \(missing ';'\)/,
    ],
    [`${ENTRY}mov.u32 %r1, 1;\nret\n}\n`, 7, /unterminated instruction 'ret'/],
    [`${ENTRY}.reg .b32 %r<4>\nret;\n}\n`, 6, /unterminated .reg declaration/],
    [
      `${ENTRY}add.u32 %r1, %r2 %r3;\n}\n`,
      6,
      /expected ';' after instruction 'add.u32', found '%r3'/,
    ],
    [
      `${ENTRY}ld.global.u32 %r1, [%rd1;\n}\n`,
      6,
      /expected '\]' to close the '\[' on line 6, found ';'/,
    ],
    [
      `${ENTRY}ld.global.u32 %r1, %rd1];\n}\n`,
      6,
      /expected ';' after instruction 'ld.global.u32', found '\]'/,
    ],
    [
      `${ENTRY}ld.global.v2.u32 {%r1, %r2, [%rd1];\n}\n`,
      6,
      /expected a register, immediate or _ in vector, found '\['/,
    ],
    [
      `${ENTRY}ld.global.v2.u32 {%r1, %r2 [%rd1];\n}\n`,
      6,
      /expected ',' or '}' to close the '\{' on line 6/,
    ],
    [`${ENTRY}mov.u32 %r1, 1;\nret;\n`, 5, /'\{' opened here is never closed/],
    [`${ENTRY}ret;\n}\n}\n`, 8, /expected a directive at module scope, found '\}'/],
    [
      `${HEADER}.entry k(.param .u32 a, .param .u32 b\n{\nret;\n}\n`,
      5,
      /expected ',' or '\)' to close the '\(' on line 4, found '\{'/,
    ],
    [`${ENTRY}/* never\nclosed\n`, 6, /unterminated \/\* comment/],
    [`${HEADER}.global .u32 x[4] = {1, 2;\n`, 4, /expected '\}' to close the initializer/],
    // The lexer runs as the parser reads, so a lexical error is found where the parser gets to it.
    [`${ENTRY}.pragma "nounroll;\n`, 6, /unterminated string/],
  ])('%#: %s', (...testCase) => check(testCase));
});

describe('unknown and unsupported directives', () => {
  it.each<Case>([
    [`${HEADER}.foo 1;\n`, 4, /unknown or unsupported directive '.foo'/],
    [`${HEADER}.file one "kernel.cu"\n`, 4, /expected a file index after .file/],
    [`${HEADER}.file 1 kernel\n`, 4, /expected a file name after .file/],
    [`${HEADER}.section .debug_str { .b8 1\n`, 4, /'\{' opened here is never closed/],
    [`${ENTRY}.loc 1 2\nret;\n}\n`, 7, /expected a column in .loc/],
    [`${ENTRY}.loc 1 2 3, discriminator 4\nret;\n}\n`, 6, /unknown .loc attribute 'discriminator'/],
    [`${ENTRY}.global .u32 g;\n}\n`, 6, /unknown or unsupported directive '.global' in entry body/],
    [
      `${HEADER}.entry k() .maxclusterrank 2 { ret; }\n`,
      4,
      /unsupported directive '.maxclusterrank' on entry 'k'/,
    ],
    [`${HEADER}.visible .something k() {}\n`, 4, /unknown or unsupported directive '.something'/],
    [`${HEADER}.extern .global .u32 x;\n`, 4, /.extern .global variables are not supported/],
    [`${HEADER}.global .v4 .f32 x;\n`, 4, /vector-typed variables \(.v4\) are not supported/],
    [`${HEADER}.global .q32 x;\n`, 4, /expected the type of the variable, found '.q32'/],
    [`${ENTRY}.reg .v2 .f32 %v;\n}\n`, 6, /vector-typed registers \(.v2\) are not supported/],
  ])('%#: %s', (...testCase) => check(testCase));
});

describe('device functions and bodiless entries', () => {
  it.each<Case>([
    [`${HEADER}.func helper()\n{\nret;\n}\n`, 4, /^device functions are not supported$/],
    [
      `${HEADER}.visible .func (.param .b32 r) f(.param .b32 a)\n{\nret;\n}\n`,
      4,
      /^device functions are not supported$/,
    ],
    [
      `${HEADER}.extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n`,
      4,
      /device functions/,
    ],
    [
      `${ENTRY}mov.u32 %r1, 1;\ncall.uni (retval0), helper, (param0);\n}\n`,
      7,
      /device functions are not supported \(call\)/,
    ],
    [`${ENTRY}.param .b64 param0;\n}\n`, 6, /.param inside a body/],
    [`${HEADER}.visible .entry k(.param .u32 n);\n`, 4, /.entry 'k' has no body/],
    [`${HEADER}.visible .entry k(\n.param .u32 n\n)\n`, 4, /.entry 'k' has no body/],
  ])('%#: %s', (...testCase) => check(testCase));
});

describe('malformed declarations and statements', () => {
  it.each<Case>([
    ['.target sm_80\n', 1, /missing .version directive/],
    ['.version 7.0\n', 1, /missing .target directive/],
    ['.version 7\n.target sm_80\n', 1, /expected a version like 7.0/],
    ['.version 7.0\n.version 7.0\n.target sm_80\n', 2, /duplicate .version/],
    ['.version 7.0\n.target texmode_independent\n', 2, /no sm_XX architecture/],
    [`${HEADER.replace('64', '48')}`, 3, /bad .address_size 48/],
    [`${HEADER}.shared .align 3 .b8 x[4];\n`, 4, /alignment 3 is not a power of two/],
    [`${HEADER}.global .u32 x[];\n`, 4, /array 'x\[\]' needs a length or initializer/],
    [`${HEADER}.global .u32 x[2] = {1, 2, 3};\n`, 4, /too many initializers for 'x'/],
    [`${HEADER}.global .u8 x = 0f3F800000;\n`, 4, /initializer does not fit type .u8/],
    [`${HEADER}.global .u32 x;\n.global .u32 x;\n`, 5, /variable 'x' redeclared/],
    [`${HEADER}.entry k(.param .u32 a[]) { ret; }\n`, 4, /parameter 'a\[\]' needs a length/],
    [
      `${HEADER}.entry k(.param .u32 a, .param .u32 a) { ret; }\n`,
      4,
      /parameter 'a' declared twice/,
    ],
    [`${HEADER}.entry k() .reqntid 0 { ret; }\n`, 4, /.reqntid counts must be positive/],
    [`${HEADER}.entry k() { ret; }\n.entry k() { ret; }\n`, 5, /entry 'k' defined twice/],
    [`${ENTRY}.shared .u32 s = 1;\n}\n`, 6, /.shared variables cannot have initializers/],
    [`${ENTRY}.reg .b32 %r<0>;\n}\n`, 6, /register count must be positive/],
    [`${ENTRY}.reg .b32 %r<4>;\n.reg .b64 %r<4>;\n}\n`, 7, /register '%r' redeclared/],
    [`${ENTRY}L1:\nret;\nL1:\n}\n`, 8, /label 'L1' already defined on line 6/],
    [`${ENTRY}%r1: ret;\n}\n`, 6, /bad label name '%r1'/],
    [`${ENTRY}ret;\n%r1 add.u32;\n}\n`, 7, /'%r1' is not an instruction/],
    [`${ENTRY}Add.u32 %r1, %r2, %r3;\n}\n`, 6, /'Add.u32' is not an instruction/],
    [`${ENTRY}@p bra L;\nL: ret;\n}\n`, 6, /guard 'p' is not a declared register/],
    [`${ENTRY}@;\n}\n`, 6, /expected a predicate register after @, found ';'/],
    [`${ENTRY}@ bra L;\n}\n`, 6, /'L' is not an instruction/],
    [`${ENTRY}ret\nmov.u32 %r1, 1;\n}\n`, 6, /unterminated instruction 'ret'/],
    [`${ENTRY}bar.sync 0\n$L1: ret;\n}\n`, 6, /unterminated instruction 'bar.sync'/],
    [`${ENTRY}mov.u32 %r1, 1 2;\n}\n`, 6, /expected ';'/],
    [`${ENTRY};\n}\n`, 6, /expected an instruction, label or declaration, found ';'/],
    [`${ENTRY}mov.u32 %r1, foo.bar;\n}\n`, 6, /bad operand 'foo.bar'/],
    [`${ENTRY}mov.u32 %r1, 1 // fine\n  ; mov.u32 %r2, ~1;\n}\n`, 7, /unexpected character '~'/],
  ])('%#: %s', (...testCase) => check(testCase));
});
