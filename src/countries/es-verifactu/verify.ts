/**
 * verify-chain for VERI*FACTU (countries/types.ts `verifyRecord`): the huella recomputed
 * from the record's own fields (huella.ts, FORMATS.md §2.1-2.2) must be the one the record
 * writes and the one stored; its `Encadenamiento` must name the previous record's huella
 * (or say `PrimerRegistro` for the first). VERI*FACTU records carry no signature of their
 * own (the huella chain is the integrity; AEAT authenticates the sender by TLS).
 */
import type { RecordFault, VerifyRecordInput } from '../types.ts';
import { textAt, xmlRoot } from '../shared/record-verify.ts';
import { huellaAlta, huellaAnulacion } from './huella.ts';

export function verifyVerifactuRecord({ record, previous }: VerifyRecordInput): RecordFault | null {
  const parsed = xmlRoot(record.body);
  if ('fault' in parsed) return parsed.fault;
  const r = parsed.root;
  const t = (...path: string[]) => textAt(r, ...path) ?? '';
  const linked = textAt(r, 'Encadenamiento', 'RegistroAnterior', 'Huella');
  let computed: string;
  if (r.localName === 'RegistroAlta') {
    computed = huellaAlta({
      IDEmisorFactura: t('IDFactura', 'IDEmisorFactura'),
      NumSerieFactura: t('IDFactura', 'NumSerieFactura'),
      FechaExpedicionFactura: t('IDFactura', 'FechaExpedicionFactura'),
      TipoFactura: t('TipoFactura'),
      CuotaTotal: t('CuotaTotal'),
      ImporteTotal: t('ImporteTotal'),
      Huella: linked ?? '',
      FechaHoraHusoGenRegistro: t('FechaHoraHusoGenRegistro'),
    });
  } else if (r.localName === 'RegistroAnulacion') {
    computed = huellaAnulacion({
      IDEmisorFacturaAnulada: t('IDFactura', 'IDEmisorFacturaAnulada'),
      NumSerieFacturaAnulada: t('IDFactura', 'NumSerieFacturaAnulada'),
      FechaExpedicionFacturaAnulada: t('IDFactura', 'FechaExpedicionFacturaAnulada'),
      Huella: linked ?? '',
      FechaHoraHusoGenRegistro: t('FechaHoraHusoGenRegistro'),
    });
  } else {
    return { kind: 'body_changed', reason: `not a VERI*FACTU record (root ${r.localName})` };
  }
  const written = t('Huella');
  if (computed !== written || computed !== record.fingerprint) {
    return { kind: 'body_changed', reason: `fingerprint mismatch: the fields give huella ${computed}, the record writes ${written || '(none)'}, stored ${record.fingerprint ?? '(none)'}` };
  }
  const expected = previous?.fingerprint ?? null;
  if (expected === null) {
    if (linked !== undefined || textAt(r, 'Encadenamiento', 'PrimerRegistro') !== 'S') return { kind: 'link_broken', reason: 'the first record of the chain must say PrimerRegistro S' };
  } else if (linked !== expected) {
    return { kind: 'link_broken', reason: `Encadenamiento names huella ${linked ?? '(none)'}, the previous record's is ${expected}` };
  }
  return null;
}
