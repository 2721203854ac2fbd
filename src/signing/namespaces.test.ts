import { describe, expect, it } from 'vitest';
import { NS_DS, NS_XADES, namespaceDeclarations, readRoot, signableRootStartTag } from './namespaces.ts';

const DS_XADES = ` xmlns:ds="${NS_DS}" xmlns:xades="${NS_XADES}"`;

describe('namespace declarations in C14N order', () => {
  it('default namespace first, then prefixes by code point (T < ds < xades)', () => {
    expect(namespaceDeclarations({ xades: 'x', T: 't', '': 'd', ds: 's' })).toBe(' xmlns="d" xmlns:T="t" xmlns:ds="s" xmlns:xades="x"');
  });

  it('a signable root binds ds and xades beside its own namespaces', () => {
    expect(signableRootStartTag('T:TicketBai', { T: 'urn:ticketbai:emision' })).toBe(`<T:TicketBai xmlns:T="urn:ticketbai:emision"${DS_XADES}>`);
  });
});

describe('readRoot', () => {
  const doc = `<T:R xmlns:T="urn:t"${DS_XADES}><a>1</a></T:R>`;

  it('returns the root name, where its start tag ends and the declarations in scope', () => {
    const r = readRoot(doc);
    expect(r).toEqual({ name: 'T:R', startTagEnd: doc.indexOf('<a>'), declarations: ` xmlns:T="urn:t"${DS_XADES}` });
  });

  it('keeps an attribute after the declarations', () => {
    expect(readRoot(`<R xmlns="urn:d"${DS_XADES} a="1"></R>`).declarations).toBe(` xmlns="urn:d"${DS_XADES}`);
  });

  it.each([
    ['an XML declaration', `<?xml version="1.0"?>${doc}`, /root start tag/],
    ['no ds/xades declarations', '<T:R xmlns:T="urn:t"></T:R>', /must declare/],
    ['a wrong ds namespace', `<R xmlns:ds="urn:other" xmlns:xades="${NS_XADES}"></R>`, /must declare/],
    ['declarations out of canonical order', `<R xmlns:xades="${NS_XADES}" xmlns:ds="${NS_DS}"></R>`, /out of order/],
    ['a declaration after an attribute', `<R a="1"${DS_XADES}></R>`, /after an attribute/],
    ['an inherited xml:* attribute', `<R${DS_XADES} xml:lang="es"></R>`, /xml:lang/],
    ['another closing element', `<R${DS_XADES}></S>`, /must end with/],
  ])('refuses %s', (_what, input, message) => {
    expect(() => readRoot(input)).toThrow(message);
  });
});
