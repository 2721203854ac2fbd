import { describe, it, expect } from 'vitest';
import { sdi } from './index.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { draft, line, location, txCtx } from '../shared/test-fixtures.ts';
import { SELLER_CODICE_FISCALE_INVALID } from './metadata.ts';

const loc = location('it-sdi');
const validate = (metadata: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}, l = loc) =>
  sdi.validateTransaction(draft({ metadata, ...over }), txCtx(l));

describe('it-sdi validateTransaction', () => {
  it('requires invoice_number with the spec message', () => {
    expect400(() => validate({}), 'invoice_number is required in metadata for Italian transactions');
    expect400(() => validate({ invoice_number: '  ' }), 'invoice_number is required in metadata for Italian transactions');
  });

  it('defaults: today (Rome), 0000000, IT, TD01', () => {
    expect(validate({ invoice_number: '2026/1' })).toEqual({
      invoice_number: '2026/1',
      invoice_date: '2026-01-15',
      codice_destinatario: '0000000',
      buyer_country: 'IT',
      tipo_documento: 'TD01',
    });
  });

  it('refund and void default to a credit note TD04; override among the allowed codes', () => {
    expect(validate({ invoice_number: 'NC1' }, { type: 'refund' }).tipo_documento).toBe('TD04');
    expect(validate({ invoice_number: 'NC1' }, { type: 'void' }).tipo_documento).toBe('TD04');
    expect(validate({ invoice_number: '1', tipo_documento: 'TD24' }).tipo_documento).toBe('TD24');
    expect400(() => validate({ invoice_number: '1', tipo_documento: 'TD03' }), 'metadata.tipo_documento must be one of TD01, TD02, TD04, TD06, TD07, TD24');
  });

  it('keeps the buyer fields and an integer invoice number', () => {
    expect(validate({ invoice_number: 17, buyer_denomination: 'Rossi Srl', buyer_country: 'DE', codice_destinatario: 'ABC1234' })).toMatchObject({
      invoice_number: '17',
      buyer_denomination: 'Rossi Srl',
      buyer_country: 'DE',
      codice_destinatario: 'ABC1234',
    });
  });

  it.each([
    [{ invoice_number: 'ABC' }, 'metadata.invoice_number must be 1-20 characters and contain at least one digit'],
    [{ invoice_number: '1'.repeat(21) }, 'metadata.invoice_number must be 1-20 characters and contain at least one digit'],
    [{ invoice_number: '1', invoice_date: '15/01/2026' }, 'metadata.invoice_date must be a date in the form YYYY-MM-DD'],
    [{ invoice_number: '1', invoice_date: '2026-02-30' }, 'metadata.invoice_date must be a date in the form YYYY-MM-DD'],
    [{ invoice_number: '1', invoice_date: '2026-01-16' }, 'metadata.invoice_date must not be in the future'],
    [{ invoice_number: '1', codice_destinatario: 'abc1234' }, 'metadata.codice_destinatario must be 7 uppercase letters or digits'],
    [{ invoice_number: '1', codice_destinatario: 'ABC123' }, 'metadata.codice_destinatario must be 7 uppercase letters or digits'],
    [{ invoice_number: '1', buyer_country: 'ITA' }, 'metadata.buyer_country must be an ISO 3166-1 alpha-2 code (e.g. IT)'],
  ])('refuses %j', (meta, message) => {
    expect400(() => validate(meta), message);
  });

  it('public administration (FPA12): the 6-character IPA office code, required', () => {
    const pa = location('it-sdi', { formato_trasmissione: 'FPA12' });
    expect(validate({ invoice_number: '1', codice_destinatario: 'UFXYZ1' }, {}, pa).codice_destinatario).toBe('UFXYZ1');
    expect400(
      () => validate({ invoice_number: '1' }, {}, pa),
      'metadata.codice_destinatario is required for public administration invoices (FPA12): the 6-character IPA office code',
    );
    expect400(
      () => validate({ invoice_number: '1', codice_destinatario: '0000000' }, {}, pa),
      'metadata.codice_destinatario must be the 6-character IPA office code (uppercase letters or digits) for FPA12',
    );
  });

  it('applies the Natura rule and the EUR rule', () => {
    expect400(
      () => validate({ invoice_number: '1' }, { items: [line({ tax_rate: 0, tax_amount: 0, total_amount: 1000 })] }),
      'items[0].natura is required when tax_rate is 0 (N1-N6)',
    );
    expect400(() => validate({ invoice_number: '1' }, { currency: 'CHF' }), 'currency must be EUR for Italy locations');
  });

  it.each([
    ['N2', 'N2.1 or N2.2'],
    ['N3', 'N3.1 to N3.6'],
    ['N6', 'N6.1 to N6.9'],
  ])('refuses the generic Natura %s that SdI no longer accepts, asking for its sub-code', (natura, sub) => {
    const items = [line({ tax_rate: 0, tax_amount: 0, total_amount: 1000, natura })];
    expect400(() => validate({ invoice_number: '1' }, { items }), `items[0].natura ${natura} is no longer accepted by SdI: give its sub-code (${sub})`);
    const ok = [line({ tax_rate: 0, tax_amount: 0, total_amount: 1000, natura: `${natura}.1` })];
    expect(validate({ invoice_number: '1' }, { items: ok }).invoice_number).toBe('1');
  });

  it('pec_destinatario: an email address', () => {
    expect(validate({ invoice_number: '1', pec_destinatario: 'fatture@pec.example.it' }).pec_destinatario).toBe('fatture@pec.example.it');
    expect400(() => validate({ invoice_number: '1', pec_destinatario: 'not-an-email' }), 'metadata.pec_destinatario must be an email address of at most 256 characters');
  });
});

