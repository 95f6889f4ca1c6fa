import { describe, expect, it } from 'vitest';
import { ValidationError } from '@forge/ir';
import { StepLimitError } from '@forge/ptx-sim';
import { MAX_MESSAGE_CHARS, describeFailure, escapeControl, oneLine } from './error-line.js';
import { InputError } from './errors.js';

describe('the error line', () => {
  it('escapes control characters, line breaks and bidi overrides JSON-style', () => {
    expect(escapeControl('a\u001b[31mb\nc\td\u0000e\u007ff\u202eg')).toBe(
      'a\\u001b[31mb\\nc\\td\\u0000e\\u007ff\\u202eg',
    );
    expect(escapeControl('plain ü ✓')).toBe('plain ü ✓');
  });

  it('cuts a long message and says how much was cut', () => {
    const line = oneLine('x'.repeat(MAX_MESSAGE_CHARS + 1264));
    expect(line).toBe(`${'x'.repeat(MAX_MESSAGE_CHARS)}… (1264 more characters)`);
  });

  it('maps user mistakes to 2, a step limit to 1, and leaves bugs alone', () => {
    expect(describeFailure(new InputError('--out: no'))).toEqual({ code: 2, message: '--out: no' });
    expect(
      describeFailure(
        new ValidationError([
          { path: 'a', message: 'b' },
          { path: 'c', message: 'd' },
        ]),
      ),
    ).toEqual({ code: 2, message: 'invalid input: a: b (and 1 more problem(s))' });
    expect(describeFailure(new StepLimitError(1000, 12))).toEqual({
      code: 1,
      message:
        'stopped after 1000 steps (--max-steps 1000); the kernel did not finish, an endless loop? (last instruction at line 12)',
    });
    const enospc = Object.assign(new Error('ENOSPC: no space left'), {
      code: 'ENOSPC',
      syscall: 'write',
      path: '/full/x',
    });
    expect(describeFailure(enospc)).toEqual({ code: 2, message: 'cannot write /full/x: ENOSPC' });
    expect(describeFailure(new TypeError('a bug'))).toBeUndefined();
  });
});
