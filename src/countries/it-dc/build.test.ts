import { describe, it, expect } from 'vitest';
import { documentoCommerciale as dc } from './index.ts';
import { dcDocumentNumber, dcFingerprint, dcPayments, nextDcNumbering, readDcNumbering } from './build.ts';
import { NOW, TX_ID, draft, location, validatedBuild } from '../shared/test-fixtures.ts';

const loc = location('it-dc');

describe('it-dc numbering: NNNN-NNNN = daily closure - progressive of the day, per register', () => {
  it('formats', () => {
    expect(dcDocumentNumber({ closure: 1, progressive: 1 })).toBe('0001-0001');
    expect(dcDocumentNumber({ closure: 12, progressive: 345 })).toBe('0012-0345');
  });

  it('the first document opens closure 1; the same day counts on; a new day opens the next closure', () => {
    const a = nextDcNumbering(null, '2026-01-15');
    expect(a).toEqual({ day: '2026-01-15', closure: 1, progressive: 1 });
    const b = nextDcNumbering(a, '2026-01-15');
    expect(b).toEqual({ day: '2026-01-15', closure: 1, progressive: 2 });
    expect(nextDcNumbering(b, '2026-01-17')).toEqual({ day: '2026-01-17', closure: 2, progressive: 1 });
  });

  it('past 9999 documents a day the next closure opens; the closure counter wraps after 9999', () => {
    expect(nextDcNumbering({ day: 'd', closure: 3, progressive: 9999 }, 'd')).toEqual({ day: 'd', closure: 4, progressive: 1 });
    expect(nextDcNumbering({ day: 'd', closure: 9999, progressive: 5 }, 'e')).toEqual({ day: 'e', closure: 1, progressive: 1 });
  });

  it('reads the numbering the previous record left; anything else starts afresh', () => {
    expect(readDcNumbering({ day: '2026-01-15', closure: '2', progressive: '7' })).toEqual({ day: '2026-01-15', closure: 2, progressive: 7 });
    expect(readDcNumbering(null)).toBeNull();
    expect(readDcNumbering({ day: '2026-01-15', closure: 'x', progressive: '7' })).toBeNull();
  });

  it('the chain is the register', () => {
    expect(dc.chainKey({ location: loc, tx: draft() })).toBe(`it-dc:${loc.id}:ABCD-123456`);
  });
});

