/**
 * Golden file: the DatiCorrispettivi of goldenDay() on the fixed clock and key, compared
 * byte for byte with golden/*.xml (shared/golden.ts: UPDATE_GOLDEN=1 rewrites them), valid
 * against CorrispettiviTypes_v1.0.xsd (xmllint, offline through the schemas' catalog),
 * its enveloped signature verified by xmlsec1, its totals read back independently.
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xmlsecVerify, xsdValidate } from '../../../../test/support/xml-tools.ts';
import { goldenFiles } from '../../shared/golden.ts';
import { fixedSigningKey } from '../../shared/test-fixtures.ts';
import { buildCorrispettivi } from './build.ts';
import { GOLDEN_DAY, GOLDEN_MATRICOLA, GOLDEN_NOW, goldenDay } from './golden-cases.ts';
import { aggregateDay } from './totals.ts';

export const CORRISPETTIVI_XSD = 'it/corrispettivi/CorrispettiviTypes_v1.0.xsd';
const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: false, parseTagValue: false });
const xsdTitle = (title: string) => (HAVE_SCHEMAS ? title : `${title}: ${SCHEMAS_MISSING_MESSAGE}`);

const key = fixedSigningKey();
const build = (environment: 'test' | 'live') =>
  buildCorrispettivi({ totals: aggregateDay(GOLDEN_DAY, goldenDay()), matricola: GOLDEN_MATRICOLA, progressivo: 7, environment, key, now: GOLDEN_NOW });
const cases = [['day-live.xml', build('live').xml], ['day-test.xml', build('test').xml]] as const;

describe('DatiCorrispettivi golden documents', () => {
  it.each(cases)('%s matches its golden file', (file, xml) => {
    expectGolden(file, xml);
  });

  it.skipIf(!HAVE_SCHEMAS).each(cases)(xsdTitle('%s validates against CorrispettiviTypes_v1.0.xsd'), (_file, xml) => {
    const r = xsdValidate(xml, CORRISPETTIVI_XSD);
    expect(r.ok, r.output).toBe(true);
  });

  it.each(cases)('%s: xmlsec1 verifies the enveloped signature and its three references', (_file, xml) => {
    const sig = xmlsecVerify(xml, { trustedCertPem: key.certificatePem });
    expect(sig.output).toContain('SignedInfo References (ok/all): 3/3');
    expect(sig.ok, sig.output).toBe(true);
  });

  it.skipIf(!HAVE_SCHEMAS)(xsdTitle('the XSD check can fail: an unknown format or a Riepilogo without Ammontare is refused'), () => {
    const xml = build('live').xml;
    expect(xsdValidate(xml.replace('<Formato>COR10</Formato>', '<Formato>COR11</Formato>'), CORRISPETTIVI_XSD).ok).toBe(false);
    expect(xsdValidate(xml.replace('<Ammontare>12.00</Ammontare>', ''), CORRISPETTIVI_XSD).ok).toBe(false);
  });

  it('a tampered total breaks the signature', () => {
    const xml = build('live').xml.replace('<Ammontare>25.00</Ammontare>', '<Ammontare>26.00</Ammontare>');
    expect(xml).toContain('<Ammontare>26.00</Ammontare>');
    expect(xmlsecVerify(xml, { trustedCertPem: key.certificatePem }).ok).toBe(false);
  });

  it('the totals: two VAT rates, N2 (from N2.1) and N4, the return and the cancellation in their fields, the payment split', () => {
    const doc = (parser.parse(build('test').xml) as Record<string, any>).DatiCorrispettivi;
    expect(doc['@_versione']).toBe('COR10');
    expect(doc['@_simulazione']).toBe('true');
    expect((parser.parse(build('live').xml) as Record<string, any>).DatiCorrispettivi['@_simulazione']).toBeUndefined();
    expect(doc.Trasmissione).toEqual({ Progressivo: '7', Formato: 'COR10', Dispositivo: { Tipo: 'MC', IdDispositivo: 'ABCD-123456' } });
    expect(doc.DataOraRilevazione).toBe('2026-01-15T23:59:59+01:00');
    expect(doc.DatiRT.Riepilogo).toEqual([
      { IVA: { AliquotaIVA: '22.00', Imposta: '5.50' }, Ammontare: '25.00', TotaleAmmontareResi: '18.30' },
      { IVA: { AliquotaIVA: '10.00', Imposta: '2.40' }, Ammontare: '24.00', TotaleAmmontareAnnulli: '8.80' },
      { Natura: 'N2', Ammontare: '5.00' },
      { Natura: 'N4', Ammontare: '12.00' },
    ]);
    expect(doc.DatiRT.Totali).toEqual({
      NumeroDocCommerciali: '5', PagatoContanti: '44.70', PagatoElettronico: '24.20', Ticket: { PagatoTicket: '5.00', NumeroTicket: '2' },
    });
  });

  it('a rebuild with the same clock and key gives the same bytes', () => {
    expect(build('live').xml).toBe(cases[0][1]);
  });
});
