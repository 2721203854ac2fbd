import { XMLParser } from 'fast-xml-parser';
import { describe, it, expect } from 'vitest';
import { sdi } from './index.ts';
import { MODALITA_PAGAMENTO, NUMERO_MAX, cancellationNumber, quantityText, rateText, summaryTax } from './build.ts';
import { latin } from '../it/latin.ts';
import { NOW, TX_ID, draft, location, stored, submitCtx, validatedBuild } from '../shared/test-fixtures.ts';
import { HAVE_SCHEMAS, xsdValidate } from '../../../test/support/xml-tools.ts';

const FATTURAPA_XSD = 'it/fatturapa/Schema_del_file_xml_FatturaPA_v1.2.2.xsd';

describe('it-sdi build and sandbox', () => {
  const loc = location('it-sdi');
  const sale = () => draft({ metadata: { invoice_number: '2026/15' } });

  const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: false, parseTagValue: false });
  const doc = (body: string) => (parser.parse(body) as Record<string, any>).FatturaElettronica;

  it('FatturaPA 1.2.2 XML: the SdI file name as fiscal id, the invoice number as hint', () => {
    const { record } = validatedBuild(sdi, loc, sale());
    expect(record).toMatchObject({ contentType: 'application/xml', placeholder: false, fiscalId: 'IT01234567897_00001.xml' });
    expect(record.documentNumber).toBe('2026/15');
    expect(record.renderHints).toEqual([{ key: 'invoice_number', placement: 'header', mandatory: true, kind: 'text', value: '2026/15' }]);
    const f = doc(record.body);
    expect(f['@_versione']).toBe('FPR12');
    expect(f.FatturaElettronicaHeader.DatiTrasmissione).toMatchObject({
      ProgressivoInvio: '00001',
      FormatoTrasmissione: 'FPR12',
      CodiceDestinatario: '0000000',
    });
    expect(f.FatturaElettronicaBody.DatiGenerali.DatiGeneraliDocumento).toEqual({
      TipoDocumento: 'TD01',
      Divisa: 'EUR',
      Data: '2026-01-15',
      Numero: '2026/15',
      ImportoTotaleDocumento: '12.10',
    });
    // Without a configured Sede: the location address or name, CAP 00000 (docs/decisions.md "Italy").
    expect(f.FatturaElettronicaHeader.CedentePrestatore.Sede).toEqual({ Indirizzo: 'Shop', CAP: '00000', Comune: 'Shop', Nazione: 'IT' });
  });

  it('the progressivo: chain.number in base 36 (5 characters); credit notes N + seq; exhausted is a 409', () => {
    const at = (number: number) => validatedBuild(sdi, loc, sale(), { chain: { seq: 1, number, previous: null } }).record.fiscalId;
    expect(at(36)).toBe('IT01234567897_00010.xml');
    expect(at(23 * 36 ** 4 - 1)).toBe('IT01234567897_MZZZZ.xml');
    expect(() => at(23 * 36 ** 4)).toThrow('the SdI file progressivo of this transmitter is exhausted');
    expect(sdi.numberingKey?.({ location: loc, tx: sale() })).toBe('it-sdi:11111111-2222-4333-8444-555555555555:01234567897');
  });

  it('country_config.progressivo_invio prefixes ProgressivoInvio; the file name keeps the 5-character progressivo', () => {
    const { record } = validatedBuild(sdi, location('it-sdi', { progressivo_invio: 'A7' }), sale());
    expect(doc(record.body).FatturaElettronicaHeader.DatiTrasmissione.ProgressivoInvio).toBe('A700001');
    expect(record.fiscalId).toBe('IT01234567897_00001.xml');
  });

  it('formats: quantities 2-8 decimals, rates 2 decimals, payment method codes', () => {
    expect(quantityText(1)).toBe('1.00');
    expect(quantityText(0.125)).toBe('0.125');
    expect(quantityText(2.5)).toBe('2.50');
    expect(rateText(22)).toBe('22.00');
    expect(rateText(5.5)).toBe('5.50');
    expect(MODALITA_PAGAMENTO).toEqual({ cash: 'MP01', card: 'MP08', transfer: 'MP05', other: 'MP01' });
    expect(latin('Caffè  “speciale”\n', 80)).toBe('Caffè "speciale"');
  });

  it('cancellation is a TD04 credit note numbered from the original', () => {
    const { tx, record } = validatedBuild(sdi, loc, sale());
    const note = sdi.build({
      transactionId: 'c1',
      kind: 'cancellation',
      tx,
      original: { transactionId: TX_ID, fiscalId: null, tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber },
      location: loc,
      environment: 'test',
      now: NOW,
      chain: { seq: 1, previous: null },
      software: { name: 'x', version: '1', vendorTaxId: 'x' },
    });
    expect(note.documentNumber).toBe('NC-2026/15');
    expect(note.fiscalId).toBe('IT01234567897_N0001.xml');
    const g = doc(note.body).FatturaElettronicaBody.DatiGenerali;
    expect(g.DatiGeneraliDocumento).toMatchObject({ TipoDocumento: 'TD04', Numero: 'NC-2026/15' });
    expect(g.DatiFattureCollegate).toEqual({ IdDocumento: '2026/15', Data: '2026-01-15' });
  });

  /** The cancellation of a built original, as the core asks for it. */
  const cancelOf = (original: ReturnType<typeof validatedBuild>) => sdi.build({
    transactionId: 'c1',
    kind: 'cancellation',
    tx: original.tx,
    original: { transactionId: TX_ID, fiscalId: original.record.fiscalId, tx: original.tx, issuedAt: NOW.toISOString(), documentNumber: original.record.documentNumber },
    location: loc,
    environment: 'test',
    now: NOW,
    chain: { seq: 1, previous: null },
    software: { name: 'x', version: '1', vendorTaxId: 'x' },
  });

  it('cancelling a credit note (TD04) issues a debit note (TD05) naming it, not a second credit note; valid against the XSD', () => {
    const refund = validatedBuild(sdi, loc, draft({ type: 'refund', metadata: { invoice_number: 'R-refund-1' } }));
    expect(doc(refund.record.body).FatturaElettronicaBody.DatiGenerali.DatiGeneraliDocumento.TipoDocumento).toBe('TD04');
    const debit = cancelOf(refund);
    const g = doc(debit.body).FatturaElettronicaBody.DatiGenerali;
    expect(g.DatiGeneraliDocumento).toMatchObject({ TipoDocumento: 'TD05', Numero: 'ND-R-refund-1', ImportoTotaleDocumento: '12.10' });
    expect(g.DatiFattureCollegate).toMatchObject({ IdDocumento: 'R-refund-1' });
    expect(debit.documentNumber).toBe('ND-R-refund-1');
    // An explicit TD04 sale (tipo_documento) is a credit note too; a TD01 invoice still gets a TD04.
    const explicit = validatedBuild(sdi, loc, draft({ metadata: { invoice_number: 'NC-77', tipo_documento: 'TD04' } }));
    expect(doc(cancelOf(explicit).body).FatturaElettronicaBody.DatiGenerali.DatiGeneraliDocumento.TipoDocumento).toBe('TD05');
    expect(doc(cancelOf(validatedBuild(sdi, loc, sale())).body).FatturaElettronicaBody.DatiGenerali.DatiGeneraliDocumento.TipoDocumento).toBe('TD04');
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(debit.body, FATTURAPA_XSD);
      expect(v.ok, v.output).toBe(true);
    }
  });

  it('the cancelling number stays within Numero\'s 20 characters for originals of 18-20, deterministic and distinct; valid against the XSD', () => {
    expect(cancellationNumber('NC-', '2026/15')).toBe('NC-2026/15');
    expect(cancellationNumber('NC-', '12345678901234567')).toBe('NC-12345678901234567');
    const long = 'FATT-2026-000000012';
    const n = cancellationNumber('NC-', long);
    expect(n).toMatch(/^NC-000000012-\d{6}$/);
    expect(Array.from(n).length).toBeLessThanOrEqual(NUMERO_MAX);
    expect(cancellationNumber('NC-', 'AB12345678901234567X')).toMatch(/^NC-901234567X-\d{6}$/);
    expect(cancellationNumber('NC-', 'AB12345678901234567X')).toHaveLength(NUMERO_MAX);
    expect(cancellationNumber('NC-', long)).toBe(n);
    // Originals that differ only before the kept tail still get different numbers.
    expect(cancellationNumber('NC-', 'GATT-2026-000000012')).not.toBe(n);
    for (const original of ['A'.repeat(17) + '1', 'FATT-2026-000000012', '20-characters-00001X']) {
      const built = cancelOf(validatedBuild(sdi, loc, draft({ metadata: { invoice_number: original } })));
      expect(Array.from(built.documentNumber!).length).toBeLessThanOrEqual(NUMERO_MAX);
      if (HAVE_SCHEMAS) {
        const v = xsdValidate(built.body, FATTURAPA_XSD);
        expect(v.ok, `${original}: ${v.output}`).toBe(true);
      }
    }
  });

  it('stub: sent with the file name and IdentificativoSdI; the RC or NS follows as a notification (00404: an NS and the RC of the held copy) (sandbox.test.ts)', async () => {
    const ok = validatedBuild(sdi, loc, sale());
    expect(await sdi.submit(stored(ok.record, ok.tx), submitCtx(loc))).toMatchObject({
      kind: 'sent',
      reference: ok.record.fiscalId,
      response: { notification: 'RC', IdentificativoSdI: expect.stringMatching(/^[1-9]\d{9}$/) },
      notifications: [{ contentType: 'application/xml', body: expect.stringContaining('<types:RicevutaConsegna') }],
    });
    const rej = validatedBuild(sdi, loc, draft({ metadata: { invoice_number: '1', sandbox_outcome: 'reject:00311' } }));
    expect(await sdi.submit(stored(rej.record, rej.tx), submitCtx(loc))).toMatchObject({
      kind: 'sent',
      response: { notification: 'NS', code: '00311' },
      notifications: [{ body: expect.stringContaining('<Codice>00311</Codice>') }],
    });
    // 00404: the NS for the resent copy and the RC of the copy SdI held (sandbox.ts).
    const dup = validatedBuild(sdi, loc, draft({ metadata: { invoice_number: '1', sandbox_outcome: 'reject:00404' } }));
    expect(await sdi.submit(stored(dup.record, dup.tx), submitCtx(loc))).toMatchObject({
      kind: 'sent',
      response: { notification: 'NS+RC', code: '00404' },
      notifications: [{ body: expect.stringContaining('<Codice>00404</Codice>') }, { body: expect.stringContaining('<types:RicevutaConsegna') }],
    });
  });
});

describe('summaryTax: the DatiRiepilogo VAT SdI accepts (check 00421)', () => {
  it('keeps the lines\' VAT within ±0.01 of taxable × rate, else the product rounded half up', () => {
    expect(summaryTax(510, 22, 110)).toBe(112); // 5 × 1.02: 1.10 vs 1.122
    expect(summaryTax(510, 22, 113)).toBe(113); // 0.008 off: kept
    expect(summaryTax(510, 22, 111)).toBe(112); // 0.012 off: recomputed
    expect(summaryTax(123, 22, 22)).toBe(27); // 0.2706
    expect(summaryTax(1000, 5.5, 55)).toBe(55);
    expect(summaryTax(1050, 5.5, 50)).toBe(58); // 0.5775 rounds half up to 0.58
    expect(summaryTax(9_999_999_999_999, 22, 2_199_999_999_999)).toBe(2_199_999_999_999); // 2,199,999,999,999.78 cents, in integers
    expect(summaryTax(1999, 0, 0)).toBe(0);
  });
});