describe('it-sdi on live keys: what SdI refuses for certain is a 400 at creation', () => {
  const sede = { indirizzo: 'Via del Corso 1', cap: '00186', comune: 'Roma', provincia: 'RM' };
  const live = (over: Parameters<typeof draft>[0], l = location('it-sdi', sede)) =>
    sdi.validateTransaction(draft({ metadata: { invoice_number: '1' }, ...over }), { ...txCtx(l), environment: 'live' });
  // A buyer other than the seller (the fixture location's partita IVA is 01234567897: SdI 00471).
  const company = { customer_context: { tax_id: 'IT12345678903', legal_name: 'Cliente Srl' } };

  it('a complete seller Sede and a buyer with a partita IVA or a codice fiscale pass', () => {
    expect(live(company).invoice_number).toBe('1');
    expect(live({ customer_context: { codice_fiscale: 'RSSMRA80A01H501U', first_name: 'Mario', last_name: 'Rossi' } }).invoice_number).toBe('1');
    // A codice fiscale given as tax_id, a foreign VAT number with its prefix, an 11-digit codice fiscale of a company.
    expect(live({ customer_context: { tax_id: 'RSSMRA80A01H501U' } }).invoice_number).toBe('1');
    expect(live({ customer_context: { tax_id: 'DE123456789' } }).invoice_number).toBe('1');
    expect(live({ customer_context: { codice_fiscale: '12345678903' } }).invoice_number).toBe('1');
    // The location address stands in for indirizzo.
    expect(live(company, { ...location('it-sdi', { cap: '00186', comune: 'Roma' }), address: 'Via Roma 1' }).invoice_number).toBe('1');
  });

  it('without the Sede fields: 400 naming each', () => {
    expect400(() => live(company, location('it-sdi')),
      'country_config.indirizzo, country_config.cap and country_config.comune are required for live SDI invoices: the seller\'s address (Sede) in the FatturaPA');
    expect400(() => live(company, location('it-sdi', { indirizzo: 'Via del Corso 1', comune: 'Roma' })),
      'country_config.cap is required for live SDI invoices: the seller\'s address (Sede) in the FatturaPA');
  });

  it('a buyer with neither a VAT number nor a codice fiscale (SdI 00417): 400, a consumer too', () => {
    const message = 'customer_context.tax_id (partita IVA) or customer_context.codice_fiscale is required for live SDI invoices: SdI refuses a buyer without either (00417)';
    expect400(() => live({}), message);
    expect400(() => live({ customer_context: { first_name: 'Mario', last_name: 'Rossi' } }), message);
    // A codice fiscale that is not one is refused as such, on every key (SdI 00306).
    expect400(() => live({ customer_context: { codice_fiscale: 'not a code' } }),
      'customer_context.codice_fiscale is not a valid codice fiscale (16 characters with their check character, or 11 digits with their check digit): SdI refuses it (00306)');
    expect400(() => live({ customer_context: { tax_id: '   ' } }), message);
  });

  it('a seller codice fiscale with a wrong check digit or character (SdI 00302): 400 live; a 16-character one with its check character passes', () => {
    const withCf = (cf: string) => ({ ...location('it-sdi', sede), config: { ...location('it-sdi', sede).config, codice_fiscale: cf } });
    expect400(() => live(company, withCf('01234567898')), SELLER_CODICE_FISCALE_INVALID);
    expect400(() => live(company, withCf('RSSMRA80A01H501X')), SELLER_CODICE_FISCALE_INVALID);
    expect400(() => live(company, withCf('ABC123456789')), SELLER_CODICE_FISCALE_INVALID); // 12: the spec's pattern, no codice fiscale
    expect(live(company, withCf('RSSMRA80A01H501U')).invoice_number).toBe('1');
    // A test key for the stub keeps it.
    expect(sdi.validateTransaction(draft({ metadata: { invoice_number: '1' } }), { ...txCtx(withCf('01234567898')), sandboxMode: 'stub' }).invoice_number).toBe('1');
  });

  it('test keys keep the stand-ins: no Sede, no buyer id still validate', () => {
    expect(validate({ invoice_number: '1' }).invoice_number).toBe('1');
  });
});

