// The one-screen summary of docs/benchmarks.md, drawn from its data file: the Markdown table and the SVG chart. Pure
// functions of the data, so the committed table and chart can be checked against the committed figures.
import { bytes, ms } from './measure.js';

/** One measured row of the data file: an operation of offshoot or a baseline, its median at each size. */
export interface SummaryFigures {
  id: string;
  /** Median milliseconds, one per size, in the order of `SummaryData.sizes`; null where it cannot be measured. */
  ms: (number | null)[];
}

/** How a row of the summary is shown, and why a figure may be missing from it. */
export interface SummaryRow {
  id: string;
  kind: 'offshoot' | 'baseline';
  label: string;
  note?: string;
}

const V8_NOTE =
  "the rows' JSON text is longer than V8's longest string (2^29 − 24 characters), so Node cannot hold it in one piece";

/** The rows of the summary, in the page's order. */
export const SUMMARY_ROWS: readonly SummaryRow[] = [
  { id: 'fork', kind: 'offshoot', label: 'fork a checkpoint' },
  { id: 'checkpoint', kind: 'offshoot', label: 'checkpoint one changed row' },
  { id: 'checkout', kind: 'offshoot', label: 'checkout of a new fork' },
  { id: 'diff', kind: 'offshoot', label: 'diff, 10 rows apart' },
  { id: 'episode', kind: 'offshoot', label: 'eval episode' },
  { id: 'cp', kind: 'baseline', label: '`cp` of the file' },
  { id: 'vacuum', kind: 'baseline', label: '`VACUUM INTO` a copy' },
  { id: 'json', kind: 'baseline', label: 'JSON reload of the rows', note: V8_NOTE },
  {
    id: 'saverPut',
    kind: 'baseline',
    label: 'SqliteSaver put',
    note: 'its serializer writes the whole state as one JSON string',
  },
  { id: 'saverGet', kind: 'baseline', label: 'SqliteSaver getTuple', note: 'it reads back that one JSON string' },
];

function rowOf(id: string): SummaryRow {
  const r = SUMMARY_ROWS.find((x) => x.id === id);
  if (r === undefined) throw new Error(`the summary has no row "${id}"`);
  return r;
}

/** The data file the summary bench writes and the page's table and chart are drawn from. */
export interface SummaryData {
  /** ISO date and time the run started. */
  date: string;
  command: string;
  machine: { cpus: number; cpu: string; memoryGiB: number; os: string; node: string; filesystem: string };
  /** The 1-minute load average at the start and at the end of the run. */
  load: { start: number; end: number };
  /** Samples per measure at each size. */
  samples: number[];
  /** Database file size in bytes, per size. */
  sizes: number[];
  rows: SummaryFigures[];
}

/** The block of docs/benchmarks.md the summary bench rewrites, between these two lines. */
export const PAGE_MARKERS = ['<!-- bench-summary: begin (written by make bench) -->', '<!-- bench-summary: end -->'];

/** The data file and the chart, relative to the repository root. */
export const SUMMARY_FILES = { data: 'docs/bench-summary.json', chart: 'docs/bench-summary.svg' };

const COLORS = ['#4c78a8', '#f58518', '#54a24b'];

/** Words joined into lines of at most `width` characters, as the docs are wrapped. */
function wrap(text: string, width = 120): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line].join('\n');
}

/** The machine, load, date and command of a run, in one paragraph. */
function runLine(d: SummaryData): string {
  const m = d.machine;
  return wrap(
    `Measured ${d.date.slice(0, 16).replace('T', ' ')} UTC on ${m.cpus} × ${m.cpu}, ${m.memoryGiB} GiB RAM, ` +
      `${m.filesystem}, ${m.os}, Node ${m.node}; load average ${d.load.start.toFixed(1)} at the start ` +
      `and ${d.load.end.toFixed(1)} at the end (${m.cpus} cores); medians of ${d.samples.join(' / ')} samples. ` +
      `Command: \`${d.command}\`.`,
  );
}

