import crypto from 'node:crypto';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { saft } from './index.ts';
import { draft, location, validatedBuild } from '../shared/test-fixtures.ts';
import { goldenProducerKey } from './golden-cases.ts';
import { PNG_SIGNATURE } from '../../core/png.ts';
import { QR_MARGIN, QR_MIN_VERSION, QR_SCALE, saftQrDataUrl, saftQrModules, saftQrPng, saftQrSymbol } from './qr-image.ts';

/*
 * The QR image (AT QR spec v1.0: level M, byte mode, version >= 9): decoded back with an
 * independent reader (jsQR over pngjs's decoding of the PNG), and its symbol checked
 * through qrcode's own model.
 */

// jsqr is CommonJS whose types declare an ES default export: the function is the module or its `default`.
const jsQR = ((jsQRModule as unknown as { default?: typeof jsQRModule.default }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;

/** Decodes a PNG with pngjs and reads the QR in it with jsQR. */
function decode(png: Buffer): { text: string; version: number } {
  const image = PNG.sync.read(png);
  const found = jsQR(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height);
  if (!found) throw new Error('no QR code found in the image');
  return { text: found.data, version: found.version };
}

// AT spec v1.0 example 2 (FORMATS §7.3), as qr.ts writes it.
const AT_EXAMPLE = 'A:123456789*B:999999990*C:PT*D:FS*E:N*F:20190812*G:FS CDVF/12345*H:CDF7T5HD-12345*I1:PT*I7:0.65*I8:0.15*N:0.15*O:0.80*Q:YhGV*R:9999*S:NU;0.80';

describe('pt-saft QR image', () => {
  it('the AT example decodes back from the PNG; level M, byte mode, version 9', () => {
    const png = saftQrPng(AT_EXAMPLE);
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    const symbol = saftQrSymbol(AT_EXAMPLE);
    expect(symbol.version).toBe(QR_MIN_VERSION);
    expect(symbol.errorCorrectionLevel.bit).toBe(0); // ISO/IEC 18004 level indicator: M = 00
    expect(symbol.segments.map((s) => s.mode.id)).toEqual(['Byte']);
    expect(symbol.modules.size).toBe(53); // version 9: 17 + 4 × 9
    const image = PNG.sync.read(png);
    expect(image.width).toBe((53 + 2 * QR_MARGIN) * QR_SCALE);
    expect(decode(png)).toEqual({ text: AT_EXAMPLE, version: 9 });
  });

  it("the data mask is qrcode's own choice (lowest ISO penalty): the same modules, bit for bit, for varied contents", () => {
    const contents = [
      AT_EXAMPLE,
      'A:1',
      `${AT_EXAMPLE}*${'X'.repeat(120)}`,
      ...Array.from({ length: 150 }, (_, i) => AT_EXAMPLE.replace('12345*H', `${(i * 7919) % 100000}*H`).replace('YhGV', String.fromCharCode(65 + (i % 26)) + 'b' + (i % 10) + 'Z')),
      // Arbitrary bytes-worth of text of many lengths (deterministic).
      ...Array.from({ length: 150 }, (_, i) => crypto.createHash('sha512').update(String(i)).digest('base64').repeat(3).slice(0, 10 + i)),
    ];
    const masks = new Set<number>();
    for (const c of contents) {
      const reference = saftQrSymbol(c); // qrcode chooses the mask
      const ours = saftQrModules(c);
      expect(ours.maskPattern, c).toBe(reference.maskPattern);
      expect(Buffer.from(ours.modules).equals(Buffer.from(reference.modules.data)), c).toBe(true);
      masks.add(ours.maskPattern);
    }
    // The contents exercise several masks, not one.
    expect(masks.size).toBeGreaterThan(3);
  });

  it('content longer than version 9 holds gets the smallest version that holds it, still level M', () => {
    const long = `${AT_EXAMPLE}*${'X'.repeat(120)}`;
    const symbol = saftQrSymbol(long);
    expect(symbol.version).toBeGreaterThan(QR_MIN_VERSION);
    expect(symbol.errorCorrectionLevel.bit).toBe(0);
    expect(decode(saftQrPng(long)).text).toBe(long);
    // Short content is not made smaller than version 9.
    expect(saftQrSymbol('A:1').version).toBe(QR_MIN_VERSION);
  });

  it("a document's qr_image hint points to the PNG the plug-in draws from its qr hint: the same content decodes back", () => {
    const { record } = validatedBuild(saft, location('pt-saft'), draft({ customer_context: { nif: '123456789' } }), { signingKey: goldenProducerKey() });
    const qr = record.renderHints.find((h) => h.key === 'qr')!;
    const image = record.renderHints.find((h) => h.key === 'qr_image')!;
    expect(image).toMatchObject({ kind: 'image_url', placement: qr.placement, mandatory: false, value: expect.stringMatching(/^\/v1\/transactions\/[^/]+\/qr\.png$/) });
    expect(saft.qrImage?.hintKey).toBe('qr');
    expect(decode(saft.qrImage!.png(qr.value)).text).toBe(qr.value);
    expect(record.qrData).toBe(qr.value);
  });

  it('cost per document (logged; the bound only catches an accidental slow path)', () => {
    const contents = Array.from({ length: 200 }, (_, i) => AT_EXAMPLE.replace('12345*H', `${10000 + i}*H`));
    saftQrPng(contents[0]!); // warm up
    const start = process.hrtime.bigint();
    let bytes = 0;
    for (const c of contents) bytes += saftQrDataUrl(c).length;
    const perDocMs = Number(process.hrtime.bigint() - start) / 1e6 / contents.length;
    console.log(`pt-saft QR image: ${perDocMs.toFixed(3)} ms and ${Math.round(bytes / contents.length)} characters (data URL) per document`);
    // A loose bound, against an accidental slow path (e.g. a per-call import), not a benchmark.
    expect(perDocMs).toBeLessThan(20);
  });
});
