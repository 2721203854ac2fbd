/** Small helpers to print a markdown table. */

export function markdownTable(header: string[], rows: string[][], alignRight: boolean[] = []): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const cell = (s: string, i: number) => (alignRight[i] ? s.padStart(widths[i]!) : s.padEnd(widths[i]!));
  const line = (cells: string[]) => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (alignRight[i] ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  ms: (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2)),
  pct: (n: number) => `${Math.round(n)} %`,
  ratio: (n: number) => `${n.toFixed(2)}×`,
};

/** 2025-01-31T09-05-07Z: sortable and safe in a file name. */
export function fileStamp(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
}
