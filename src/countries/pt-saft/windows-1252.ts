/**
 * Windows-1252 encoding of an XML document (SAF-T (PT) files are Windows-1252, FORMATS.md
 * §7.4). Node decodes Windows-1252 (`TextDecoder`) but does not encode it. The code page is
 * Latin-1 (U+0000–U+00FF, byte = code point) except 0x80–0x9F, which hold the 27
 * characters below. A character the code page lacks is written as an XML character
 * reference (`&#8364;` style), which is only correct where XML allows one: in text and
 * attribute values, the only places our documents carry non-ASCII characters.
 *
 * A lone UTF-16 surrogate (JSON allows `"\ud83d"` in a customer's name) is no character:
 * a reference to it (`&#55357;`) makes the whole file not well-formed (XML 1.0 §2.2, Char),
 * so it is written as U+FFFD, the replacement character, as UTF-8 encoding writes it in
 * the other documents.
 */
const HIGH: Readonly<Record<number, number>> = {
  0x20ac: 0x80, 0x201a: 0x82, 0x0192: 0x83, 0x201e: 0x84, 0x2026: 0x85, 0x2020: 0x86, 0x2021: 0x87,
  0x02c6: 0x88, 0x2030: 0x89, 0x0160: 0x8a, 0x2039: 0x8b, 0x0152: 0x8c, 0x017d: 0x8e, 0x2018: 0x91,
  0x2019: 0x92, 0x201c: 0x93, 0x201d: 0x94, 0x2022: 0x95, 0x2013: 0x96, 0x2014: 0x97, 0x02dc: 0x98,
  0x2122: 0x99, 0x0161: 0x9a, 0x203a: 0x9b, 0x0153: 0x9c, 0x017e: 0x9e, 0x0178: 0x9f,
};

export function encodeWindows1252Xml(xml: string): Buffer {
  const bytes: number[] = [];
  for (const ch of xml) {
    let cp = ch.codePointAt(0)!;
    if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd;
    if (cp < 0x80 || (cp >= 0xa0 && cp <= 0xff)) bytes.push(cp);
    else if (HIGH[cp] !== undefined) bytes.push(HIGH[cp]!);
    else for (const c of `&#${cp};`) bytes.push(c.charCodeAt(0));
  }
  return Buffer.from(bytes);
}

const LOW: ReadonlyMap<number, number> = new Map(Object.entries(HIGH).map(([cp, byte]) => [byte, Number(cp)]));

/**
 * Windows-1252 bytes to text. (Node's `TextDecoder('windows-1252')` reads 0x80–0x9F as
 * Latin-1 C1 controls in some versions, so it is not used.) The 5 unassigned bytes
 * (0x81, 0x8D, 0x8F, 0x90, 0x9D) are read as the C1 code points of the same value.
 */
export function decodeWindows1252(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += String.fromCharCode(LOW.get(b) ?? b);
  return out;
}
