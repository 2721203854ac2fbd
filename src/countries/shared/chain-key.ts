/**
 * The chain a record joins: `<system>:<location id>:<series>` (the brief's key).
 * `series` is the system's numbering unit (TicketBAI/VERI*FACTU series, SAF-T
 * "<type> <series>", the DC register…), `default` where the system has none.
 */
export const chainKeyOf = (system: string, locationId: string, series: string): string => `${system}:${locationId}:${series}`;

/**
 * The key of a chain (or numbering series) in one environment: live records have chains of
 * their own, suffixed `:live`; test chains keep the plain key (the keys they always had).
 * Why: a live chain must hold only live records (a TicketBAI or VERI*FACTU record names
 * the previous one the authority registered; a SAF-T series runs without gaps; an NF525
 * register's legal chain holds its real sales), so test records never sit between them.
 */
export const inEnvironment = (key: string, environment: 'test' | 'live'): string => (environment === 'live' ? `${key}:live` : key);
