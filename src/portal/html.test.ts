import { describe, expect, it } from 'vitest';
import { escapeHtml, html, raw, SafeHtml } from './html.ts';

describe('escapeHtml', () => {
  it('escapes every character that can open markup or leave an attribute', () => {
    expect(escapeHtml(`<script>alert("x")</script>`)).toBe('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(escapeHtml(`' onmouseover=alert(1) x=\``)).toBe('&#39; onmouseover&#61;alert(1) x&#61;&#96;');
    expect(escapeHtml('a & b')).toBe('a &amp; b');
  });

  it('escapes an already escaped entity again (text is text)', () => {
    expect(escapeHtml('&lt;')).toBe('&amp;lt;');
  });

  it('leaves other text, non-ASCII included, as it is', () => {
    expect(escapeHtml('Καφενείο Αθήνα — Menú 12,00 €')).toBe('Καφενείο Αθήνα — Menú 12,00 €');
  });
});

describe('html tag', () => {
  it('escapes interpolated strings and numbers, keeps nested markup', () => {
    const name = '<b>Bar</b>';
    const inner = html`<em>${name}</em>`;
    expect(html`<p title="${name}">${inner} ${3}</p>`.value).toBe('<p title="&lt;b&gt;Bar&lt;/b&gt;"><em>&lt;b&gt;Bar&lt;/b&gt;</em> 3</p>');
  });

  it('renders lists, and nothing for null, undefined and false', () => {
    const items = ['a<', 'b'].map((x) => html`<li>${x}</li>`);
    expect(html`<ul>${items}</ul>${null}${undefined}${false}`.value).toBe('<ul><li>a&lt;</li><li>b</li></ul>');
  });

  it('raw passes a trusted constant through; a plain string never does', () => {
    expect(html`${raw('<br>')}`.value).toBe('<br>');
    expect(html`${'<br>'}`.value).toBe('&lt;br&gt;');
    expect(html`x` instanceof SafeHtml).toBe(true);
  });
});
