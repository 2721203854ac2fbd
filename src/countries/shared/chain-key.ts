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

/**
 * The characters that give a chain key its structure: `:` joins its parts and starts the
 * live suffix (`inEnvironment`), `#` starts a side sequence of the chain (the core's
 * annulments and corrections). Text a merchant chooses (a series) is the last part of a
 * key, so it must hold neither: a test series `B:live` would key the live chain of `B`,
 * a series `B#annulments` the annulments of `B` (their numbers would skip each other's).
 * Where a chain's position numbers its documents, a new such series is refused rather than
 * escaped: escaping would move every stored chain whose series already holds one of them
 * and restart its numbering (documents issued twice under one number). Where the numbers
 * are the merchant's, the part is escaped (`escapeKeyPart`).
 */
export const KEY_SEPARATORS = [':', '#'] as const;

/** Whether `text` holds a character that separates the parts of a chain key (`KEY_SEPARATORS`). */
export const hasKeySeparator = (text: string): boolean => KEY_SEPARATORS.some((c) => text.includes(c));

/**
 * `text` as a part of a key that no other text can give: `%`, `:` and `#` percent-encoded
 * (`%25`, `%3A`, `%23`), anything else as it is, so a key without them stays the key it
 * always was. For text no numbering hangs off (a system whose numbers are the merchant's,
 * its chain only orders records): there a chain that moves loses nothing. Where a chain's
 * position is the document's number, a new separator is refused instead (`KEY_SEPARATORS`).
 */
export const escapeKeyPart = (text: string): string => text.replace(/[%:#]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * Whether a location config may hold `value` in a field that enters a chain key: one free of
 * separators, or the very value its stored config holds there (a location that had it before
 * the rule keeps its chain, under its key as it was).
 */
export const keyPartAllowed = (value: string, stored: unknown): boolean => !hasKeySeparator(value) || value === stored;
