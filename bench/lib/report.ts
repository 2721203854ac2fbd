import fs from 'node:fs';
import path from 'node:path';
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

/**
 * Publishes a benchmark report: the markdown and JSON to stdout, the same two files to
 * bench/results/<name>-<UTC timestamp>.{md,json}.
 */
export function publishReport(resultsDir: string, name: string, startedAt: string, report: unknown, md: string): void {
  fs.mkdirSync(resultsDir, { recursive: true });
  const stem = path.join(resultsDir, `${name}-${fileStamp(new Date(startedAt))}`);
  fs.writeFileSync(`${stem}.md`, md);
  fs.writeFileSync(`${stem}.json`, JSON.stringify(report, null, 2) + '\n');
  console.log(md);
  console.log('```json');
  console.log(JSON.stringify(report, null, 2));
  console.log('```');
  console.error(`[bench] wrote ${path.relative(process.cwd(), stem)}.md and .json`);
}
