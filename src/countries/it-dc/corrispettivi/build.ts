/**
 * Builds the signed DatiCorrispettivi of one register and day: the totals (totals.ts) in
 * the COR10 document (xml.ts), sealed with the location's certificate as an enveloped
 * XAdES-BES signature (../../../signing/xades-bes.ts: RSA-SHA256, inclusive C14N, the
 * signature the root's last child). The schema's `ds:Signature` is the XMLDSig core
 * element, whose `ds:Object` takes any content (processContents lax), so the XAdES
 * qualifying properties fit it; an XMLDSig verifier that ignores them verifies the same
 * signature (docs/decisions.md "Italy: daily corrispettivi").
 */
import type { SigningKey } from '../../../core/signing-key.ts';
import { signXadesBes } from '../../../signing/xades-bes.ts';
import { isIsoDate, localDateTimeWithOffset } from '../../shared/dates.ts';
import type { DayTotals } from './totals.ts';
import { corrispettiviXml } from './xml.ts';

export interface CorrispettiviBuildInput {
  totals: DayTotals;
  matricola: string;
  progressivo: number;
  environment: 'test' | 'live';
  key: SigningKey;
  /** Signing time (the build's clock). */
  now: Date;
}

export interface BuiltCorrispettivi {
  xml: string;
  signatureValue: string;
}

/**
 * The instant the Rome wall clock shows `time` (HH:MM:SS) on `day`. Rome is UTC+1 or
 * UTC+2; at 00:00-23:59:59 no day is ambiguous (the switches happen at 02:00/03:00).
 */
export function romeInstant(day: string, time: string): Date {
  if (!isIsoDate(day)) throw new Error(`corrispettivi: ${day} is not a date`);
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const [hh, mm, ss] = time.split(':').map(Number) as [number, number, number];
  for (const offsetHours of [1, 2]) {
    const at = new Date(Date.UTC(y, m - 1, d, hh, mm, ss) - offsetHours * 3_600_000);
    if (localDateTimeWithOffset(at, 'IT').startsWith(`${day}T${time}`)) return at;
  }
  throw new Error(`corrispettivi: ${day} ${time} does not exist in Rome`);
}

/** [start, end) of an Italian calendar day, as instants. */
export function romeDayRange(day: string): { from: Date; to: Date } {
  const from = romeInstant(day, '00:00:00');
  const next = new Date(Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10)) + 1));
  return { from, to: romeInstant(next.toISOString().slice(0, 10), '00:00:00') };
}

/** `DataOraRilevazione`: the close of the day, 23:59:59 Rome time, with its offset. */
export const rilevazioneOf = (day: string): string => localDateTimeWithOffset(romeInstant(day, '23:59:59'), 'IT');

const idBaseOf = (matricola: string, day: string): string => `COR-${matricola.replace(/[^A-Za-z0-9._-]/g, '_')}-${day}`;

export function buildCorrispettivi(input: CorrispettiviBuildInput): BuiltCorrispettivi {
  const unsigned = corrispettiviXml({
    totals: input.totals,
    matricola: input.matricola,
    progressivo: input.progressivo,
    rilevazione: rilevazioneOf(input.totals.day),
    simulazione: input.environment === 'test',
  });
  const signed = signXadesBes({
    document: unsigned,
    key: input.key,
    signingTime: localDateTimeWithOffset(input.now, 'IT'),
    idBase: idBaseOf(input.matricola, input.totals.day),
  });
  return { xml: signed.xml, signatureValue: signed.signatureValue };
}
