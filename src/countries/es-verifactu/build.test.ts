import { describe, it, expect } from 'vitest';
import { verifactu } from './index.ts';
import { verifactuQrUrl } from './qr.ts';
import { ORIGINAL_DATE_INVALID, ORIGINAL_ON_SALE, ORIGINAL_PAIR, TOO_MANY_RATES } from './metadata.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { liveTaxIdRequired } from '../es/common.ts';
import { CUSTOMER_COUNTRY_REQUIRED } from '../es/party.ts';
import { SOFTWARE_NIF_INVALID } from './config.ts';
import { NOW, draft, line, location, stored, submitCtx, txCtx, validatedBuild } from '../shared/test-fixtures.ts';

describe('es-verifactu validateTransaction', () => {
  const loc = location('es-verifactu');
  it('defaults: series A, F2; F1 with a customer tax id; R5/R1 for refunds', () => {
    expect(verifactu.validateTransaction(draft(), txCtx(loc))).toEqual({ series: 'A', invoice_type: 'F2' });
    expect(verifactu.validateTransaction(draft({ customer_context: { nif: '12345678Z' } }), txCtx(loc)).invoice_type).toBe('F1');
    expect(verifactu.validateTransaction(draft({ type: 'refund' }), txCtx(loc)).invoice_type).toBe('R5');
  });

  it('a live transaction needs the location tax_id (the issuer is named by NIF, never 000000000); test keys may go without', () => {
    const bare = { ...loc, tax_id: null };
    expect400(() => verifactu.validateTransaction(draft(), { ...txCtx(bare), environment: 'live' }), liveTaxIdRequired('verifactu'));
    expect400(() => verifactu.validateTransaction(draft(), { ...txCtx({ ...loc, tax_id: ' ' }), environment: 'live' }), liveTaxIdRequired('verifactu'));
    expect(liveTaxIdRequired('verifactu')).toBe('location tax_id is required for live verifactu transactions: AEAT identifies the issuer by its NIF');
    expect(verifactu.validateTransaction(draft(), txCtx(bare))).toEqual({ series: 'A', invoice_type: 'F2' });
    expect(verifactu.validateTransaction(draft(), { ...txCtx(loc), environment: 'live' })).toEqual({ series: 'A', invoice_type: 'F2' });
  });

  it('description and the corrected invoice (both or neither, refunds only)', () => {
    const refund = (metadata: Record<string, unknown>) => draft({ type: 'refund', metadata });
    expect(verifactu.validateTransaction(refund({ original_invoice_number: 'A-7', original_issue_date: '14-01-2026', description: ' Devolución ' }), txCtx(loc)))
      .toMatchObject({ original_invoice_number: 'A-7', original_issue_date: '14-01-2026', description: 'Devolución' });
    expect400(() => verifactu.validateTransaction(refund({ original_invoice_number: 'A-7' }), txCtx(loc)), ORIGINAL_PAIR);
    expect400(() => verifactu.validateTransaction(refund({ original_invoice_number: 'A-7', original_issue_date: '2026-01-14' }), txCtx(loc)), ORIGINAL_DATE_INVALID);
    expect400(() => verifactu.validateTransaction(draft({ metadata: { original_invoice_number: 'A-7', original_issue_date: '14-01-2026' } }), txCtx(loc)), ORIGINAL_ON_SALE);
    const items = Array.from({ length: 13 }, (_, i) => line({ tax_rate: i, tax_amount: 0, total_amount: 1000 }));
    expect400(() => verifactu.validateTransaction(draft({ items }), txCtx(loc)), TOO_MANY_RATES);
  });
});

describe('es-verifactu QR', () => {
  it('AEAT document example shape: & in the number is %26', () => {
    expect(verifactuQrUrl('live', { nif: '89890001K', numSerie: '12345678&G33', fecha: '01-01-2024', importe: '241.4' })).toBe(
      'https://www2.agenciatributaria.gob.es/wlpl/TIKE-CONT/ValidarQR?nif=89890001K&numserie=12345678%26G33&fecha=01-01-2024&importe=241.4',
    );
  });
});

