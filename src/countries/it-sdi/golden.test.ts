/**
 * Golden files: the FatturaPA documents of goldenCases() on the fixed clock, compared
 * byte for byte with golden/*.xml (shared/golden.ts: UPDATE_GOLDEN=1 rewrites them and
 * their .pretty.xml copies), each valid against the official FatturaPA 1.2.2 XSD
 * (xmllint, offline through the schemas' catalog), with amounts that add up. The PA
 * invoice (FPA12) is signed XAdES-BES with the fixed key: its signature is verified by
 * xmlsec1 and the signed file validated against the XSD.
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../../../test/support/xml-tools.ts';
import { goldenFiles } from '../shared/golden.ts';
import { derivedRefundCase, goldenCases, goldenLocation, semplificataCases, semplificataNoteCases } from './golden-cases.ts';
import { NOW, buildInput, fixedSigningKey, line, validatedBuild } from '../shared/test-fixtures.ts';
import { sdi } from './index.ts';

const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));
const XSD = 'it/fatturapa/Schema_del_file_xml_FatturaPA_v1.2.2.xsd';
/** The simplified invoice's schema (FatturaElettronicaSemplificata, FSM10). */
const XSD_FSM10 = 'it/fatturapa/Schema_VFSM10.xsd';
const cases = goldenCases();
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: false, parseTagValue: false });
const xsdTitle = (title: string) => (HAVE_SCHEMAS ? title : `${title}: ${SCHEMAS_MISSING_MESSAGE}`);
const cents = (s: string) => {
  const [u, d = ''] = s.replace('-', '').split('.');
  return (s.startsWith('-') ? -1 : 1) * (Number(u) * 100 + Number(d.padEnd(2, '0').slice(0, 2)));
};
const doc = (body: string) => (parser.parse(body) as Record<string, any>).FatturaElettronica;