/** The summary as the Markdown block between the page's markers (markers excluded). */
export function renderBlock(d: SummaryData): string {
  const head = ['operation', ...d.sizes.map((s) => bytes(s))];
  const lines = d.rows.map((f) => {
    const r = rowOf(f.id);
    return [r.kind === 'offshoot' ? `**${r.label}**` : r.label, ...f.ms.map((v) => (v === null ? '—' : ms(v)))];
  });
  const widths = head.map((h, c) => Math.max(h.length, ...lines.map((l) => (l[c] ?? '').length)));
  const row = (cells: string[]): string => `| ${cells.map((x, c) => x.padEnd(widths[c] ?? 0)).join(' | ')} |`;
  const notes = d.rows
    .filter((f) => f.ms.includes(null))
    .map((f) => `${rowOf(f.id).label}, as ${rowOf(f.id).note ?? 'it was not measured'}`);
  return [
    row(head),
    row(widths.map((w) => '-'.repeat(w))),
    ...lines.map(row),
    '',
    ...(notes.length > 0 ? [wrap(`Not measurable (—): ${notes.join('; ')}.`), ''] : []),
    `![The table above as bars, log scale](bench-summary.svg)`,
    '',
    runLine(d),
  ].join('\n');
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The time axis' label at a power of ten of milliseconds. */
function tickLabel(exp: number): string {
  return exp >= 3 ? `${10 ** (exp - 3)} s` : `${Number((10 ** exp).toPrecision(1))} ms`;
}

/** The summary as a horizontal bar chart, one group of bars per row, one bar per size, on a log time axis. */
export function renderSvg(d: SummaryData): string {
  const values = d.rows.flatMap((f) => f.ms.filter((v): v is number => v !== null && v > 0));
  const lo = Math.floor(Math.log10(Math.min(...values)));
  const hi = Math.ceil(Math.log10(Math.max(...values)));
  const left = 230;
  const right = 730;
  const x = (v: number): number => left + ((Math.log10(v) - lo) / (hi - lo)) * (right - left);
  const bar = 8;
  const group = d.sizes.length * (bar + 2) + 10;
  const top = 64;
  const out: string[] = [];
  let y = top;
  let kind: SummaryRow['kind'] | undefined;
  for (const f of d.rows) {
    const r = rowOf(f.id);
    if (r.kind !== kind) {
      kind = r.kind;
      y += 8;
      const title = kind === 'offshoot' ? 'offshoot, through the daemon' : 'what you would otherwise use';
      out.push(`<text x="10" y="${y + 4}" font-weight="bold">${title}</text>`);
      y += 12;
    }
    const mid = y + 4 + (d.sizes.length * (bar + 2)) / 2;
    const label = escapeXml(r.label.replace(/`/g, ''));
    out.push(`<text x="${left - 8}" y="${mid + 3}" text-anchor="end">${label}</text>`);
    f.ms.forEach((v, i) => {
      const by = y + 4 + i * (bar + 2);
      if (v === null) {
        out.push(`<text x="${left + 4}" y="${by + bar - 1}" font-size="9" fill="#777">not measurable</text>`);
        return;
      }
      const w = Math.max(1, x(v) - left);
      out.push(`<rect x="${left}" y="${by}" width="${w.toFixed(1)}" height="${bar}" fill="${COLORS[i % 3]}"/>`);
      out.push(`<text x="${(left + w + 4).toFixed(1)}" y="${by + bar - 1}" font-size="9">${ms(v)}</text>`);
    });
    y += group;
  }
  const ticks: string[] = [];
  for (let e = lo; e <= hi; e++) {
    const tx = x(10 ** e).toFixed(1);
    ticks.push(`<line x1="${tx}" y1="${top}" x2="${tx}" y2="${y}" stroke="#ddd"/>`);
    ticks.push(`<text x="${tx}" y="${y + 14}" text-anchor="middle" font-size="10">${tickLabel(e)}</text>`);
  }
  const legend = d.sizes.map(
    (s, i) =>
      `<rect x="${left + i * 110}" y="36" width="10" height="10" fill="${COLORS[i % 3]}"/>` +
      `<text x="${left + 14 + i * 110}" y="45">${bytes(s)}</text>`,
  );
  const height = y + 26;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="${height}" viewBox="0 0 800 ${height}" font-family="system-ui, sans-serif" font-size="12">`,
    `<title>What a fork, a checkpoint, a checkout, a diff and an eval episode cost by database size, beside cp, VACUUM INTO, a JSON reload and LangGraph's SqliteSaver</title>`,
    `<rect width="800" height="${height}" fill="#fff"/>`,
    `<text x="10" y="20" font-size="14" font-weight="bold">What an operation costs, by database size (median; log scale)</text>`,
    `<text x="10" y="45" font-size="10" fill="#555">${escapeXml(`${d.date.slice(0, 10)}, load ${d.load.start.toFixed(1)}–${d.load.end.toFixed(1)} on ${d.machine.cpus} cores`)}</text>`,
    ...legend,
    ...ticks,
    ...out,
    '</svg>',
    '',
  ].join('\n');
}

/** The page's text with the block between its markers replaced by `block`; throws when a marker is missing. */
export function replaceBlock(page: string, block: string): string {
  const [begin, end] = PAGE_MARKERS as [string, string];
  const a = page.indexOf(begin);
  const b = page.indexOf(end);
  if (a < 0 || b < a) throw new Error(`the page has no "${begin}" … "${end}" block`);
  return `${page.slice(0, a + begin.length)}\n${block}\n${page.slice(b)}`;
}
