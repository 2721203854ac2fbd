/**
 * TicketBAI build + XAdES-EPES signing throughput, in process (no database, no HTTP).
 *
 *   node --import tsx bench/ticketbai-sign.ts [N]      (default N = 5000; BENCH_DOCS works too)
 *
 * Prints docs/s and ms/doc for the whole `build` (XML, digests, RSA signature, TBAI id,
 * QR), then the parts: the unsigned XML alone, one RSA-SHA256 signature alone, and what
 * is left (digests and signature assembly).
 */
import { sign } from 'node:crypto';
import { ticketBai } from '../src/countries/es-ticketbai/index.ts';
import { invoiceFields, ticketBaiXml } from '../src/countries/es-ticketbai/xml.ts';
import { buildInput, draft, fixedSigningKey, line, location, txCtx } from '../src/countries/shared/test-fixtures.ts';
import type { BuildInput, FiscalRecord } from '../src/countries/types.ts';

const N = Number(process.argv[2] ?? process.env.BENCH_DOCS ?? 5000);
const key = fixedSigningKey();
const loc = location('es-ticketbai');
// A typical receipt: three lines, two VAT rates.
const raw = draft({
  items: [
    line({ description: 'Menú del día', quantity: 2, unit_price: 1250, tax_rate: 10, tax_amount: 250, total_amount: 2750 }),
    line({ description: 'Agua mineral 50 cl', quantity: 2, unit_price: 150, tax_rate: 10, tax_amount: 30, total_amount: 330 }),
    line({ description: 'Camiseta', quantity: 1, unit_price: 1500, tax_rate: 21, tax_amount: 315, total_amount: 1815 }),
  ],
});
const tx = { ...raw, metadata: ticketBai.validateTransaction(raw, txCtx(loc)) };

const inputs: BuildInput[] = [];
let previous: FiscalRecord | null = null;
function input(i: number): BuildInput {
  return buildInput(loc, tx, {
    transactionId: `bench-${i}`,
    signingKey: key,
    chain: {
      seq: i + 1,
      number: i + 1,
      previous: previous === null ? null : { fingerprint: previous.fingerprint, fiscalId: previous.fiscalId, issuedAt: '', linkData: previous.linkData },
    },
  });
}

function time(label: string, n: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(200, n); i++) fn(i); // warm-up (JIT, certificate cache)
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn(i);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const perDoc = ms / n;
  console.log(`${label.padEnd(34)} ${String(n).padStart(6)} docs  ${(1000 / perDoc).toFixed(0).padStart(7)} docs/s  ${perDoc.toFixed(4)} ms/doc`);
  return perDoc;
}

console.log(`node ${process.version}, RSA-${key.certificate.publicKey.asymmetricKeyDetails?.modulusLength}`);
const total = time('build + sign (whole record)', N, (i) => {
  previous = ticketBai.build(input(i));
});
for (let i = 0; i < 10; i++) inputs.push(input(i));
const xml = time('unsigned XML only', N, (i) => {
  ticketBaiXml(invoiceFields(inputs[i % inputs.length]!, String(i + 1)));
});
const signedInfo = Buffer.from(`<ds:SignedInfo xmlns:T="urn:ticketbai:emision">${'x'.repeat(1100)}</ds:SignedInfo>`);
const rsa = time('RSA-SHA256 signature only', N, () => {
  sign('sha256', signedInfo, key.privateKey);
});
console.log(`=> XML + digests + assembly (whole minus RSA): ${(total - rsa).toFixed(4)} ms/doc (of which unsigned XML ${xml.toFixed(4)})`);
