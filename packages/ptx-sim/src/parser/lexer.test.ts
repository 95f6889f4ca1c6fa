import { describe, expect, it } from 'vitest';
import { SourceLines, tokenize } from './lexer.js';

function lex(text: string): string[] {
  return tokenize(text, new SourceLines(text)).map(
    (token) => `${token.line}:${token.kind}:${token.text}`,
  );
}

describe('tokenize', () => {
  it('keeps opcode dots and special-register components inside one word', () => {
    expect(lex('@!%p1 shfl.sync.bfly.b32 %r1|%p2, %tid.x, 0x1F;')).toEqual([
      '1:punct:@',
      '1:punct:!',
      '1:word:%p1',
      '1:word:shfl.sync.bfly.b32',
      '1:word:%r1',
      '1:punct:|',
      '1:word:%p2',
      '1:punct:,',
      '1:word:%tid.x',
      '1:punct:,',
      '1:number:0x1F',
      '1:punct:;',
      '1:eof:',
    ]);
  });

  it('reads directives, numbers with exponents and strings', () => {
    expect(lex('.reg .b32 %r<4>; 1e-3 2.5E+2 0f3F800000 7U .pragma "nounroll";')).toEqual([
      '1:directive:reg',
      '1:directive:b32',
      '1:word:%r',
      '1:punct:<',
      '1:number:4',
      '1:punct:>',
      '1:punct:;',
      '1:number:1e-3',
      '1:number:2.5E+2',
      '1:number:0f3F800000',
      '1:number:7U',
      '1:directive:pragma',
      '1:string:nounroll',
      '1:punct:;',
      '1:eof:',
    ]);
  });

  it('splits a subtraction after a hex number from the number', () => {
    expect(lex('[%r2-8] 0x1E-4')).toEqual([
      '1:punct:[',
      '1:word:%r2',
      '1:punct:-',
      '1:number:8',
      '1:punct:]',
      '1:number:0x1E',
      '1:punct:-',
      '1:number:4',
      '1:eof:',
    ]);
  });

  it('counts lines through block comments, CRLF and lone CR', () => {
    expect(lex('a /* x\n y\r\n z */ b\r\nc\rd // e\nf')).toEqual([
      '1:word:a',
      '3:word:b',
      '4:word:c',
      '5:word:d',
      '6:word:f',
      '6:eof:',
    ]);
  });

  it('quotes the trimmed line in errors', () => {
    expect(() => lex('ok\n\t  mov.u32 %r1, #1;  \n')).toThrow(
      "line 2: unexpected character '#': mov.u32 %r1, #1;",
    );
  });
});
