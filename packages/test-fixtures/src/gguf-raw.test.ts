import { describe, expect, it } from 'vitest';
import { decodeRawGguf, encodeRawGguf, rawU32, withRawPair } from './gguf-raw.js';
import { tinyLlamaGguf } from './tiny-llama.js';
import { writeGguf } from './gguf-writer.js';

describe('raw GGUF fields', () => {
  const bytes = writeGguf(tinyLlamaGguf('f32'));

  it('takes a well-formed file apart and puts it back byte for byte', () => {
    const raw = decodeRawGguf(bytes);
    expect(raw.magic).toBe('GGUF');
    expect(raw.version).toBe(3);
    expect(raw.tensors.length).toBe(Number(raw.tensorCount));
    expect(raw.pairs.length).toBe(Number(raw.kvCount));
    expect(Buffer.from(encodeRawGguf(raw)).equals(bytes)).toBe(true);
  });

  it('writes lies as given: counts, alignment pairs', () => {
    const raw = decodeRawGguf(bytes);
    const lying = encodeRawGguf({ ...raw, tensorCount: 2n ** 60n });
    expect(new DataView(lying.buffer).getBigUint64(8, true)).toBe(2n ** 60n);
    const aligned = decodeRawGguf(
      encodeRawGguf(withRawPair(raw, 'general.alignment', 4, rawU32(64))),
    );
    expect(aligned.alignment).toBe(64);
    expect(aligned.pairs.filter((pair) => pair.key === 'general.alignment')).toHaveLength(1);
  });
});
