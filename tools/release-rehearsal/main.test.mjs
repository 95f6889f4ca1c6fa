// The release rehearsal's modules have their own tests beside them; the rehearsal itself (registry,
// publish, npm install) is `pnpm release:rehearse`, and none of these tests start a registry.
import { describe, expect, it } from 'vitest';
import { parseOptions } from './main.mjs';

describe('options', () => {
  it('knows --keep and --help, and refuses anything else', () => {
    expect(parseOptions([])).toEqual({ keep: false, help: false });
    expect(parseOptions(['--keep'])).toEqual({ keep: true, help: false });
    expect(() => parseOptions(['--fail-at=publish'])).toThrow(/unknown argument '--fail-at/);
  });
});
