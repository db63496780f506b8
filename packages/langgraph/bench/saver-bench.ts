// The cost of the saver's branch verbs on a small graph: checkpoint() and forkThread() in both modes, next to one
// graph step for scale. Run: node --import tsx packages/langgraph/bench/saver-bench.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startDaemon } from '@offshoot/client/testkit';
import { OffshootSaver } from '../src/index.js';
import { buildGraph, thread } from '../test/graph-fixture.js';

const RUNS = Number(process.env['OFFSHOOT_BENCH_RUNS'] ?? 15);
const BIN = fileURLToPath(new URL('../../../offshoot', import.meta.url));
process.env['OFFSHOOT_BIN'] = BIN;
const T = thread('bench');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
}

/** Median wall time of `fn` over RUNS runs, each after an untimed `setup`. */
async function time(fn: (i: number) => Promise<unknown>, setup?: (i: number) => Promise<unknown>): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    if (setup !== undefined) await setup(i);
    const t0 = performance.now();
    await fn(i);
    times.push(performance.now() - t0);
  }
  return `${median(times).toFixed(1)} ms`;
}

async function measure(saver: OffshootSaver, label: string): Promise<string[][]> {
  const app = buildGraph(saver);
  for (let i = 0; i < 10; i++) await app.invoke({ n: i }, T);
  await saver.checkpoint('base');
  const rows = [[label, 'graph step (invoke, 2 nodes)', await time((i) => app.invoke({ n: i }, T))]];
  rows.push([
    label,
    'checkpoint(name) after one step',
    await time(
      (i) => saver.checkpoint(`cp-${i}`),
      (i) => app.invoke({ n: i }, T),
    ),
  ]);
  const forks: OffshootSaver[] = [];
  rows.push([
    label,
    'forkThread() from the head, after one step',
    await time(
      async (i) => forks.push(await saver.forkThread(`h-${i}`)),
      (i) => app.invoke({ n: i }, T),
    ),
  ]);
  rows.push([
    label,
    'forkThread({ fromCheckpoint })',
    await time(async (i) => forks.push(await saver.forkThread(`c-${i}`, { fromCheckpoint: 'base', ttl: '1h' }))),
  ]);
  for (const f of forks) await f.close();
  return rows;
}

const daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
const tmp = mkdtempSync(join(tmpdir(), 'offshoot-bench-'));
try {
  const session = await OffshootSaver.session(daemon.sock, 'bench');
  const rows = await measure(session, 'session');
  await session.close();
  execFileSync(BIN, ['-store', join(tmp, 'store'), 'init']);
  const atRest = await OffshootSaver.atRest(join(tmp, 'store'), 'bench');
  rows.push(...(await measure(atRest, 'at rest')));
  await atRest.close();
  console.log(`OffshootSaver on a small graph, median of ${RUNS}`);
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
} finally {
  await daemon.stop();
  rmSync(tmp, { recursive: true, force: true });
}