describe('es-verifactu build', () => {
  const loc = location('es-verifactu');

  it('a real RegistroAlta: no local fiscal id (AEAT returns the CSV); QR for the test environment; hints', () => {
    const { record } = validatedBuild(verifactu, loc, draft(), { chain: { seq: 7, previous: null } });
    expect(record.placeholder).toBe(false);
    expect(record.contentType).toBe('application/xml');
    expect(record.body).toMatch(/^<sf:RegistroAlta xmlns:sf="https:\/\/www2\.agenciatributaria\.gob\.es\/.+\/SuministroInformacion\.xsd">/);
    expect(record.fiscalId).toBeNull();
    expect(record.documentNumber).toBe('A-7');
    expect(record.linkData).toEqual({ IDEmisorFactura: 'B12345674', NumSerieFactura: 'A-7', FechaExpedicionFactura: '15-01-2026' });
    expect(record.qrData).toBe(
      'https://prewww2.aeat.es/wlpl/TIKE-CONT/ValidarQR?nif=B12345674&numserie=A-7&fecha=15-01-2026&importe=12.10',
    );
    expect(record.renderHints.map((h) => [h.key, h.kind, h.value])).toEqual([
      ['qr_label', 'text', 'QR tributario:'],
      ['qr', 'qr_url', record.qrData],
      ['verifactu_legend', 'text', 'VERI*FACTU'],
    ]);
    expect(record.body).toContain('<sf:Encadenamiento><sf:PrimerRegistro>S</sf:PrimerRegistro></sf:Encadenamiento>');
    expect(record.body).toContain(`<sf:Huella>${record.fingerprint}</sf:Huella></sf:RegistroAlta>`);
  });

  it('the number comes from the series counter (chain.number) or metadata.invoice_number', () => {
    expect(validatedBuild(verifactu, loc, draft(), { chain: { seq: 9, number: 3, previous: null } }).record.documentNumber).toBe('A-3');
    expect(validatedBuild(verifactu, loc, draft({ metadata: { series: 'T', invoice_number: 42 } })).record.documentNumber).toBe('T-42');
  });

  it('the issue date is the Madrid date: 23:30 UTC on 31 Dec is 1 Jan', () => {
    const { record } = validatedBuild(verifactu, loc, draft(), { now: new Date('2025-12-31T23:30:00Z') });
    expect(record.linkData?.FechaExpedicionFactura).toBe('01-01-2026');
    expect(record.body).toContain('<sf:FechaHoraHusoGenRegistro>2026-01-01T00:30:00+01:00</sf:FechaHoraHusoGenRegistro>');
  });

  it('RegistroAnterior repeats the previous record\'s linkData and huella', () => {
    const first = validatedBuild(verifactu, loc, draft()).record;
    const second = validatedBuild(verifactu, loc, draft(), {
      chain: { seq: 2, previous: { fingerprint: first.fingerprint, fiscalId: null, issuedAt: NOW.toISOString(), linkData: first.linkData } },
    }).record;
    expect(second.body).toContain(
      '<sf:RegistroAnterior><sf:IDEmisorFactura>B12345674</sf:IDEmisorFactura><sf:NumSerieFactura>A-1</sf:NumSerieFactura>' +
        `<sf:FechaExpedicionFactura>15-01-2026</sf:FechaExpedicionFactura><sf:Huella>${first.fingerprint}</sf:Huella></sf:RegistroAnterior>`,
    );
  });

  it('without linkData (a core that does not keep it) the previous number is left empty, never invented', () => {
    const first = validatedBuild(verifactu, loc, draft()).record;
    const second = validatedBuild(verifactu, loc, draft(), {
      chain: { seq: 2, previous: { fingerprint: first.fingerprint, fiscalId: null, issuedAt: NOW.toISOString() } },
    }).record;
    expect(second.body).toContain('<sf:IDEmisorFactura>B12345674</sf:IDEmisorFactura><sf:NumSerieFactura></sf:NumSerieFactura><sf:FechaExpedicionFactura>15-01-2026</sf:FechaExpedicionFactura>');
  });

  it('escapes text and names a foreign customer by IDOtro (NIF-IVA)', () => {
    const { record } = validatedBuild(verifactu, loc, draft({ customer_context: { tax_id: 'DE123456789', name: 'Müller & Söhne <GmbH>' } }));
    expect(record.body).toContain('<sf:IDDestinatario><sf:NombreRazon>Müller &amp; Söhne &lt;GmbH&gt;</sf:NombreRazon><sf:IDOtro><sf:IDType>02</sf:IDType><sf:ID>DE123456789</sf:ID></sf:IDOtro></sf:IDDestinatario>');
  });

  it('a customer tax id of a country outside the EU is IDOtro 04 (IDEnPaisResidencia) with CodigoPais, never 02 (NIF-IVA); without a country it is a 400', () => {
    const { record } = validatedBuild(verifactu, loc, draft({ customer_context: { tax_id: '12-3456789', name: 'US Inc', country: 'us' } }));
    expect(record.body).toContain('<sf:IDOtro><sf:CodigoPais>US</sf:CodigoPais><sf:IDType>04</sf:IDType><sf:ID>12-3456789</sf:ID></sf:IDOtro>');
    const swiss = validatedBuild(verifactu, loc, draft({ customer_context: { tax_id: 'CHE-123.456.789', name: 'AG', country_code: 'CH' } })).record;
    expect(swiss.body).toContain('<sf:IDOtro><sf:CodigoPais>CH</sf:CodigoPais><sf:IDType>04</sf:IDType><sf:ID>CHE-123.456.789</sf:ID></sf:IDOtro>');
    // An EU VAT number given with its country stays a NIF-IVA.
    const greek = validatedBuild(verifactu, loc, draft({ customer_context: { tax_id: 'EL094259216', name: 'AE' } })).record;
    expect(greek.body).toContain('<sf:IDOtro><sf:IDType>02</sf:IDType><sf:ID>EL094259216</sf:ID></sf:IDOtro>');
    expect400(() => validatedBuild(verifactu, loc, draft({ customer_context: { tax_id: '12-3456789', name: 'US Inc' } })), CUSTOMER_COUNTRY_REQUIRED);
  });

  it('a location stored before the config check, naming its producer by something AEAT cannot identify, issues nothing until PATCHed', () => {
    expect400(() => validatedBuild(verifactu, location('es-verifactu', { software_nif: 'N' }), draft()), SOFTWARE_NIF_INVALID);
  });

  it('installation_number from the config, else the location id', () => {
    expect(validatedBuild(verifactu, loc, draft()).record.body).toContain(`<sf:NumeroInstalacion>${loc.id}</sf:NumeroInstalacion>`);
    const own = location('es-verifactu', { installation_number: 'CAJA-2' });
    expect(validatedBuild(verifactu, own, draft()).record.body).toContain('<sf:NumeroInstalacion>CAJA-2</sf:NumeroInstalacion>');
  });

  it('RegistroAnulacion joins the chain, names the cancelled invoice and leaves it as linkData', () => {
    const { tx, record } = validatedBuild(verifactu, loc, draft());
    const cancel = verifactu.build({
      ...{ transactionId: 'c1', kind: 'cancellation', tx, location: loc, environment: 'test', now: new Date('2026-01-16T10:00:00Z') },
      original: { transactionId: 't1', fiscalId: null, tx, issuedAt: '2026-01-15T10:00:00.000Z', documentNumber: record.documentNumber },
      chain: { seq: 2, previous: { fingerprint: record.fingerprint, fiscalId: null, issuedAt: '2026-01-15T10:00:00.000Z', linkData: record.linkData } },
      software: { name: 'x', version: '1', vendorTaxId: 'A99800005' },
    });
    expect(verifactu.capabilities.cancellationJoinsChain).toBe(true);
    expect(cancel.placeholder).toBe(false);
    expect(cancel.body).toMatch(/^<sf:RegistroAnulacion /);
    expect(cancel.body).toContain(
      '<sf:IDFactura><sf:IDEmisorFacturaAnulada>B12345674</sf:IDEmisorFacturaAnulada><sf:NumSerieFacturaAnulada>A-1</sf:NumSerieFacturaAnulada>' +
        '<sf:FechaExpedicionFacturaAnulada>15-01-2026</sf:FechaExpedicionFacturaAnulada></sf:IDFactura>',
    );
    expect(cancel.linkData).toEqual(record.linkData);
    expect(cancel.documentNumber).toBeNull();
    expect(cancel.qrData).toBeNull();
  });

  it('refuses to annul an invoice whose number is unknown (409)', () => {
    const { tx } = validatedBuild(verifactu, loc, draft());
    expect(() =>
      verifactu.build({
        transactionId: 'c1', kind: 'cancellation', tx, location: loc, environment: 'test', now: NOW,
        original: { transactionId: 't1', fiscalId: null, tx, issuedAt: NOW.toISOString(), documentNumber: null },
        chain: { seq: 2, previous: null }, software: { name: 'x', version: '1', vendorTaxId: 'A99800005' },
      }),
    ).toThrow(expect.objectContaining({ status: 409 }));
  });

  it('sandbox: accept returns a 16-character CSV as fiscal id; 3000 is a duplicate; 1104 rejected in English', async () => {
    const ok = validatedBuild(verifactu, loc, draft());
    const out = await verifactu.submit(stored(ok.record, ok.tx), submitCtx(loc));
    expect(out.kind).toBe('accepted');
    expect(out.kind === 'accepted' && out.fiscalId).toMatch(/^[A-Z0-9]{16}$/);
    const dup = validatedBuild(verifactu, loc, draft({ metadata: { sandbox_outcome: 'reject:3000' } }));
    expect((await verifactu.submit(stored(dup.record, dup.tx), submitCtx(loc))).kind).toBe('duplicate');
    const rej = validatedBuild(verifactu, loc, draft({ metadata: { sandbox_outcome: 'reject:1104' } }));
    expect(await verifactu.submit(stored(rej.record, rej.tx), submitCtx(loc))).toMatchObject({
      kind: 'rejected',
      code: '1104',
      message: 'Invalid NumSerieFactura (invoice series and number) value.',
    });
  });

  it('plug-in: the authority transport exists', () => {
    expect(verifactu.capabilities.authorityTransport).toBe(true);
    expect(verifactu.version).toBe('0.2.0');
  });
});