describe('FatturaPA golden documents', () => {
  it.each(cases.map((c) => [c.file, c] as const))('%s matches its golden file', (file, c) => {
    expectGolden(file, c.record.body);
  });

  it.skipIf(!HAVE_SCHEMAS).each(cases.map((c) => [c.file, c] as const))(xsdTitle('%s validates against the FatturaPA 1.2.2 XSD'), (_file, c) => {
    const result = xsdValidate(c.record.body, XSD);
    expect(result.ok, result.output).toBe(true);
  });

  describe('PA invoice (FPA12), signed XAdES-BES', () => {
    const key = fixedSigningKey();
    const pa = goldenLocation();
    pa.config = { ...pa.config, formato_trasmissione: 'FPA12' };
    const paTx = { ...cases[0]!.tx, metadata: { invoice_number: 'FT-2026/9', codice_destinatario: 'UFXYZ1' } };
    const { record } = validatedBuild(sdi, pa, paTx, {
      signingKey: key,
      transactionId: '00000000-0000-4000-8000-000000000009',
      chain: { seq: 9, number: 9, previous: null },
    });

    it('matches its golden file', () => {
      expectGolden('pa-invoice.xml', record.body);
    });

    it('xmlsec1 verifies the enveloped signature and its three references', () => {
      const sig = xmlsecVerify(record.body, { trustedCertPem: key.certificatePem });
      expect(sig.output).toContain('SignedInfo References (ok/all): 3/3');
      expect(sig.ok).toBe(true);
    });

    it.skipIf(!HAVE_SCHEMAS)(xsdTitle('the signed file validates against the FatturaPA 1.2.2 XSD'), () => {
      const result = xsdValidate(record.body, XSD);
      expect(result.ok, result.output).toBe(true);
    });

    it('BES: RSA-SHA256, SHA-256 digests, enveloped, ds:Signature the last child of the root, no signature policy', () => {
      const x = record.body;
      expect(x.startsWith(`<p:FatturaElettronica xmlns:ds="http://www.w3.org/2000/09/xmldsig#" xmlns:p="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2" xmlns:xades="http://uri.etsi.org/01903/v1.3.2#" versione="FPA12">`)).toBe(true);
      expect(x).toMatch(/<\/FatturaElettronicaBody><ds:Signature Id="[^"]+">.*<\/ds:Signature><\/p:FatturaElettronica>$/);
      expect(x).toContain('<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256">');
      expect(x).toContain('<ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"></ds:Transform>');
      expect(x.match(/<ds:DigestMethod Algorithm="([^"]+)">/g)!.every((m) => m.includes('xmlenc#sha256'))).toBe(true);
      expect(x).toContain('<xades:SigningTime>2026-01-15T');
      expect(x).toContain('<xades:SigningCertificateV2>');
      expect(x).not.toContain('SignaturePolicyIdentifier');
      const f = doc(x);
      expect(f['@_versione']).toBe('FPA12');
      expect(f.FatturaElettronicaHeader.DatiTrasmissione).toMatchObject({ FormatoTrasmissione: 'FPA12', CodiceDestinatario: 'UFXYZ1' });
      expect(record.fiscalId).toBe('IT01234567897_00009.xml');
    });

    it('a rebuild gives the same bytes; without a signing key an FPA12 file is not built', () => {
      expect(validatedBuild(sdi, pa, paTx, { signingKey: key, transactionId: '00000000-0000-4000-8000-000000000009', chain: { seq: 9, number: 9, previous: null } }).record.body).toBe(record.body);
      expect(() => sdi.build(buildInput(pa, paTx, { signingKey: undefined }))).toThrow(/no signing key/);
    });

    it('FPR12 stays unsigned even when a key is handed (the root declares no ds/xades)', () => {
      expect(cases[0]!.record.body).not.toContain('ds:Signature');
      expect(cases[0]!.record.body.startsWith(`<p:FatturaElettronica xmlns:p="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2" versione="FPR12">`)).toBe(true);
    });
  });

  it('records: XML, not placeholders, named by their SdI file name; the version attribute is FPR12', () => {
    expect(cases.map((c) => c.record.fiscalId)).toEqual([
      'IT01234567897_00001.xml',
      'IT01234567897_00002.xml',
      'IT01234567897_00003.xml',
      'IT01234567897_N0001.xml',
      'IT01234567897_00005.xml',
    ]);
    for (const c of cases) {
      expect(c.record).toMatchObject({ contentType: 'application/xml', placeholder: false });
      const f = doc(c.record.body);
      expect(f['@_versione']).toBe('FPR12');
      const t = f.FatturaElettronicaHeader.DatiTrasmissione;
      expect(`IT${t.IdTrasmittente.IdCodice}_${t.ProgressivoInvio}.xml`).toBe(c.record.fiscalId);
    }
  });

  it('amounts: the summary adds up to the lines, the total to the summary, the payment to the total', () => {
    for (const c of cases) {
      const body = doc(c.record.body).FatturaElettronicaBody;
      const lines = [body.DatiBeniServizi.DettaglioLinee].flat() as Record<string, string>[];
      const rows = [body.DatiBeniServizi.DatiRiepilogo].flat() as Record<string, string>[];
      const base = rows.reduce((s, r) => s + cents(r.ImponibileImporto!), 0);
      const tax = rows.reduce((s, r) => s + cents(r.Imposta!), 0);
      expect(lines.reduce((s, l) => s + cents(l.PrezzoTotale!), 0)).toBe(base);
      expect(cents(body.DatiGenerali.DatiGeneraliDocumento.ImportoTotaleDocumento)).toBe(base + tax);
      expect(base + tax).toBe(c.tx.total_amount);
      expect(cents(body.DatiPagamento.DettaglioPagamento.ImportoPagamento)).toBe(base + tax);
    }
  });

  it('types and parties: TD01 company, TD01 consumer (Nome/Cognome, CodiceFiscale), TD04 naming the invoice it corrects', () => {
    const [b2b, consumer, multi, note] = cases.map((c) => doc(c.record.body));
    const generali = (f: any) => f.FatturaElettronicaBody.DatiGenerali;
    expect([b2b, consumer, multi, note].map((f) => generali(f).DatiGeneraliDocumento.TipoDocumento)).toEqual(['TD01', 'TD01', 'TD01', 'TD04']);
    expect(b2b.FatturaElettronicaHeader.CessionarioCommittente.DatiAnagrafici.IdFiscaleIVA).toEqual({ IdPaese: 'IT', IdCodice: '12345678903' });
    expect(consumer.FatturaElettronicaHeader.CessionarioCommittente.DatiAnagrafici).toEqual({
      CodiceFiscale: 'RSSMRA85T10A562S',
      Anagrafica: { Nome: 'Mario', Cognome: 'Rossi' },
    });
    // A foreign buyer: XXXXXXX and no PEC address (PECDestinatario goes with 0000000 only, SdI 00426).
    expect(multi.FatturaElettronicaHeader.DatiTrasmissione).toMatchObject({ CodiceDestinatario: 'XXXXXXX' });
    expect(multi.FatturaElettronicaHeader.DatiTrasmissione.PECDestinatario).toBeUndefined();
    const natures = [multi.FatturaElettronicaBody.DatiBeniServizi.DatiRiepilogo].flat().map((r: any) => `${r.AliquotaIVA}/${r.Natura ?? ''}`);
    expect(natures).toEqual(['22.00/', '10.00/', '0.00/N4', '0.00/N2.1']);
    expect(generali(note).DatiGeneraliDocumento.Numero).toBe('NC-FT-2026/1');
    expect(generali(note).DatiFattureCollegate).toEqual({ IdDocumento: 'FT-2026/1', Data: '2026-01-15' });
  });

  it('stamp duty (bollo.ts): DatiBollo where the lines outside VAT exceed 77.47 EUR, never in the total', () => {
    const generali = (file: string) => doc(cases.find((c) => c.file === file)!.record.body).FatturaElettronicaBody.DatiGenerali.DatiGeneraliDocumento;
    // 150.00 N4 + 2.00 N1 (the recharged duty, a line of its own): the total is the lines', 152.00.
    expect(generali('bollo-exempt-invoice.xml')).toMatchObject({ DatiBollo: { BolloVirtuale: 'SI', ImportoBollo: '2.00' }, ImportoTotaleDocumento: '152.00' });
    // N4 50.00 + N2.1 20.00 + N4 20.00 = 90.00 outside VAT, beside taxed lines.
    expect(generali('multi-rate-exempt.xml').DatiBollo).toEqual({ BolloVirtuale: 'SI', ImportoBollo: '2.00' });
    for (const file of ['b2b-invoice.xml', 'consumer-invoice.xml', 'credit-note-td04.xml']) expect(generali(file).DatiBollo).toBeUndefined();
  });

  describe('fattura semplificata (TD07): FatturaElettronicaSemplificata FSM10', () => {
    const simplified = semplificataCases();
    const sdoc = (body: string) => (parser.parse(body) as Record<string, any>).FatturaElettronicaSemplificata;

    it.each(simplified.map((c) => [c.file, c] as const))('%s matches its golden file', (file, c) => {
      expectGolden(file, c.record.body);
    });

    it.skipIf(!HAVE_SCHEMAS).each(simplified.map((c) => [c.file, c] as const))(xsdTitle('%s validates against Schema_VFSM10.xsd, not the 1.2.2 one'), (_file, c) => {
      const result = xsdValidate(c.record.body, XSD_FSM10);
      expect(result.ok, result.output).toBe(true);
      // TD07 is not a TipoDocumento of FatturaPA 1.2.2: the ordinary schema cannot hold it.
      expect(xsdValidate(c.record.body, XSD).ok).toBe(false);
    });

    it('root, namespace, version and transmission format are FSM10; the file is named as every SdI file', () => {
      for (const c of simplified) {
        expect(c.record.body.startsWith('<p:FatturaElettronicaSemplificata xmlns:p="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.0" versione="FSM10">')).toBe(true);
        const f = sdoc(c.record.body);
        expect(f.FatturaElettronicaHeader.DatiTrasmissione.FormatoTrasmissione).toBe('FSM10');
        expect(f.FatturaElettronicaBody.DatiGenerali.DatiGeneraliDocumento.TipoDocumento).toBe('TD07');
        const t = f.FatturaElettronicaHeader.DatiTrasmissione;
        expect(`IT${t.IdTrasmittente.IdCodice}_${t.ProgressivoInvio}.xml`).toBe(c.record.fiscalId);
        expect(c.record.body).not.toContain('ds:Signature');
      }
    });

    it('each good or service VAT included, with its VAT and rate (Natura at 0 %); the amounts add up to the total', () => {
      const [consumer] = simplified;
      const body = sdoc(consumer!.record.body).FatturaElettronicaBody;
      expect(body.DatiGenerali.DatiGeneraliDocumento).toEqual({ TipoDocumento: 'TD07', Divisa: 'EUR', Data: '2026-01-14', Numero: 'FS-2026/1' });
      expect(body.DatiBeniServizi).toEqual([
        { Descrizione: 'Pranzo di lavoro', Importo: '36.60', DatiIVA: { Imposta: '6.60', Aliquota: '22.00' } },
        { Descrizione: 'Vino della casa', Importo: '11.00', DatiIVA: { Imposta: '1.00', Aliquota: '10.00' } },
        { Descrizione: 'Visita guidata', Importo: '25.00', DatiIVA: { Imposta: '0.00', Aliquota: '0.00' }, Natura: 'N4' },
      ]);
      for (const c of simplified) {
        const entries = [sdoc(c.record.body).FatturaElettronicaBody.DatiBeniServizi].flat() as { Importo: string }[];
        expect(entries.reduce((s, e) => s + cents(e.Importo), 0)).toBe(c.tx.total_amount);
      }
    });

    it('the seller without DatiAnagrafici; the buyer by its fiscal ids, named only when the client named it', () => {
      const [consumer, company] = simplified.map((c) => sdoc(c.record.body).FatturaElettronicaHeader);
      expect(consumer.CedentePrestatore).toMatchObject({ IdFiscaleIVA: { IdPaese: 'IT', IdCodice: '01234567897' }, Denominazione: 'Trattoria Roma Srl', RegimeFiscale: 'RF01' });
      expect(consumer.CessionarioCommittente).toEqual({
        IdentificativiFiscali: { CodiceFiscale: 'RSSMRA85T10A562S' },
        AltriDatiIdentificativi: { Nome: 'Mario', Cognome: 'Rossi', Sede: { Indirizzo: 'Via Garibaldi 5', CAP: '00153', Comune: 'Roma', Provincia: 'RM', Nazione: 'IT' } },
      });
      expect(company.CessionarioCommittente).toEqual({ IdentificativiFiscali: { IdFiscaleIVA: { IdPaese: 'IT', IdCodice: '12345678903' } } });
    });
  });

  describe('the simplified notes (TD08, TD09): FSM10, naming what they correct in DatiFatturaRettificata', () => {
    const notes = semplificataNoteCases();
    const sdoc = (body: string) => (parser.parse(body) as Record<string, any>).FatturaElettronicaSemplificata;
    const generali = (c: (typeof notes)[number]) => sdoc(c.record.body).FatturaElettronicaBody.DatiGenerali;

    it.each(notes.map((c) => [c.file, c] as const))('%s matches its golden file', (file, c) => {
      expectGolden(file, c.record.body);
    });

    it.skipIf(!HAVE_SCHEMAS).each(notes.map((c) => [c.file, c] as const))(xsdTitle('%s validates against Schema_VFSM10.xsd, not the 1.2.2 one'), (_file, c) => {
      const result = xsdValidate(c.record.body, XSD_FSM10);
      expect(result.ok, result.output).toBe(true);
      expect(xsdValidate(c.record.body, XSD).ok).toBe(false);
    });

    it('cancelling a TD07 issues a TD08 (NC- number) naming it by number and date, the whole of it reversed', () => {
      const [note] = notes;
      expect(note!.record.body.startsWith('<p:FatturaElettronicaSemplificata xmlns:p="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.0" versione="FSM10">')).toBe(true);
      expect(generali(note!)).toEqual({
        DatiGeneraliDocumento: { TipoDocumento: 'TD08', Divisa: 'EUR', Data: '2026-01-15', Numero: 'NC-FS-2026/1' },
        DatiFatturaRettificata: { NumeroFR: 'FS-2026/1', DataFR: '2026-01-14', ElementiRettificati: 'Storno totale della fattura semplificata' },
      });
      // The goods of the invoice, as it carried them; the same buyer; a file of the annulment chain.
      const original = semplificataCases()[0]!;
      expect(sdoc(note!.record.body).FatturaElettronicaBody.DatiBeniServizi).toEqual(sdoc(original.record.body).FatturaElettronicaBody.DatiBeniServizi);
      expect(sdoc(note!.record.body).FatturaElettronicaHeader.CessionarioCommittente).toEqual(sdoc(original.record.body).FatturaElettronicaHeader.CessionarioCommittente);
      expect(note!.record).toMatchObject({ fiscalId: 'IT01234567897_N0001.xml', documentNumber: 'NC-FS-2026/1' });
    });

    it('a refund asked in the simplified form (TD07 on a refund) is a TD08 naming the invoice and the goods it credits; its cancellation a TD09 (ND- number)', () => {
      const [, refund, debit] = notes;
      expect(refund!.tx.metadata.tipo_documento).toBe('TD08');
      expect(generali(refund!)).toEqual({
        DatiGeneraliDocumento: { TipoDocumento: 'TD08', Divisa: 'EUR', Data: '2026-01-15', Numero: 'NCS-2026/1' },
        DatiFatturaRettificata: { NumeroFR: 'FS-2026/2', DataFR: '2026-01-15', ElementiRettificati: 'Variazione in diminuzione (art. 26 DPR 633/1972): Cancelleria (reso)' },
      });
      expect(sdoc(refund!.record.body).FatturaElettronicaBody.DatiBeniServizi).toEqual({ Descrizione: 'Cancelleria (reso)', Importo: '24.40', DatiIVA: { Imposta: '4.40', Aliquota: '22.00' } });
      expect(generali(debit!)).toEqual({
        DatiGeneraliDocumento: { TipoDocumento: 'TD09', Divisa: 'EUR', Data: '2026-01-15', Numero: 'ND-NCS-2026/1' },
        DatiFatturaRettificata: { NumeroFR: 'NCS-2026/1', DataFR: '2026-01-15', ElementiRettificati: 'Storno totale della nota di credito semplificata' },
      });
    });

    describe('a refund naming a TD07 by number and date, without tipo_documento: the TD08 derived from the sale found', () => {
      const derived = derivedRefundCase();

      it('matches its golden file', () => {
        expectGolden(derived.file, derived.record.body);
      });

      it.skipIf(!HAVE_SCHEMAS)(xsdTitle('validates against Schema_VFSM10.xsd, not the 1.2.2 one'), () => {
        const result = xsdValidate(derived.record.body, XSD_FSM10);
        expect(result.ok, result.output).toBe(true);
        expect(xsdValidate(derived.record.body, XSD).ok).toBe(false);
      });

      it('a TD08 naming the TD07 by its Numero and Data, stored as TD08; the same bytes as the refund asked as TD07', () => {
        expect(derived.tx.metadata).toMatchObject({ tipo_documento: 'TD08', original_invoice_number: 'FS-2026/1', original_invoice_date: '2026-01-14' });
        expect(generali(derived)).toEqual({
          DatiGeneraliDocumento: { TipoDocumento: 'TD08', Divisa: 'EUR', Data: '2026-01-15', Numero: 'NC-2026/5' },
          DatiFatturaRettificata: { NumeroFR: 'FS-2026/1', DataFR: '2026-01-14', ElementiRettificati: 'Variazione in diminuzione (art. 26 DPR 633/1972): Vino della casa (reso)' },
        });
        expect(derivedRefundCase(goldenLocation(), { metadata: { tipo_documento: 'TD07' } }).record.body).toBe(derived.record.body);
      });

      it.skipIf(!HAVE_SCHEMAS)(xsdTitle('no TD07 found, or tipo_documento TD04 named: the ordinary TD04 naming the invoice, valid against the 1.2.2 XSD'), () => {
        for (const c of [derivedRefundCase(goldenLocation(), { found: 'none' }), derivedRefundCase(goldenLocation(), { metadata: { tipo_documento: 'TD04' } })]) {
          const result = xsdValidate(c.record.body, XSD);
          expect(result.ok, result.output).toBe(true);
          expect(doc(c.record.body).FatturaElettronicaBody.DatiGenerali).toMatchObject({
            DatiGeneraliDocumento: { TipoDocumento: 'TD04', Numero: 'NC-2026/5' },
            DatiFattureCollegate: { IdDocumento: 'FS-2026/1', Data: '2026-01-14' },
          });
        }
      });
    });

    it.skipIf(!HAVE_SCHEMAS)(xsdTitle('a TD07 whose lines the simplified format cannot carry (none the rules let through) is cancelled by the ordinary TD04, valid against the 1.2.2 XSD'), () => {
      const loc = goldenLocation();
      const original = semplificataCases()[1]!;
      // As if stored before the rules: a reverse-charge line (N6.3 is not in FSM10's NaturaType).
      const tx = { ...original.tx, items: [...original.tx.items, line({ description: 'Subappalto', tax_rate: 0, tax_amount: 0, total_amount: 1000, natura: 'N6.3' })] };
      const nc = sdi.build({
        ...buildInput(loc, tx, { signingKey: fixedSigningKey() }),
        kind: 'cancellation',
        original: { transactionId: '00000000-0000-4000-8000-000000000012', fiscalId: original.record.fiscalId, tx, issuedAt: NOW.toISOString(), documentNumber: original.record.documentNumber },
        chain: { seq: 1, previous: null },
      });
      const result = xsdValidate(nc.body, XSD);
      expect(result.ok, result.output).toBe(true);
      expect(doc(nc.body).FatturaElettronicaBody.DatiGenerali).toMatchObject({
        DatiGeneraliDocumento: { TipoDocumento: 'TD04', Numero: 'NC-FS-2026/2' },
        DatiFattureCollegate: { IdDocumento: 'FS-2026/2' },
      });
    });
  });
});
