/**
 * Records sent late: the `Cabecera/RemisionVoluntaria/Incidencia` flag of a submission
 * (SuministroInformacion.xsd CabeceraType, IncidenciaType S/N).
 *
 * A VERI*FACTU system sends each record to AEAT as it is generated (RD 1007/2023, RRSIF, arts.
 * 15-16). When a technical incident (a power cut, no Internet, AEAT's service down) stops the
 * sending, invoicing goes on and the records are sent once it is over, with the header's
 * Incidencia S (the XSD's RemisionVoluntaria/Incidencia; VERI*FACTU software help pages
 * describe it so, e.g. ofipro's "remisión" FAQ). AEAT compares each record's
 * `FechaHoraHusoGenRegistro` with its own clock at reception and, without the flag, accepts
 * one generated more than 240 s before with error 2004 ("El valor del campo
 * FechaHoraHusoGenRegistro debe ser la fecha actual del sistema de la AEAT, admitiéndose un
 * margen de error de: 240 segundos", as AEAT's test service answers
 * it): a record "accepted with errors" to be corrected.
 *
 * Our records wait in the queue when AEAT was unreachable or refused the request for a time
 * (HTTP 5xx, timeouts, SOAP Server faults: retried with back-off), when the worker was down,
 * and behind their chain's earlier records. The rule: a submission carries `Incidencia` S
 * when one of its records was generated more than `INCIDENT_AFTER_SECONDS` before the send.
 *
 * - 120 s, not AEAT's 240: AEAT measures on its clock at reception; ours may be behind, and a
 *   request of 1,000 records takes a while to reach it. The sources do not agree on the
 *   margin either (OCA's l10n_es_verifactu comments 120 s; AEAT's answer quoted by Odoo and
 *   others says 240 s). Flagging a record AEAT would still have taken costs nothing (no AEAT
 *   error we found refuses the flag on a current record); missing one costs a 2004.
 * - The whole request: its records share the one Cabecera. The records of a request are one
 *   issuer's chain in generation order, so the late ones are the oldest and the others were
 *   queued behind them (the chain goes in order): they were held up by the same incident.
 *   Sending them in a second request would wait out AEAT's TiempoEsperaEnvio (usually 60 s)
 *   after the first, and make them later still. This is also how Odoo's VERI*FACTU module
 *   flags a batch (any record older than AEAT's margin).
 */

/** A record older than this (seconds since its FechaHoraHusoGenRegistro) at the send is late. */
export const INCIDENT_AFTER_SECONDS = 120;

/**
 * The record's `FechaHoraHusoGenRegistro` (ISO 8601 with its offset, xml.ts), as an instant;
 * undefined when the stored body has none that can be read.
 */
export function generatedAt(body: string): Date | undefined {
  const text = /<sf:FechaHoraHusoGenRegistro>([^<]+)<\/sf:FechaHoraHusoGenRegistro>/.exec(body)?.[1];
  if (text === undefined) return undefined;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** Whether a submission of these records at `now` is a remittance after an incident (see above). */
export function sentAfterIncident(bodies: readonly string[], now: Date): boolean {
  const limit = now.getTime() - INCIDENT_AFTER_SECONDS * 1000;
  return bodies.some((body) => {
    const at = generatedAt(body);
    return at !== undefined && at.getTime() < limit;
  });
}