describe('es-verifactu: a client number issued again after AEAT refused it (alta por rechazo)', () => {
  const loc = location('es-verifactu');
  const tx = draft({ metadata: { invoice_number: '77' } });
  const refused = (over: Partial<{ issuedAt: string; documentNumber: string | null }> = {}) =>
    ({ transactionId: '00000000-0000-4000-8000-000000000001', issuedAt: new Date(NOW.getTime() - 3_600_000).toISOString(), documentNumber: 'A-77', status: 'failed_permanent', ...over });
  const flags = (body: string) => /<sf:NombreRazonEmisor>[^<]*<\/sf:NombreRazonEmisor>((?:<sf:(?:Subsanacion|RechazoPrevio)>[^<]*<\/sf:\w+>)*)<sf:TipoFactura>/.exec(body)?.[1];

  it('the same IDFactura (number and Madrid day) refused before: Subsanacion S, RechazoPrevio X, before TipoFactura; the huella is the same', () => {
    const first = validatedBuild(verifactu, loc, tx).record;
    const again = validatedBuild(verifactu, loc, tx, { earlierIssues: [refused()] }).record;
    expect(flags(first.body)).toBe('');
    expect(flags(again.body)).toBe('<sf:Subsanacion>S</sf:Subsanacion><sf:RechazoPrevio>X</sf:RechazoPrevio>');
    // Neither flag is in the huella (FORMATS.md §2.1).
    expect(again.fingerprint).toBe(first.fingerprint);
    // A stored record without its number (documentNumber null) is read by its day alone.
    expect(flags(validatedBuild(verifactu, loc, tx, { earlierIssues: [refused({ documentNumber: null })] }).record.body)).toBe('<sf:Subsanacion>S</sf:Subsanacion><sf:RechazoPrevio>X</sf:RechazoPrevio>');
  });

  it('refused on another Madrid day, or under another NumSerieFactura: another invoice for AEAT, a plain alta', () => {
    const dayBefore = refused({ issuedAt: new Date(NOW.getTime() - 86_400_000).toISOString() });
    expect(flags(validatedBuild(verifactu, loc, tx, { earlierIssues: [dayBefore] }).record.body)).toBe('');
    expect(flags(validatedBuild(verifactu, loc, tx, { earlierIssues: [refused({ documentNumber: 'B-77' })] }).record.body)).toBe('');
    expect(flags(validatedBuild(verifactu, loc, tx, { earlierIssues: [] }).record.body)).toBe('');
  });
});