describe('it-sdi: a fattura semplificata (TD07) is what art. 21-bis allows', () => {
  const td07 = { invoice_number: 'FS-1', tipo_documento: 'TD07' };
  /** One line of `total` cents VAT included at 22 %. */
  const ofTotal = (total: number) => {
    const tax = Math.round((total * 22) / 122);
    return { items: [line({ unit_price: total - tax, tax_rate: 22, tax_amount: tax, total_amount: total })] };
  };
  const LIMIT = 'metadata.tipo_documento TD07 (fattura semplificata) is allowed up to 400.00 EUR in total (DPR 633/1972 art. 21-bis, limit of DM 10 maggio 2019)';

  it('up to 400.00 EUR; a cent more is a 400 naming the rule and the total', () => {
    expect(validate(td07, ofTotal(40_000)).tipo_documento).toBe('TD07');
    expect400(() => validate(td07, ofTotal(40_001)), `${LIMIT}: total_amount is 400.01 EUR; issue an ordinary invoice (TD01)`);
    // The same sale as an ordinary invoice is fine.
    expect(validate({ invoice_number: 'FT-1' }, ofTotal(40_001)).tipo_documento).toBe('TD01');
  });

  it('a flat-rate seller (RF19) may issue it above 400 euro, as SdI check 00460 allows', () => {
    const forfettario = location('it-sdi', { regime_fiscale: 'RF19' });
    expect(validate(td07, ofTotal(90_000), forfettario).tipo_documento).toBe('TD07');
  });

  it('between private parties only: not to a public administration', () => {
    expect400(() => validate({ ...td07, codice_destinatario: 'UFXYZ1' }, {}, location('it-sdi', { formato_trasmissione: 'FPA12' })),
      'metadata.tipo_documento TD07 (fattura semplificata) cannot be sent to a public administration (FPA12): the simplified format is for private parties only');
  });

  it('no line the simplified format cannot carry: reverse charge (N6.x), intra-EU supplies (N3.2)', () => {
    const exempt = (natura: string) => ({ items: [line({ tax_rate: 0, tax_amount: 0, total_amount: 1000, natura })] });
    expect400(() => validate(td07, exempt('N6.3')), 'items[0].natura N6.3 cannot be in a fattura semplificata (TD07): reverse charge needs an ordinary invoice (TD01)');
    expect400(() => validate(td07, exempt('N3.2')), 'items[0].natura N3.2 cannot be in a fattura semplificata (TD07): DPR 633/1972 art. 21-bis c.2 excludes intra-EU supplies');
    expect(validate(td07, exempt('N4')).tipo_documento).toBe('TD07');
    expect(validate({ invoice_number: 'FT-1' }, exempt('N6.3')).tipo_documento).toBe('TD01');
  });
});

