/**
 * Italian tax-agency XML free text is Latin (FatturaPA `String…LatinType`, the RT and
 * lottery schemas' `String200LatinType`: Basic Latin + Latin-1 Supplement,
 * normalizedString). Characters outside it are written the way a person would type them
 * in Latin-1 where there is an obvious way (€ → EUR, dashes and curly quotes → ASCII,
 * a letter with a mark Latin-1 lacks → the letter: "č" → "c"); anything else becomes `?`.
 * Control characters become spaces, and runs of spaces one space. Empty text becomes
 * `fallback`; longer text is cut to `max` code points (XSD lengths count characters).
 */
export function latin(text: string, max: number, fallback = '.'): string {
  const cleaned = Array.from(text.normalize('NFC'))
    .map(toLatin1)
    .join('')
    .replace(/ +/g, ' ')
    .trim();
  const chars = Array.from(cleaned === '' ? fallback : cleaned);
  return chars.length <= max ? chars.join('') : chars.slice(0, max).join('');
}

/** Typographic characters outside Latin-1 that shops type every day, and their plain forms. */
const PLAIN: Readonly<Record<string, string>> = {
  '€': 'EUR', '‐': '-', '‑': '-', '‒': '-', '–': '-', '—': '-', '―': '-', '−': '-',
  '‘': "'", '’': "'", '‚': "'", '‛': "'", '“': '"', '”': '"', '„': '"', '‟': '"',
  '…': '...', '•': '-', '™': 'TM', 'œ': 'oe', 'Œ': 'OE', '\u2009': ' ', '\u202f': ' ',
};

function toLatin1(c: string): string {
  if (/[\u0000-\u001F\u007F]/.test(c)) return ' ';
  if (c.codePointAt(0)! <= 0xff) return c;
  const plain = PLAIN[c];
  if (plain !== undefined) return plain;
  // A letter with a mark Latin-1 has no precomposed form for (č, ł is not one: no decomposition).
  const base = c.normalize('NFD').replace(/[\u0300-\u036f]/g, '');
  return base !== '' && Array.from(base).every((b) => b.codePointAt(0)! <= 0xff) ? base.normalize('NFC') : '?';
}
