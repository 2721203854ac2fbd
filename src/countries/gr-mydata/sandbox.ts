/**
 * Stub AADE (SendInvoices response, FORMATS §6): an accepted document gets its MARK
 * (`invoiceMark`, 15 digits here), `invoiceUid` (SHA-1, 40 uppercase hex),
 * `authenticationCode` (32 hex) and `qrUrl`, which the receipt must print (spec, Greek
 * render_hints). A cancellation gets a `cancellationMark`.
 */
import type { SubmitContext } from '../types.ts';
import { derivedDigits, derivedHex, type SandboxSpec } from '../shared/sandbox.ts';
import { qrUrlHint, textHint } from '../shared/render-hints.ts';
import { MYDATA_CODES } from './codes.ts';

const QR_BASE = {
  test: 'https://mydataapidev.aade.gr/TimologioQR/QRInfo?q=',
  live: 'https://mydatapi.aade.gr/myDATA/TimologioQR/QRInfo?q=',
} as const;

/** The QR URL AADE returns: an opaque base64 token, URL-encoded. */
function qrUrl(seed: string, ctx: SubmitContext): string {
  const token = Buffer.from(derivedHex(seed, 'mydata-qr', 96), 'hex').toString('base64');
  return `${QR_BASE[ctx.environment]}${encodeURIComponent(token)}`;
}

export const myDataSandbox: SandboxSpec = {
  system: 'gr-mydata',
  authority: 'AADE',
  codes: MYDATA_CODES,
  accept: (record, ctx) => {
    const id = record.transactionId;
    const mark = derivedDigits(id, 'mydata-mark', 15);
    if (record.kind === 'cancellation') {
      return { upstreamId: mark, response: { cancellationMark: mark, statusCode: 'Success' } };
    }
    const uid = derivedHex(id, 'mydata-uid', 40);
    const auth = derivedHex(id, 'mydata-auth', 32);
    const qr = qrUrl(id, ctx);
    return {
      upstreamId: mark,
      response: { invoiceUid: uid, invoiceMark: mark, authenticationCode: auth, qrUrl: qr, statusCode: 'Success' },
      renderHints: [
        textHint('mark', 'footer_bottom', mark),
        textHint('uid', 'footer_bottom', uid),
        textHint('auth_code', 'footer_bottom', auth),
        qrUrlHint('qr', 'footer_right', qr),
      ],
    };
  },
};