describe('it-sdi: TD07 on a refund or void is the simplified credit note (TD08)', () => {
  const original = { original_invoice_number: 'FS-1', original_invoice_date: '2026-01-10' };
  const ncs = { invoice_number: 'NCS-1', tipo_documento: 'TD07', ...original };
  const ofTotal = (total: number) => {
    const tax = Math.round((total * 22) / 122);
    return [line({ unit_price: total - tax, tax_rate: 22, tax_amount: tax, total_amount: total })];
  };

  it('a refund or void naming its invoice by number and date is stored as the TD08 it is issued as', () => {
    expect(validate(ncs, { type: 'refund' })).toMatchObject({ tipo_documento: 'TD08', ...original });
    expect(validate(ncs, { type: 'void' }).tipo_documento).toBe('TD08');
    // The request's values stay DECISIONS': TD08 itself is not one of them; a sale's TD07 stays TD07.
    expect400(() => validate({ ...ncs, tipo_documento: 'TD08' }, { type: 'refund' }), 'metadata.tipo_documento must be one of TD01, TD02, TD04, TD06, TD07, TD24');
    expect(validate({ invoice_number: 'FS-1', tipo_documento: 'TD07' }).tipo_documento).toBe('TD07');
    // Without the override a refund is the ordinary credit note, as before.
    expect(validate({ invoice_number: 'NC-1', ...original }, { type: 'refund' }).tipo_documento).toBe('TD04');
  });

  it('without the invoice it corrects (NumeroFR and DataFR are both required): 400', () => {
    const message = 'metadata.original_invoice_number and metadata.original_invoice_date are required for a simplified credit note (TD07 on a refund or void, issued as TD08): it names the invoice it corrects (DPR 633/1972 art. 21-bis c.1 lett. h)';
    expect400(() => validate({ invoice_number: 'NCS-1', tipo_documento: 'TD07' }, { type: 'refund' }), message);
    expect400(() => validate({ invoice_number: 'NCS-1', tipo_documento: 'TD07', original_invoice_number: 'FS-1' }, { type: 'refund' }), message);
  });

  it('no 400 EUR ceiling for the note (art. 21-bis c.1: the fattura rettificativa whatever its amount), but the format\'s other limits', () => {
    expect(validate(ncs, { type: 'refund', items: ofTotal(90_000) }).tipo_documento).toBe('TD08');
    expect400(() => validate({ ...ncs, codice_destinatario: 'UFXYZ1' }, { type: 'refund' }, location('it-sdi', { formato_trasmissione: 'FPA12' })),
      'metadata.tipo_documento TD07 on a refund or void (nota di credito semplificata, TD08) cannot be sent to a public administration (FPA12): the simplified format is for private parties only');
    const exempt = (natura: string) => [line({ tax_rate: 0, tax_amount: 0, total_amount: 1000, natura })];
    expect400(() => validate(ncs, { type: 'refund', items: exempt('N6.9') }),
      'items[0].natura N6.9 cannot be in a nota di credito semplificata (TD08): reverse charge needs an ordinary credit note (TD04)');
    expect400(() => validate(ncs, { type: 'refund', items: exempt('N3.2') }),
      'items[0].natura N3.2 cannot be in a nota di credito semplificata (TD08): DPR 633/1972 art. 21-bis c.2 excludes intra-EU supplies');
  });

  it('SdI\'s duplicate key (00404) is the TD08\'s: a TD07 and its note may share a number', () => {
    const tx = draft({ type: 'refund', metadata: ncs });
    const stored = { ...tx, metadata: sdi.validateTransaction(tx, txCtx(loc)) };
    expect(sdi.issuedDocument!({ tx: stored, location: loc })).toMatchObject({ document: 'TD08 2026 NCS-1' });
  });
});

