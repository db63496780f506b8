// Two builds of `offshoot mcp` riding one daemon, timed call by call in alternation (A B, B A, ...), so a loaded
// machine moves both alike. OFFSHOOT_BENCH_MCP_BASELINE names the other build's bundle (a cli.cjs built from an
// earlier commit); this checkout's packages/offshoot/dist/cli.cjs is the other side. The daemon's own fork, timed
// from a client between the pairs, shows what the MCP round trip adds. OFFSHOOT_BENCH_MCP_PAIR_AT_REST=1 runs both
// servers with no daemon (each forks in process, so the pair compares the builds' own forks), and
// OFFSHOOT_BENCH_MCP_PAIR_CHECKPOINTS=N gives main a history of N one-row checkpoints first.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { connect } from '@offshoot/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { makeStoreDir, startDaemon, type StoreDir } from '../test/daemon/daemon-process.js';
import { repoRoot } from '../test/support/built-cli.js';
import { ms, printTable } from './measure.js';

const CALLS = Number(process.env.OFFSHOOT_BENCH_MCP_PAIR_CALLS ?? 200);
// One list per this many forks: a list reads every branch, and the forks add a branch each.
const LIST_EVERY = 4;
const AT_REST = process.env.OFFSHOOT_BENCH_MCP_PAIR_AT_REST === '1';
const CHECKPOINTS = Number(process.env.OFFSHOOT_BENCH_MCP_PAIR_CHECKPOINTS ?? 0);

async function server(bundle: string, s: StoreDir, socket: string): Promise<Client> {
  const client = new Client({ name: 'offshoot-bench', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [bundle, '-store', s.store, 'mcp', '-socket', socket, '-reap-every', '0'],
      stderr: 'ignore',
    }),
  );
  await client.listTools();
  return client;
}

async function timed(c: Client, name: string, args: Record<string, unknown>): Promise<number> {
  const t0 = performance.now();
  const r = await c.callTool({ name, arguments: args });
  const took = performance.now() - t0;
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
  const via = (r.structuredContent as { via?: string }).via;
  if (name === 'offshoot_fork' && (via === 'daemon') === AT_REST)
    throw new Error(`the fork ${AT_REST ? 'rode a daemon' : 'did not ride the daemon'}`);
  return took;
}

function quantile(xs: readonly number[], q: number): number {
  return [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)] ?? Number.NaN;
}

/** Gives main a history: `n` checkpoints of one row each. */
function checkpointHistory(s: StoreDir, n: number): void {
  const path = s.cli(['checkout', 'bench']).stdout.trim();
  for (let i = 0; i < n; i++) {
    const db = openDatabase(path);
    db.exec('CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v BLOB)');
    db.prepare('INSERT INTO t(v) VALUES (randomblob(200))').run();
    db.close();
    const r = s.cli(['checkpoint', 'bench', `h${i}`]);
    if (r.code !== 0) throw new Error(`offshoot checkpoint: ${r.stderr}`);
  }
}

/**
 * Paired fork and list latency of the baseline build and this one, riding a daemon with a session on main (or, with
 * AT_REST, forking in process).
 */
export async function mcpPairBench(baseline: string): Promise<void> {
  const s = makeStoreDir();
  try {
    s.cli(['create', 'bench']);
    checkpointHistory(s, CHECKPOINTS);
    const d = AT_REST ? undefined : await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    const socket = d?.sock ?? s.file('no-daemon.sock');
    const sdk = d && (await connect(d.sock));
    const direct = d && (await connect(d.sock, { actor: 'agent' }));
    const sides = [
      { label: 'baseline', c: await server(baseline, s, socket), fork: [] as number[], list: [] as number[] },
      {
        label: 'this build',
        c: await server(join(repoRoot, 'packages/offshoot/dist/cli.cjs'), s, socket),
        fork: [] as number[],
        list: [] as number[],
      },
    ];
    const daemonFork: number[] = [];
    try {
      await sdk?.open('bench');
      let n = 0;
      for (let i = 0; i < CALLS; i++) {
        const order = i % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order)
          side.fork.push(await timed(side.c, 'offshoot_fork', { database: 'bench', new_branch: `f${n++}` }));
        if (i % LIST_EVERY === 0)
          for (const side of order) side.list.push(await timed(side.c, 'offshoot_list', { database: 'bench' }));
        if (direct === undefined) continue;
        const t0 = performance.now();
        await direct.fork('bench', 'main', `d${n++}`);
        daemonFork.push(performance.now() - t0);
      }
    } finally {
      for (const side of sides) await side.c.close();
      direct?.close();
      sdk?.close();
      await d?.stop();
    }
    const [base, mine] = sides as [(typeof sides)[0], (typeof sides)[0]];
    const ratio = (a: number[], b: number[]) =>
      quantile(
        b.map((x, i) => x / (a[i] ?? Number.NaN)),
        0.5,
      ).toFixed(2);
    const row = (what: string, xs: number[]) => [
      what,
      ms(quantile(xs, 0.25)),
      ms(quantile(xs, 0.5)),
      ms(quantile(xs, 0.75)),
    ];
    printTable(
      `mcp ${AT_REST ? 'at rest' : 'riding a daemon'}, main with ${CHECKPOINTS} checkpoints, paired call by call (${CALLS} forks, ${base.list.length} lists a side)`,
      ['measure', 'p25', 'p50', 'p75'],
      [
        row('offshoot_fork, baseline', base.fork),
        row('offshoot_fork, this build', mine.fork),
        row('offshoot_list, baseline', base.list),
        row('offshoot_list, this build', mine.list),
        ...(AT_REST ? [] : [row("the daemon's fork from a client", daemonFork)]),
      ],
    );
    console.log(
      `  median paired ratio this/baseline: fork ${ratio(base.fork, mine.fork)}, list ${ratio(base.list, mine.list)}`,
    );
  } finally {
    s.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const baseline = process.env.OFFSHOOT_BENCH_MCP_BASELINE;
  if (baseline === undefined || baseline === '') {
    console.error('mcp-pair-bench: set OFFSHOOT_BENCH_MCP_BASELINE to the cli.cjs of the build to compare with');
    process.exit(2);
  }
  await mcpPairBench(baseline);
}
