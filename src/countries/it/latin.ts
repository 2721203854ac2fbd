/**
 * Italian tax-agency XML free text is Latin (FatturaPA `String…LatinType`, the RT and
 * lottery schemas' `String200LatinType`: Basic Latin + Latin-1 Supplement,
 * normalizedString): other characters become `?`, control characters spaces, and runs of
 * spaces one space. Empty text becomes `fallback`; longer text is cut to `max` code points
 * (XSD lengths count characters).
 */
export function latin(text: string, max: number, fallback = '.'): string {
  const cleaned = Array.from(text.normalize('NFC'))
    .map((c) => (/[\u0000-\u001F\u007F]/.test(c) ? ' ' : c.codePointAt(0)! <= 0xff ? c : '?'))
    .join('')
    .replace(/ +/g, ' ')
    .trim();
  const chars = Array.from(cleaned === '' ? fallback : cleaned);
  return chars.length <= max ? chars.join('') : chars.slice(0, max).join('');
}
