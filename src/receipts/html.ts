/**
 * The receipt as one HTML page: no script, no external resource (the style is inline and
 * each QR an inline SVG drawn from the symbol's modules), so it can be shown as it is,
 * under a strict Content-Security-Policy, or printed by a browser. The QR is drawn at
 * the printed size the country fixes (`sizeMm`), in millimetres, quiet zone around it.
 * The `footer_right` items sit beside the `footer_bottom` ones (myDATA: the QR on the
 * right), and below them when the page is too narrow.
 */
import crypto from 'node:crypto';
import type { Block, Receipt } from './model.ts';
import { QUIET_ZONE, qrSymbol } from './qr.ts';

const STYLE = `body{margin:0;background:#eee;font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;color:#000}
.receipt{box-sizing:border-box;max-width:80mm;margin:0 auto;padding:4mm;background:#fff;font-size:11px;line-height:1.35}
.receipt p{margin:0;overflow-wrap:anywhere;white-space:pre-wrap}
.c{text-align:center}.b{font-weight:bold}
.pair{display:flex;justify-content:space-between;gap:1em}.pair span:last-child{white-space:nowrap}
hr{border:0;border-top:1px dashed #000;margin:2mm 0}
figure{margin:2mm 0;text-align:center}svg{display:inline-block}
.footer{display:flex;flex-wrap:wrap;gap:2mm;justify-content:space-between;align-items:flex-end}
.footer>section{flex:1 1 auto}`;

/**
 * The page's Content-Security-Policy: nothing may load or run; only its own style block,
 * by hash. Served with the page (render.ts), so a receipt shown as it is cannot be made
 * to load anything, whatever a merchant typed into an item's description.
 */
export const RECEIPT_CSP = `default-src 'none'; style-src 'sha256-${crypto.createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;

export function renderHtml(r: Receipt): string {
  const out: string[] = [];
  const sections = r.sections;
  for (let i = 0; i < sections.length; i++) {
    const s = sections[i]!;
    if (s.name === 'footer_bottom' || s.name === 'footer_right') {
      // The two footers side by side, as the placements say.
      const bottom = sections.find((x) => x.name === 'footer_bottom');
      const right = sections.find((x) => x.name === 'footer_right');
      if (s !== (bottom ?? right)) continue;
      out.push('<div class="footer">');
      for (const part of [bottom, right]) if (part) out.push(section(part.name, part.blocks));
      out.push('</div>');
      continue;
    }
    out.push(section(s.name, s.blocks));
  }
  return `<!DOCTYPE html>
<html lang="${r.lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(r.title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main class="receipt">
${out.join('\n')}
</main>
</body>
</html>
`;
}

function section(name: string, blocks: Block[]): string {
  return `<section class="${name}">\n${blocks.map(block).join('\n')}\n</section>`;
}

function block(b: Block): string {
  switch (b.kind) {
    case 'rule':
      return '<hr>';
    case 'text': {
      const cls = [b.align === 'center' ? 'c' : '', b.bold ? 'b' : ''].filter(Boolean).join(' ');
      return `<p${cls ? ` class="${cls}"` : ''}${b.key ? ` data-hint="${esc(b.key)}"` : ''}>${esc(b.text)}</p>`;
    }
    case 'pair':
      return `<p class="pair${b.bold ? ' b' : ''}"><span>${esc(b.left)}</span><span>${esc(b.right)}</span></p>`;
    case 'qr':
      return `<figure data-hint="${esc(b.key)}">${qrSvg(b.content, b.spec)}</figure>`;
  }
}

/** The symbol as one SVG path (a unit square per dark module), the quiet zone in the view box. */
export function qrSvg(content: string, spec: Parameters<typeof qrSymbol>[1]): string {
  const q = qrSymbol(content, spec);
  const side = q.size + 2 * QUIET_ZONE;
  const mm = (spec.sizeMm * side) / q.size;
  let d = '';
  for (let r = 0; r < q.size; r++) {
    for (let c = 0; c < q.size; c++) {
      if (!q.dark(r, c)) continue;
      // Runs of dark modules in a row as one rectangle.
      let run = 1;
      while (c + run < q.size && q.dark(r, c + run)) run++;
      d += `M${c + QUIET_ZONE} ${r + QUIET_ZONE}h${run}v1h-${run}z`;
      c += run - 1;
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="QR" width="${fmt(mm)}mm" height="${fmt(mm)}mm" viewBox="0 0 ${side} ${side}" shape-rendering="crispEdges"><rect width="${side}" height="${side}" fill="#fff"/><path d="${d}" fill="#000"/><desc>${esc(content)}</desc></svg>`;
}

const fmt = (n: number): string => String(Math.round(n * 100) / 100);

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]!);
}