describe('it-dc build', () => {
  it('a sale: the sealed XML, its number as fiscal id and document_number hint, its fingerprint and numbering as the link', () => {
    const { record } = validatedBuild(dc, loc, draft(), { chain: { seq: 12, previous: null } });
    expect(record).toMatchObject({ contentType: 'application/xml', placeholder: false, fiscalId: '0001-0001', documentNumber: '0001-0001' });
    expect(record.renderHints).toEqual([{ key: 'document_number', placement: 'header', mandatory: true, kind: 'text', value: '0001-0001' }]);
    expect(record.linkData).toEqual({ day: '2026-01-15', closure: '1', progressive: '1' });
    const signatureValue = /<ds:SignatureValue[^>]*>([^<]+)</.exec(record.body)![1]!;
    expect(record.fingerprint).toBe(dcFingerprint(signatureValue));
    expect(record.body).toContain('<NumeroProgressivo>0001-0001</NumeroProgressivo><Ammontare>12.10</Ammontare>');
    expect(record.body).toContain('<Vendita><DatiPagamento><Tipo>PE</Tipo><Importo>12.10</Importo></DatiPagamento></Vendita>');
    expect(record.body).toContain('<IdCliente>ANONIMO</IdCliente>');
    expect(record.body).toContain(' simulazione="true" versione="1.0">');
    expect(record.body).toContain('<fc:Link><fc:Register>ABCD-123456</fc:Register><fc:Sequence>12</fc:Sequence></fc:Link>');
  });

  it('the next document names the previous fingerprint in its signed chain link and counts on', () => {
    const previous = { fingerprint: 'ab'.repeat(32), fiscalId: '0003-0041', issuedAt: NOW.toISOString(), linkData: { day: '2026-01-15', closure: '3', progressive: '41' } };
    const { record } = validatedBuild(dc, loc, draft(), { chain: { seq: 2, previous } });
    expect(record.fiscalId).toBe('0003-0042');
    expect(record.body).toContain(`<fc:Sequence>2</fc:Sequence><fc:Previous>${'ab'.repeat(32)}</fc:Previous>`);
    const nextDay = validatedBuild(dc, loc, draft(), { chain: { seq: 2, previous: { ...previous, linkData: { ...previous.linkData, day: '2026-01-14' } } } });
    expect(nextDay.record.fiscalId).toBe('0004-0001');
  });

  it('live keys send no simulazione flag; the lottery code is the IdCliente, else the codice fiscale', () => {
    const live = validatedBuild(dc, loc, draft({ metadata: { lottery_code: 'AB12CD34', customer_codice_fiscale: 'RSSMRA85T10A562S' } }), { environment: 'live' });
    expect(live.record.body).not.toContain('simulazione');
    expect(live.record.body).toContain('<IdCliente>AB12CD34</IdCliente>');
    const cf = validatedBuild(dc, loc, draft({ metadata: { customer_codice_fiscale: 'RSSMRA85T10A562S' } }));
    expect(cf.record.body).toContain('<IdCliente>RSSMRA85T10A562S</IdCliente>');
  });

  it('payments: cash, electronic, and vouchers or the uncovered rest as not collected (NR)', () => {
    const pay = (over: Parameters<typeof draft>[0]) => dcPayments(validatedBuild(dc, loc, draft(over)).tx);
    expect(pay({ payment_method: 'cash' })).toEqual([{ tipo: 'PC', importo: '12.10' }]);
    expect(pay({ metadata: { cash_amount: 1000, electronic_amount: 110, ticket_amount: 100 } })).toEqual([
      { tipo: 'PC', importo: '10.00' },
      { tipo: 'PE', importo: '1.10' },
      { tipo: 'NR', importo: '1.00' },
    ]);
    expect(pay({ payment_method: 'other' })).toEqual([{ tipo: 'NR', importo: '12.10' }]);
  });

  it('a return names the original document (R) from the metadata', () => {
    const meta = { original_matricola: 'ABCD-123456', original_date: '2026-01-10', original_number: '0012-0034' };
    const { record } = validatedBuild(dc, loc, draft({ type: 'refund', metadata: meta }));
    expect(record.body).toContain(
      '<ResoAnnullo><Tipologia>R</Tipologia><DataOra>2026-01-10T00:00:00</DataOra><Progressivo>0012-0034</Progressivo><Dispositivo><MatrTrasm>ABCD-123456</MatrTrasm></Dispositivo></ResoAnnullo>',
    );
    const annullo = validatedBuild(dc, loc, draft({ type: 'void', metadata: { ...meta, is_cancellation: true } }));
    expect(annullo.record.body).toContain('<Tipologia>A</Tipologia>');
  });

  it('cancel: a documento di annullo, a new numbered document naming the cancelled one', () => {
    const { tx, record } = validatedBuild(dc, loc, draft());
    const { record: annullo } = validatedBuild(dc, loc, draft(), {
      transactionId: 'c1',
      kind: 'cancellation',
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber },
      chain: { seq: 2, previous: { fingerprint: record.fingerprint, fiscalId: record.fiscalId, issuedAt: NOW.toISOString(), linkData: record.linkData } },
    });
    expect(annullo.fiscalId).toBe('0001-0002');
    expect(annullo.body).toContain(
      '<ResoAnnullo><Tipologia>A</Tipologia><DataOra>2026-01-15T11:00:00+01:00</DataOra><Progressivo>0001-0001</Progressivo><Dispositivo><MatrTrasm>ABCD-123456</MatrTrasm></Dispositivo></ResoAnnullo>',
    );
    expect(annullo.body).toContain(`<fc:Previous>${record.fingerprint}</fc:Previous>`);
  });

  it('without a seal key nothing is built', () => {
    expect(() => validatedBuild(dc, loc, draft(), { signingKey: undefined })).toThrow(/no signing key/);
  });
});
