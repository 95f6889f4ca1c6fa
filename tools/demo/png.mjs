// Just enough PNG decoding for a test to look at a screenshot: 8-bit RGB or RGBA, not interlaced
// (what Chromium writes), each row unfiltered by its filter byte.
import { inflateSync } from 'node:zlib';

/** The image as { width, height, channels, pixels } with `pixels` rows of channel bytes. */
export function decodePng(png) {
  const bytes = Buffer.from(png);
  if (bytes.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG');
  let offset = 8;
  let header;
  const data = [];
  while (offset < bytes.length) {
    const length = bytes.readUInt32BE(offset);
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const body = bytes.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR')
      header = {
        width: body.readUInt32BE(0),
        height: body.readUInt32BE(4),
        depth: body[8],
        color: body[9],
        interlace: body[12],
      };
    if (type === 'IDAT') data.push(body);
    offset += 12 + length;
  }
  const channels = { 2: 3, 6: 4 }[header?.color];
  if (
    header === undefined ||
    header.depth !== 8 ||
    channels === undefined ||
    header.interlace !== 0
  )
    throw new Error('only 8-bit RGB or RGBA PNGs without interlacing are read');
  const raw = inflateSync(Buffer.concat(data));
  const stride = header.width * channels;
  const pixels = new Uint8Array(header.height * stride);
  for (let row = 0; row < header.height; row++) {
    const filter = raw[row * (stride + 1)];
    for (let i = 0; i < stride; i++) {
      const x = raw[row * (stride + 1) + 1 + i];
      const a = i >= channels ? pixels[row * stride + i - channels] : 0;
      const b = row > 0 ? pixels[(row - 1) * stride + i] : 0;
      const c = row > 0 && i >= channels ? pixels[(row - 1) * stride + i - channels] : 0;
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const predictor = [0, a, b, (a + b) >> 1, paeth][filter];
      if (predictor === undefined) throw new Error(`unknown PNG filter ${filter}`);
      pixels[row * stride + i] = (x + predictor) & 0xff;
    }
  }
  return { width: header.width, height: header.height, channels, pixels };
}

/** Fraction of pixels darker than mid-grey: text on a white page. */
export function darkFraction({ width, height, channels, pixels }) {
  let dark = 0;
  for (let pixel = 0; pixel < width * height; pixel++) {
    const at = pixel * channels;
    if (pixels[at] + pixels[at + 1] + pixels[at + 2] < 3 * 128) dark += 1;
  }
  return dark / (width * height);
}