describe('it-sdi correctedSale: a refund or void of a TD07, named by number and date, is a TD08 without the override', () => {
  const lookup = sdi.correctedSale!;
  const original = { original_invoice_number: 'FS-1', original_invoice_date: '2026-01-10' };
  /** The refund as the client sent it, and with the metadata validateTransaction stored. */
  const refund = (metadata: Record<string, unknown>, over: Parameters<typeof draft>[0] = {}, l = loc) => {
    const request = draft({ type: 'refund', ...over, metadata: { invoice_number: 'NC-1', ...metadata } });
    return { request, tx: { ...request, metadata: sdi.validateTransaction(request, txCtx(l)) }, location: l, ctx: txCtx(l) };
  };
  /** A sale as the core hands it: its stored draft. */
  const sale = (metadata: Record<string, unknown>, id = '00000000-0000-4000-8000-000000000001') => {
    const tx = draft({ metadata: { invoice_date: '2026-01-10', ...metadata } });
    return { transactionId: id, tx: { ...tx, metadata: sdi.validateTransaction(tx, txCtx(loc)) }, documentNumber: String(metadata.invoice_number), issuedAt: '2026-01-10T10:00:00.000Z' };
  };
  const td07 = sale({ invoice_number: 'FS-1', tipo_documento: 'TD07' });

  it('names every invoice type under the number, in the year of the date, in the scope of the issuer\'s numbers', () => {
    const r = refund(original);
    const named = lookup.named(r);
    expect(named).toEqual({
      scope: sdi.issuedDocument!({ tx: td07.tx, location: loc })!.scope,
      documents: ['TD01 2026 FS-1', 'TD02 2026 FS-1', 'TD06 2026 FS-1', 'TD07 2026 FS-1', 'TD24 2026 FS-1'],
    });
    // The TD07's own key is among them: the register holds it under that document.
    expect(named!.documents).toContain(sdi.issuedDocument!({ tx: td07.tx, location: loc })!.document);
    expect(lookup.named(refund(original, { type: 'void' }))).not.toBeNull();
  });

  it('names nothing when the request decided (tipo_documento, TD04 too), for a sale, or without the number', () => {
    expect(lookup.named(refund({ ...original, tipo_documento: 'TD04' }))).toBeNull();
    expect(lookup.named(refund({ ...original, tipo_documento: 'TD07' }))).toBeNull();
    expect(lookup.named(refund({}))).toBeNull();
    expect(lookup.named(refund({ original_invoice_number: 'FS-1', tipo_documento: 'TD04' }))).toBeNull();
    const s = draft({ metadata: { invoice_number: 'FT-1' } });
    expect(lookup.named({ request: s, tx: { ...s, metadata: sdi.validateTransaction(s, txCtx(loc)) }, location: loc })).toBeNull();
  });

  it('a number without a date names the register\'s alias of every year: the number as the TD07 registered it', () => {
    expect(lookup.named(refund({ original_invoice_number: 'FS-1' }))).toEqual({
      scope: sdi.issuedDocument!({ tx: td07.tx, location: loc })!.scope, documents: [], alias: 'FS-1',
    });
    expect(sdi.issuedDocument!({ tx: td07.tx, location: loc })!.alias).toBe('FS-1');
  });

  it('the issuer\'s scope is its partita IVA, the config\'s: a location without tax_id shares it, another partita IVA does not', () => {
    const scope = (l: typeof loc) => lookup.named(refund(original, {}, l))!.scope;
    const noTaxId = { ...loc, id: '00000000-0000-4000-8000-0000000000aa', tax_id: null };
    expect(scope(noTaxId)).toBe(scope(loc));
    expect(scope({ ...loc, id: '00000000-0000-4000-8000-0000000000ab', tax_id: '12345678903', config: { ...loc.config, partita_iva: '12345678903' } })).not.toBe(scope(loc));
    expect(scope({ ...loc, account_id: '00000000-0000-4000-8000-0000000000ac' })).not.toBe(scope(loc));
  });

  it('by number alone: the one TD07 holding it is the TD08, DataFR its date; two invoices holding it (two years, or a TD01) stay TD04', () => {
    const r = refund({ original_invoice_number: 'FS-1' });
    expect(lookup.resolve(r, [td07])).toMatchObject({ tipo_documento: 'TD08', original_invoice_number: 'FS-1', original_invoice_date: '2026-01-10' });
    const lastYear = sale({ invoice_number: 'FS-1', tipo_documento: 'TD07', invoice_date: '2025-12-30' }, '00000000-0000-4000-8000-000000000002');
    expect(lookup.resolve(r, [lastYear])).toMatchObject({ tipo_documento: 'TD08', original_invoice_date: '2025-12-30' });
    expect(lookup.resolve(r, [td07, lastYear])).toEqual(r.tx.metadata);
    expect(lookup.resolve(r, [td07, sale({ invoice_number: 'FS-1', invoice_date: '2025-06-01' }, '00000000-0000-4000-8000-000000000003')]).tipo_documento).toBe('TD04');
    // A refund dated before the TD07 it names cannot be its note (SdI 00418): TD04, no 400.
    const early = refund({ original_invoice_number: 'FS-1', invoice_date: '2026-01-09' });
    expect(lookup.resolve(early, [td07])).toEqual(early.tx.metadata);
  });

  it('the one TD07 found under the number and date: the refund is the TD08 TD07 on the refund asks for, naming it', () => {
    const r = refund({ ...original, buyer_denomination: 'Rossi' });
    const resolved = lookup.resolve(r, [td07]);
    expect(resolved).toEqual(sdi.validateTransaction({ ...r.request, metadata: { ...r.request.metadata, tipo_documento: 'TD07' } }, r.ctx));
    expect(resolved).toMatchObject({ tipo_documento: 'TD08', original_invoice_number: 'FS-1', original_invoice_date: '2026-01-10', buyer_denomination: 'Rossi' });
    // SdI's duplicate key follows: the refund's number is issued as a TD08.
    expect(sdi.issuedDocument!({ tx: { ...r.tx, metadata: resolved }, location: loc })!.document).toBe('TD08 2026 NC-1');
  });

  it('stays TD04 otherwise: nothing found, not a TD07, another date, two invoices under the number and date', () => {
    const r = refund(original);
    expect(lookup.resolve(r, [])).toEqual(r.tx.metadata);
    expect(lookup.resolve(r, [sale({ invoice_number: 'FS-1' })]).tipo_documento).toBe('TD04');
    expect(lookup.resolve(r, [sale({ invoice_number: 'FS-1', tipo_documento: 'TD07', invoice_date: '2026-01-09' })]).tipo_documento).toBe('TD04');
    expect(lookup.resolve(r, [td07, sale({ invoice_number: 'FS-1' }, '00000000-0000-4000-8000-000000000002')]).tipo_documento).toBe('TD04');
  });

  it('stays the ordinary TD04 where the simplified note cannot be (FPA12, an N6.x or N3.2 line), without a 400', () => {
    const pa = location('it-sdi', { formato_trasmissione: 'FPA12' });
    expect(lookup.resolve(refund({ ...original, codice_destinatario: 'UFXYZ1' }, {}, pa), [td07]).tipo_documento).toBe('TD04');
    const exempt = (natura: string) => [line({ tax_rate: 0, tax_amount: 0, total_amount: 1000, natura })];
    expect(lookup.resolve(refund(original, { items: exempt('N6.9') }), [td07]).tipo_documento).toBe('TD04');
    expect(lookup.resolve(refund(original, { items: exempt('N3.2') }), [td07]).tipo_documento).toBe('TD04');
    expect(lookup.resolve(refund(original, { items: exempt('N4') }), [td07]).tipo_documento).toBe('TD08');
  });
});

