import { describe, expect, it } from 'vitest';
import { prettyName } from './golden.ts';
import { prettyXml } from './pretty-xml.ts';

describe('prettyXml (golden files for review)', () => {
  it('indents one element a line and keeps the declaration, attributes and namespaces', () => {
    expect(prettyXml('<?xml version="1.0" encoding="UTF-8"?><p:a xmlns:p="urn:x" Id="1"><b>1</b><c><d>2</d></c></p:a>')).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<p:a xmlns:p="urn:x" Id="1">\n  <b>1</b>\n  <c>\n    <d>2</d>\n  </c>\n</p:a>\n',
    );
  });

  it('passes text and attribute values through verbatim: entities, spaces, numbers', () => {
    const xml = '<a x="&quot;q&amp;"><b>Café &amp; bollo &lt;2x1&gt;</b><c>  007 &#233; </c><d>1.50</d></a>';
    expect(prettyXml(xml)).toBe('<a x="&quot;q&amp;">\n  <b>Café &amp; bollo &lt;2x1&gt;</b>\n  <c>  007 &#233; </c>\n  <d>1.50</d>\n</a>\n');
  });

  it('lays out an already indented document the same way (whitespace between elements is layout)', () => {
    expect(prettyXml('<a>\n\t<b>1</b>\n\t<c></c>\n</a>\n')).toBe(prettyXml('<a><b>1</b><c></c></a>'));
  });

  it('writes empty elements in the canonical form <a></a>', () => {
    expect(prettyXml('<a><b/><c></c></a>')).toBe('<a>\n  <b></b>\n  <c></c>\n</a>\n');
  });

  it('refuses a layout that would change more than that', () => {
    expect(() => prettyXml("<a x='1'></a>")).toThrow(/layout would change/);
  });

  it('names the pretty copy beside the exact one', () => {
    expect(prettyName('alta-first.xml')).toBe('alta-first.pretty.xml');
    expect(prettyName('pj240-alta.xml')).toBe('pj240-alta.pretty.xml');
  });
});
