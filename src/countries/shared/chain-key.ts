/**
 * The chain a record joins: `<system>:<location id>:<series>` (the brief's key).
 * `series` is the system's numbering unit (TicketBAI/VERI*FACTU series, SAF-T
 * "<type> <series>", the DC register…), `default` where the system has none.
 */
export const chainKeyOf = (system: string, locationId: string, series: string): string => `${system}:${locationId}:${series}`;
