import { performance } from 'node:perf_hooks';

/** Median of a list of numbers. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/** The nearest-rank percentile of a sample. */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
}

/** Runs fn `runs` times (after `setup` each time, untimed) and returns each run's wall time in milliseconds. */
export async function timeSamples(
  runs: number,
  fn: (i: number) => Promise<unknown> | unknown,
  setup?: (i: number) => Promise<unknown> | unknown,
): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (setup) await setup(i);
    const t0 = performance.now();
    await fn(i);
    times.push(performance.now() - t0);
  }
  return times;
}

/** Runs fn `runs` times (after `setup` each time, untimed) and returns the median wall time in milliseconds. */
export async function timeMedian(
  runs: number,
  fn: (i: number) => Promise<unknown> | unknown,
  setup?: (i: number) => Promise<unknown> | unknown,
): Promise<number> {
  return median(await timeSamples(runs, fn, setup));
}

/** Like timeMedian, but returns the median of wall and of process CPU time (user + system, every thread). */
export async function timeAndCpuMedian(
  runs: number,
  fn: (i: number) => Promise<unknown> | unknown,
  setup?: (i: number) => Promise<unknown> | unknown,
): Promise<{ wall: number; cpu: number }> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    if (setup) await setup(i);
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn(i);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

/** Formats milliseconds for a results table. */
export function ms(x: number): string {
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 2 : 1)} ms`;
}

/** Formats a byte count. */
export function bytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GiB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

/** Prints a left-aligned table. */
export function printTable(title: string, header: readonly string[], rows: readonly (readonly string[])[]): void {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  console.log(`\n${title}`);
  for (const r of all) console.log('  ' + r.map((cell, c) => cell.padEnd(widths[c] ?? 0)).join('  '));
}
