/**
 * Golden files: the VERI*FACTU records of goldenChain() on the fixed clock, compared
 * byte for byte with golden/*.xml (shared/golden.ts: UPDATE_GOLDEN=1 rewrites them and
 * their .pretty.xml copies), each one valid against the official
 * SuministroLR.xsd once wrapped in RegFactuSistemaFacturacion, and each huella
 * recomputed from the values the XML itself carries (parsed back, FORMATS.md §2.1-2.2).
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { goldenFiles } from '../shared/golden.ts';
import { location } from '../shared/test-fixtures.ts';
import { goldenChain, goldenOperationDateCase, goldenReissueCase, goldenReplacementCase, goldenSubsanacionCase, goldenTaxCases } from './golden-cases.ts';
import { huellaAlta, huellaAnulacion } from './huella.ts';
import { regFactuRequest, soapEnvelope } from './soap.ts';

const expectGolden = goldenFiles(new URL('./golden/', import.meta.url));

const chain = goldenChain();
/** IGIC and IPSI records: each the first of its own chain. */
const taxes = goldenTaxCases();
/** The F3 replacing two of the chain's tickets: the link after the chain. */
const replacement = goldenReplacementCase(chain);
/** A client number issued again after AEAT refused it (Subsanacion S, RechazoPrevio X). */
const reissue = goldenReissueCase(chain);
/** Subsanaciones of the chain's F1 (its customer's name and description corrected): S/N, and S/S after a refused one. */
const subsanaciones = [goldenSubsanacionCase(chain), goldenSubsanacionCase(chain, true)];
/** An F1 issued days after its operation (FechaOperacion). */
const operationDate = goldenOperationDateCase(chain);
/** Every record with a golden file: the chain, then the IGIC and IPSI ones, then the F3, then the re-issue, then the subsanaciones, then the FechaOperacion one. */
const all = [...chain, ...taxes, replacement, reissue, ...subsanaciones, operationDate];
const obligado = { nif: 'B12345674', nombreRazon: 'Ejemplo SL' };
const parser = new XMLParser({ removeNSPrefix: true, ignoreAttributes: true, parseTagValue: false });
const xsdTitle = (title: string) => (HAVE_SCHEMAS ? title : `${title}: ${SCHEMAS_MISSING_MESSAGE}`);