describe('it-sdi: what SdI discards (NS) is refused at creation, on every key (docs/decisions.md "Italy SDI: SdI controls")', () => {
  const message426 = (code: string) =>
    `metadata.pec_destinatario goes with codice_destinatario 0000000 only (here ${code}): SdI refuses a PEC address beside another recipient code (00426); give one or the other`;

  it('00424 / RateType: a rate between 0 and 1, or with more than 2 decimals, is refused; 0 and whole or 2-decimal rates pass', () => {
    const rated = (tax_rate: number, natura?: string) => validate({ invoice_number: '1' }, { items: [line({ tax_rate, ...(natura ? { natura } : {}) })] });
    expect400(() => rated(0.5), 'items[0].tax_rate must be 0 or at least 1 %: SdI reads AliquotaIVA as a percentage (22.00 for 22 %) and refuses a rate between 0 and 1 (00424)');
    // 0.001 % was written AliquotaIVA 0.00 without a Natura (00400, 00429).
    expect400(() => rated(0.001), 'items[0].tax_rate must be 0 or at least 1 %: SdI reads AliquotaIVA as a percentage (22.00 for 22 %) and refuses a rate between 0 and 1 (00424)');
    expect400(() => rated(22.005), 'items[0].tax_rate must have at most 2 decimals: FatturaPA writes AliquotaIVA as a percentage with two');
    for (const r of [1, 4, 5, 10, 22, 7.65, 12.3]) expect(rated(r).invoice_number).toBe('1');
    expect(rated(0, 'N4').invoice_number).toBe('1');
  });

  it('00426: a PEC address only with codice_destinatario 0000000 (the default)', () => {
    expect(validate({ invoice_number: '1', pec_destinatario: 'fatture@pec.example.it' }).codice_destinatario).toBe('0000000');
    expect(validate({ invoice_number: '1', codice_destinatario: '0000000', pec_destinatario: 'fatture@pec.example.it' }).pec_destinatario).toBe('fatture@pec.example.it');
    expect400(() => validate({ invoice_number: '1', codice_destinatario: 'ABC1234', pec_destinatario: 'fatture@pec.example.it' }), message426('ABC1234'));
    expect400(() => validate({ invoice_number: '1', codice_destinatario: 'XXXXXXX', pec_destinatario: 'fatture@pec.example.it' }), message426('XXXXXXX'));
    const pa = location('it-sdi', { formato_trasmissione: 'FPA12' });
    expect400(() => validate({ invoice_number: '1', codice_destinatario: 'UFXYZ1', pec_destinatario: 'fatture@pec.example.it' }, {}, pa), message426('UFXYZ1'));
  });

  it('codice_destinatario default follows the buyer: 0000000 in Italy, XXXXXXX abroad, 2R4GTO8 for San Marino', () => {
    const dest = (metadata: Record<string, unknown>) => validate({ invoice_number: '1', ...metadata }).codice_destinatario;
    expect(dest({})).toBe('0000000');
    expect(dest({ buyer_country: 'IT' })).toBe('0000000');
    expect(dest({ buyer_country: 'DE' })).toBe('XXXXXXX');
    expect(dest({ buyer_country: 'SM' })).toBe('2R4GTO8');
    // What the client names is kept; a PEC address keeps the code PEC goes with (00426).
    expect(dest({ buyer_country: 'DE', codice_destinatario: 'ABC1234' })).toBe('ABC1234');
    expect(dest({ buyer_country: 'DE', pec_destinatario: 'fatture@pec.example.it' })).toBe('0000000');
  });

  it('00305 / 00306: the buyer\'s Italian partita IVA and codice fiscale must be valid; foreign VAT numbers are not checked', () => {
    const buyer = (customer_context: Record<string, unknown>, metadata: Record<string, unknown> = {}) =>
      validate({ invoice_number: '1', ...metadata }, { customer_context });
    const piva = (field: string) => `customer_context.${field} is not a valid Italian partita IVA (11 digits with their check digit): SdI refuses it (00305); a foreign VAT number takes its country prefix (DE123456789) or metadata.buyer_country`;
    expect400(() => buyer({ tax_id: 'IT12345678901' }), piva('tax_id'));
    expect400(() => buyer({ tax_id: '1234567890' }), piva('tax_id'));
    expect400(() => buyer({ partita_iva: '12345678901' }), piva('partita_iva'));
    expect400(() => buyer({ nif: 'IT00000000000' }), piva('nif'));
    // A Spanish NIF without its prefix, on an Italian buyer_country (the default), is read as Italian.
    expect400(() => buyer({ tax_id: 'B12345674' }), piva('tax_id'));
    expect(buyer({ tax_id: 'B12345674' }, { buyer_country: 'ES' }).buyer_country).toBe('ES');
    expect(buyer({ tax_id: 'ESB12345674' }).invoice_number).toBe('1');
    expect(buyer({ tax_id: 'IT 123 456 789 03' }).invoice_number).toBe('1');
    expect400(() => buyer({ codice_fiscale: 'RSSMRA85T10A562T' }),
      'customer_context.codice_fiscale is not a valid codice fiscale (16 characters with their check character, or 11 digits with their check digit): SdI refuses it (00306)');
    expect400(() => buyer({ tax_id: 'RSSMRA85T10A562T' }),
      'customer_context.tax_id is not a valid codice fiscale (16 characters with their check character): SdI refuses it (00306)');
    expect(buyer({ codice_fiscale: 'rssmra85t10a562s' }).invoice_number).toBe('1');
    expect(buyer({ tax_id: 'RSSMRA85T10A562S' }).invoice_number).toBe('1');
  });

  it('00471: an invoice to the seller itself (its partita IVA or codice fiscale) is refused; a credit note is not concerned', () => {
    // The fixture location: partita IVA and codice fiscale 01234567897.
    const self = (customer_context: Record<string, unknown>, metadata: Record<string, unknown> = {}, type: 'sale' | 'refund' = 'sale') =>
      validate({ invoice_number: '1', ...metadata }, { customer_context, type });
    const refused = (what: string, tipo = 'TD01') =>
      `customer_context names this location's own ${what}: SdI refuses a ${tipo} whose buyer is the seller itself (00471); goods taken for own use or given away are a self-invoice (TD27), not issued here`;
    expect400(() => self({ tax_id: 'IT01234567897' }), refused('partita IVA'));
    expect400(() => self({ tax_id: '01234567897' }, { tipo_documento: 'TD24' }), refused('partita IVA', 'TD24'));
    expect400(() => self({ codice_fiscale: '01234567897' }), refused('codice fiscale'));
    // The same digits as another country's VAT number are another subject.
    expect(self({ tax_id: '01234567897' }, { buyer_country: 'SM' }).invoice_number).toBe('1');
    expect(self({ tax_id: 'IT01234567897' }, {}, 'refund').tipo_documento).toBe('TD04');
  });
});
