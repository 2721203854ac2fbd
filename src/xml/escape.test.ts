import { describe, expect, it } from 'vitest';
import { ValidationError } from '../core/errors.ts';
import { el, escapeAttr, escapeText, optEl, XmlCharacterError } from './escape.ts';

describe('canonical XML escaping', () => {
  it('escapes text as C14N does', () => {
    expect(escapeText('a & b < c > d\r\n"q" \'s\'')).toBe('a &amp; b &lt; c &gt; d&#xD;\n"q" \'s\'');
  });
  it('escapes attributes as C14N does', () => {
    expect(escapeAttr('a & b < c > "d"\t\n\r')).toBe('a &amp; b &lt; c > &quot;d&quot;&#x9;&#xA;&#xD;');
  });
  it('refuses characters XML cannot carry, as a 400 (the input\'s fault)', () => {
    expect(() => escapeText('bell\u0007')).toThrow(XmlCharacterError);
    expect(() => escapeAttr('\u0000')).toThrow(XmlCharacterError);
    expect(() => escapeText('\ufffe')).toThrow(XmlCharacterError);
    const e = new XmlCharacterError('x');
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.status).toBe(400);
    expect(escapeText('tab\tline\n')).toBe('tab\tline\n');
  });
  it('builds simple elements, omitting empty optional ones', () => {
    expect(el('Nombre', 'Ñandú & Cía')).toBe('<Nombre>Ñandú &amp; Cía</Nombre>');
    expect(optEl('Serie', undefined)).toBe('');
    expect(optEl('Serie', '')).toBe('');
    expect(optEl('Serie', 'A')).toBe('<Serie>A</Serie>');
  });
});