describe('VERI*FACTU golden records', () => {
  it.each(all.map((c) => [c.file, c] as const))('%s matches its golden file', (file, c) => {
    expectGolden(file, c.record.body);
  });

  it('the SOAP request of the first record matches its golden file', () => {
    expectGolden('soap-request.xml', soapEnvelope(regFactuRequest(obligado, [chain[0]!.record.body])));
  });

  it.skipIf(!HAVE_SCHEMAS).each(all.map((c) => [c.file, c] as const))(xsdTitle('%s, in RegFactuSistemaFacturacion, validates against SuministroLR.xsd'), (_file, c) => {
    const result = xsdValidate(regFactuRequest(obligado, [c.record.body]), 'es/verifactu/SuministroLR.xsd');
    expect(result.ok, result.output).toBe(true);
  });

  it.skipIf(!HAVE_SCHEMAS)(xsdTitle('the whole chain in one request validates against SuministroLR.xsd'), () => {
    const result = xsdValidate(regFactuRequest(obligado, chain.map((c) => c.record.body)), 'es/verifactu/SuministroLR.xsd');
    expect(result.ok, result.output).toBe(true);
  });

  it.each(all.map((c) => [c.file, c] as const))('%s: the huella recomputes from the XML\'s own values', (_file, c) => {
    const doc = parser.parse(c.record.body) as Record<string, Record<string, unknown>>;
    const alta = doc.RegistroAlta as Record<string, any> | undefined;
    const r = (alta ?? doc.RegistroAnulacion) as Record<string, any>;
    const enc = r.Encadenamiento as Record<string, any>;
    const previous = enc.RegistroAnterior?.Huella ?? '';
    const expected = alta
      ? huellaAlta({
          IDEmisorFactura: alta.IDFactura.IDEmisorFactura, NumSerieFactura: alta.IDFactura.NumSerieFactura,
          FechaExpedicionFactura: alta.IDFactura.FechaExpedicionFactura, TipoFactura: alta.TipoFactura, CuotaTotal: alta.CuotaTotal,
          ImporteTotal: alta.ImporteTotal, Huella: previous, FechaHoraHusoGenRegistro: alta.FechaHoraHusoGenRegistro,
        })
      : huellaAnulacion({
          IDEmisorFacturaAnulada: r.IDFactura.IDEmisorFacturaAnulada, NumSerieFacturaAnulada: r.IDFactura.NumSerieFacturaAnulada,
          FechaExpedicionFacturaAnulada: r.IDFactura.FechaExpedicionFacturaAnulada, Huella: previous, FechaHoraHusoGenRegistro: r.FechaHoraHusoGenRegistro,
        });
    expect(r.TipoHuella).toBe('01');
    expect(r.Huella).toBe(expected);
    expect(c.record.fingerprint).toBe(expected);
  });

  it('each record chains to the one before (RegistroAnterior = previous linkData + huella)', () => {
    chain.forEach((c, i) => {
      const doc = parser.parse(c.record.body) as Record<string, Record<string, any>>;
      const enc = (doc.RegistroAlta ?? doc.RegistroAnulacion)!.Encadenamiento;
      if (i === 0) return expect(enc).toEqual({ PrimerRegistro: 'S' });
      const prev = chain[i - 1]!.record;
      expect(enc.RegistroAnterior).toEqual({ ...prev.linkData, Huella: prev.fingerprint });
    });
  });

  it('amounts: totals are the sum of the breakdown (recargo de equivalencia included: AEAT 1216, 1210); corrective invoices by differences are negative', () => {
    for (const c of all.filter((x) => x.kind === 'record')) {
      const alta = (parser.parse(c.record.body) as Record<string, Record<string, any>>).RegistroAlta!;
      const detalles = [alta.Desglose.DetalleDesglose].flat() as Record<string, string>[];
      const cents = (s: string) => Math.round(Number(s) * 100);
      // An exempt detail (OperacionExenta) has a base and no quota; a surcharged one adds its CuotaRecargoEquivalencia.
      const cuota = detalles.reduce(
        (sum, d) => sum + (d.OperacionExenta === undefined ? cents(d.CuotaRepercutida!) : 0) + (d.CuotaRecargoEquivalencia === undefined ? 0 : cents(d.CuotaRecargoEquivalencia)),
        0,
      );
      const base = detalles.reduce((sum, d) => sum + cents(d.BaseImponibleOimporteNoSujeto!), 0);
      expect(cents(alta.CuotaTotal)).toBe(cuota);
      expect(cents(alta.ImporteTotal)).toBe(cuota + base);
      const corrective = /^R/.test(alta.TipoFactura);
      expect(alta.TipoRectificativa).toBe(corrective ? 'I' : undefined);
      expect(cents(alta.ImporteTotal) < 0).toBe(corrective);
      expect(Math.abs(cents(alta.ImporteTotal))).toBe(c.tx.total_amount);
    }
  });

  it('types: F2, F2, F1 with Destinatarios, R5 without, R1 with Destinatarios and FacturasRectificadas, F2, F1', () => {
    const altas = chain.filter((c) => c.kind === 'record').map((c) => (parser.parse(c.record.body) as Record<string, Record<string, any>>).RegistroAlta!);
    expect(altas.map((a) => a.TipoFactura)).toEqual(['F2', 'F2', 'F1', 'R5', 'R1', 'F2', 'F1']);
    expect(altas.map((a) => a.Destinatarios !== undefined)).toEqual([false, false, true, false, true, false, true]);
    expect(altas[4]!.FacturasRectificadas.IDFacturaRectificada).toEqual({ IDEmisorFactura: 'B12345674', NumSerieFactura: 'A-3', FechaExpedicionFactura: '15-01-2026' });
  });

  it('F3: a full invoice replacing two tickets names its customer and each ticket in FacturasSustituidas (their NumSerieFactura and date), F3 in the huella', () => {
    const c = replacement;
    const alta = (parser.parse(c.record.body) as Record<string, Record<string, any>>).RegistroAlta!;
    expect(alta.TipoFactura).toBe('F3');
    expect(alta.TipoRectificativa).toBeUndefined();
    expect(alta.FacturasRectificadas).toBeUndefined();
    expect(alta.FacturasSustituidas.IDFacturaSustituida).toEqual([
      { IDEmisorFactura: 'B12345674', NumSerieFactura: chain[1]!.record.documentNumber, FechaExpedicionFactura: '15-01-2026' },
      { IDEmisorFactura: 'B12345674', NumSerieFactura: chain.find((x) => x.file === 'alta-exempt.xml')!.record.documentNumber, FechaExpedicionFactura: '15-01-2026' },
    ]);
    expect(alta.Destinatarios.IDDestinatario).toEqual({ NombreRazon: 'Cliente Ejemplo SA', NIF: 'B64717838' });
    // Numbered in the sales series, after the F1 with recargo, and chained to it.
    expect(alta.IDFactura.NumSerieFactura).toBe('A-9');
    expect(alta.Encadenamiento.RegistroAnterior).toEqual({ ...chain.at(-1)!.record.linkData, Huella: chain.at(-1)!.record.fingerprint });
  });

  it('subsanación: the F1 again under its own IDFactura, amounts and type, Subsanacion S (RechazoPrevio S after a refused one), its customer and description corrected, chained after the last record', () => {
    const original = (parser.parse(chain.find((x) => x.file === 'alta-f1-customer.xml')!.record.body) as Record<string, Record<string, any>>).RegistroAlta!;
    const [plain, rechazo] = subsanaciones.map((c) => (parser.parse(c.record.body) as Record<string, Record<string, any>>).RegistroAlta!);
    for (const alta of [plain!, rechazo!]) {
      expect(alta.IDFactura).toEqual(original.IDFactura);
      for (const f of ['TipoFactura', 'CuotaTotal', 'ImporteTotal', 'Desglose']) expect(alta[f]).toEqual(original[f]);
      expect(alta.Subsanacion).toBe('S');
      expect(alta.Destinatarios.IDDestinatario).toEqual({ NombreRazon: 'Cliente Ejemplo Sociedad Anónima', NIF: 'B64717838' });
      expect(alta.DescripcionOperacion).toBe('Menú y pan');
      expect(alta.Encadenamiento.RegistroAnterior).toEqual({ ...chain.at(-1)!.record.linkData, Huella: chain.at(-1)!.record.fingerprint });
      expect(alta.Huella).not.toBe(original.Huella);
    }
    expect(plain!.RechazoPrevio).toBeUndefined();
    expect(rechazo!.RechazoPrevio).toBe('S');
    // Not a new invoice: no number of its own; the next record names the corrected invoice.
    expect(subsanaciones[0]!.record.documentNumber).toBeNull();
    expect(subsanaciones[0]!.record.linkData).toEqual({ IDEmisorFactura: 'B12345674', NumSerieFactura: original.IDFactura.NumSerieFactura, FechaExpedicionFactura: original.IDFactura.FechaExpedicionFactura });
  });

  it('subsanación after a rename of the location: NombreRazonEmisor is the corrected record\'s, the record byte for byte the same', () => {
    const loc = location('es-verifactu');
    const renamed = { ...loc, name: 'Tienda Renombrada', config: { ...loc.config, legal_name: 'Nombre Nuevo SL' } };
    const original = (parser.parse(chain.find((x) => x.file === 'alta-f1-customer.xml')!.record.body) as Record<string, Record<string, any>>).RegistroAlta!;
    const after = goldenSubsanacionCase(chain, false, renamed).record.body;
    // The same invoice (same IDFactura) registered again: its issuer as issued, not as renamed since.
    expect((parser.parse(after) as Record<string, Record<string, any>>).RegistroAlta!.NombreRazonEmisor).toBe(original.NombreRazonEmisor);
    expect(after).not.toContain('Nombre Nuevo SL');
    expect(after).toBe(subsanaciones[0]!.record.body);
    // A new invoice after the rename names the new one.
    expect(goldenOperationDateCase(chain, null, renamed).record.body).toContain('<sf:NombreRazonEmisor>Nombre Nuevo SL</sf:NombreRazonEmisor>');
  });

  it('FechaOperacion: written before DescripcionOperacion when the operation was on another day; not in the huella; the receipt states it', () => {
    const c = operationDate;
    expect(c.record.body).toContain('<sf:FechaOperacion>09-01-2026</sf:FechaOperacion><sf:DescripcionOperacion>Suministro de material</sf:DescripcionOperacion>');
    const alta = (parser.parse(c.record.body) as Record<string, Record<string, any>>).RegistroAlta!;
    expect(alta.IDFactura.FechaExpedicionFactura).toBe('15-01-2026');
    expect(c.record.renderHints[0]).toMatchObject({ key: 'operation_date', placement: 'header', value: '09-01-2026' });
    // The huella (FORMATS.md §2.1) does not cover it: the same invoice without it hashes the same.
    const without = goldenOperationDateCase(chain, null).record;
    expect(without.body).not.toContain('FechaOperacion');
    expect(without.renderHints.map((h) => h.key)).not.toContain('operation_date');
    expect(without.fingerprint).toBe(c.record.fingerprint);
    // The records of the chain state none: every one was issued on its operation's day.
    for (const x of chain) expect(x.record.body).not.toContain('FechaOperacion');
  });

  it('an exempt operation: its 0 % lines are one DetalleDesglose with OperacionExenta, no rate and no quota (AEAT 1196); the others stay S1', () => {
    const c = chain.find((x) => x.file === 'alta-exempt.xml')!;
    const detalles = [(parser.parse(c.record.body) as Record<string, Record<string, any>>).RegistroAlta!.Desglose.DetalleDesglose].flat();
    expect(detalles).toEqual([
      { Impuesto: '01', ClaveRegimen: '01', OperacionExenta: 'E1', BaseImponibleOimporteNoSujeto: '60.00' },
      { Impuesto: '01', ClaveRegimen: '01', CalificacionOperacion: 'S1', TipoImpositivo: '21.00', BaseImponibleOimporteNoSujeto: '10.00', CuotaRepercutida: '2.10' },
    ]);
    expect(c.record.renderHints[0]).toEqual({ key: 'exemption', placement: 'body', mandatory: true, kind: 'text', value: 'Operación exenta de IVA (art. 20 Ley 37/1992)' });
  });

  it('recargo de equivalencia: surcharged goods are a detail of their own (ClaveRegimen 18, TipoRecargoEquivalencia and its quota), the service without one stays 01', () => {
    const c = chain.find((x) => x.file === 'alta-recargo.xml')!;
    const alta = (parser.parse(c.record.body) as Record<string, Record<string, any>>).RegistroAlta!;
    expect([alta.Desglose.DetalleDesglose].flat()).toEqual([
      {
        Impuesto: '01', ClaveRegimen: '18', CalificacionOperacion: 'S1', TipoImpositivo: '21.00', BaseImponibleOimporteNoSujeto: '20.00',
        CuotaRepercutida: '4.20', TipoRecargoEquivalencia: '5.20', CuotaRecargoEquivalencia: '1.04',
      },
      {
        Impuesto: '01', ClaveRegimen: '18', CalificacionOperacion: 'S1', TipoImpositivo: '10.00', BaseImponibleOimporteNoSujeto: '15.00',
        CuotaRepercutida: '1.50', TipoRecargoEquivalencia: '1.40', CuotaRecargoEquivalencia: '0.21',
      },
      { Impuesto: '01', ClaveRegimen: '01', CalificacionOperacion: 'S1', TipoImpositivo: '21.00', BaseImponibleOimporteNoSujeto: '5.00', CuotaRepercutida: '1.05' },
    ]);
    // CuotaTotal = IVA 6.75 + recargo 1.25; ImporteTotal = bases 40.00 + 8.00 (and the QR's importe).
    expect(alta.CuotaTotal).toBe('8.00');
    expect(alta.ImporteTotal).toBe('48.00');
    expect(c.record.qrData).toContain('importe=48.00');
  });

  it('IGIC (Impuesto 03, ClaveRegimen 01) and IPSI (Impuesto 02, ClaveRegimen 01: AEAT rejects an IPSI detail without one from 2027)', () => {
    const detalles = (file: string) =>
      [(parser.parse(taxes.find((x) => x.file === file)!.record.body) as Record<string, Record<string, any>>).RegistroAlta!.Desglose.DetalleDesglose].flat();
    expect(detalles('alta-igic.xml')).toEqual([
      { Impuesto: '03', ClaveRegimen: '01', CalificacionOperacion: 'S1', TipoImpositivo: '7.00', BaseImponibleOimporteNoSujeto: '9.00', CuotaRepercutida: '0.63' },
      { Impuesto: '03', ClaveRegimen: '01', CalificacionOperacion: 'S1', TipoImpositivo: '0.00', BaseImponibleOimporteNoSujeto: '1.20', CuotaRepercutida: '0.00' },
    ]);
    expect(detalles('alta-ipsi.xml')).toEqual([
      { Impuesto: '02', ClaveRegimen: '01', CalificacionOperacion: 'S1', TipoImpositivo: '3.00', BaseImponibleOimporteNoSujeto: '40.00', CuotaRepercutida: '1.20' },
    ]);
  });

  it('IGIC and IPSI exemptions: OperacionExenta with Impuesto 03 (ClaveRegimen 02 for an export, AEAT 1199) or 02 (ClaveRegimen 01: the IPSI list has no 02); the legend names the tax, not a LIVA article', () => {
    const of = (file: string) => taxes.find((x) => x.file === file)!;
    const detalles = (file: string) => [(parser.parse(of(file).record.body) as Record<string, Record<string, any>>).RegistroAlta!.Desglose.DetalleDesglose].flat();
    expect(detalles('alta-igic-exempt.xml')).toEqual([
      { Impuesto: '03', ClaveRegimen: '02', OperacionExenta: 'E2', BaseImponibleOimporteNoSujeto: '30.00' },
      { Impuesto: '03', ClaveRegimen: '01', CalificacionOperacion: 'S1', TipoImpositivo: '7.00', BaseImponibleOimporteNoSujeto: '5.00', CuotaRepercutida: '0.35' },
    ]);
    expect(detalles('alta-ipsi-exempt.xml')).toEqual([
      { Impuesto: '02', ClaveRegimen: '01', OperacionExenta: 'E1', BaseImponibleOimporteNoSujeto: '50.00' },
      { Impuesto: '02', ClaveRegimen: '01', CalificacionOperacion: 'S1', TipoImpositivo: '3.00', BaseImponibleOimporteNoSujeto: '40.00', CuotaRepercutida: '1.20' },
    ]);
    expect(of('alta-igic-exempt.xml').record.renderHints[0]).toMatchObject({ key: 'exemption', value: 'Operación exenta de IGIC' });
    expect(of('alta-ipsi-exempt.xml').record.renderHints[0]).toMatchObject({ key: 'exemption', value: 'Operación exenta de IPSI' });
  });
});
