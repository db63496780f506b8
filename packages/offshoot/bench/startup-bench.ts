import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, ms, printTable } from './measure.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const cli = join(repoRoot, 'packages/offshoot/bin/offshoot.cjs');

function timed(args: string[], cwd: string): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const t = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${r.stderr}`);
  return t;
}

/**
 * Whole-process wall time of `offshoot status` and `offshoot fork` on a small local store (the bundled CLI, as the
 * package bin runs it) beside `node -e 0`, interleaved round by round so machine noise lands on all three alike.
 */
export async function startupBench(rounds = Number(process.env.OFFSHOOT_BENCH_STARTUP_ROUNDS ?? 21)): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'offshoot-bench-startup-'));
  try {
    // status runs on a store that stays at one branch; the forks pile up in a second store.
    const store = ['-store', join(dir, 'store')];
    const forks = ['-store', join(dir, 'forks')];
    for (const s of [store, forks]) {
      timed([cli, ...s, 'init'], dir);
      timed([cli, ...s, 'create', 'app'], dir);
    }
    timed([cli, ...store, 'status'], dir); // writes the V8 code cache if the build left none
    const t = { node: [] as number[], status: [] as number[], fork: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      t.node.push(timed(['-e', '0'], dir));
      t.status.push(timed([cli, ...store, 'status'], dir));
      t.fork.push(timed([cli, ...forks, 'fork', 'app', `f${i}`], dir));
    }
    const base = median(t.node);
    const row = (what: string, xs: number[]) => [what, ms(median(xs)), `${(median(xs) / base).toFixed(2)}× node -e 0`];
    printTable(
      `Start-up (${rounds} interleaved rounds, whole process, small local stores)`,
      ['command', 'median', 'compared'],
      [row('node -e 0 (baseline)', t.node), row('offshoot status', t.status), row('offshoot fork', t.fork)],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await startupBench();
