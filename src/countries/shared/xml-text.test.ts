import { describe, expect, it } from 'vitest';
import { textWithin, unescapeXml } from './xml-text.ts';

describe('xml-text', () => {
  it('decodes entities and character references', () => {
    expect(unescapeXml('P&amp;H &lt;1&gt; &quot;x&quot; &apos;y&apos; &#233;&#xE9;')).toBe('P&H <1> "x" \'y\' éé');
  });
  it('reads the first element inside the first block, any prefix, decoded and trimmed', () => {
    const xml = '<T><Sujetos><Emisor><NIF>B1</NIF><ApellidosNombreRazonSocial> Pérez &amp; Hijos </ApellidosNombreRazonSocial></Emisor>'
      + '<Destinatarios><ApellidosNombreRazonSocial>Cliente</ApellidosNombreRazonSocial></Destinatarios></Sujetos></T>';
    expect(textWithin(xml, 'Emisor', 'ApellidosNombreRazonSocial')).toBe('Pérez & Hijos');
    expect(textWithin('<sf:RegistroAlta xmlns:sf="u"><sf:NombreRazonEmisor>A SL</sf:NombreRazonEmisor></sf:RegistroAlta>', 'RegistroAlta', 'NombreRazonEmisor')).toBe('A SL');
    // A longer name that starts the same is another element.
    expect(textWithin('<R><NombreRazonEmisorFacturaAnulada>X</NombreRazonEmisorFacturaAnulada></R>', 'R', 'NombreRazonEmisor')).toBeUndefined();
    expect(textWithin('<R><N> </N></R>', 'R', 'N')).toBeUndefined();
    expect(textWithin('<Q/>', 'R', 'N')).toBeUndefined();
  });
});
