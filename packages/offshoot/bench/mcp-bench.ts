import { pathToFileURL } from 'node:url';
import { openDatabase } from '../src/sqlite/sqlite-driver.js';
import { connect } from '@offshoot/client';
import { makeStoreDir, startDaemon, type StoreDir } from '../test/daemon/daemon-process.js';
import { offshootBin } from '../test/support/built-cli.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ms, percentile, printTable, timeSamples } from './measure.js';

const RUNS = Number(process.env.OFFSHOOT_BENCH_MCP_RUNS ?? 40);
/**
 * Untimed calls of each tool first: the goal is for a long-lived server, and its first calls also compile the
 * handlers' code.
 */
const WARMUP = Number(process.env.OFFSHOOT_BENCH_MCP_WARMUP ?? 10);
/** The goal for a fork's median through a long-lived `offshoot mcp`. */
const FORK_GOAL_MS = 5;

async function mcpClient(s: StoreDir, socket: string): Promise<Client> {
  const client = new Client({ name: 'offshoot-bench', version: '1.0.0' });
  await client.connect(
    new StdioClientTransport({
      command: offshootBin,
      args: ['-store', s.store, 'mcp', '-socket', socket, '-reap-every', '0'],
      stderr: 'ignore',
    }),
  );
  await client.listTools();
  return client;
}

async function call(c: Client, name: string, args: Record<string, unknown>): Promise<void> {
  const r = await c.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
}

/** Wall times of a tool's calls after its untimed warm-up calls; `run` is told the call's name-giving index. */
async function warmedSamples(run: (name: string) => Promise<unknown>, setup?: () => unknown): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) {
    setup?.();
    await run(`w${i}`);
  }
  return timeSamples(RUNS, (i) => run(String(i)), setup);
}

/** One row per tool: the median and p99 wall time of a tools/call round trip over stdio. */
async function toolRows(c: Client, label: string, tag: string, path: string): Promise<string[][]> {
  const list = await warmedSamples(() => call(c, 'offshoot_list', { database: 'bench' }));
  const fork = await warmedSamples((n) => call(c, 'offshoot_fork', { database: 'bench', new_branch: `${tag}-f${n}` }));
  const cp = await warmedSamples(
    (n) => call(c, 'offshoot_checkpoint', { database: 'bench', name: `${tag}-c${n}` }),
    () => {
      const db = openDatabase(path);
      db.prepare('INSERT INTO t(v) VALUES (randomblob(200))').run();
      db.close();
    },
  );
  const row = (tool: string, xs: number[]): string[] => [tool, label, ms(percentile(xs, 50)), ms(percentile(xs, 99))];
  return [
    row('offshoot_list', list),
    [...row('offshoot_fork', fork), percentile(fork, 50) <= FORK_GOAL_MS ? 'met' : 'not met'],
    row('offshoot_checkpoint (one changed row)', cp),
  ];
}

/** Tool latency over stdio: list, fork and checkpoint at rest, then riding a daemon with a session on main. */
export async function mcpBench(): Promise<void> {
  const s = makeStoreDir();
  const rows: string[][] = [];
  try {
    s.cli(['create', 'bench']);
    const rest = s.cli(['checkout', 'bench']).stdout.trim();
    const db = openDatabase(rest);
    db.exec('CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB)');
    db.close();
    s.cli(['checkpoint', 'bench', 'schema']);
    const atRest = await mcpClient(s, s.file('none.sock'));
    try {
      rows.push(...(await toolRows(atRest, 'at rest', 'rest', rest)));
    } finally {
      await atRest.close();
    }
    const d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
    const sdk = await connect(d.sock);
    try {
      const live = (await sdk.open('bench')).path;
      const riding = await mcpClient(s, d.sock);
      try {
        rows.push(...(await toolRows(riding, 'riding a daemon', 'live', live)));
      } finally {
        await riding.close();
      }
    } finally {
      sdk.close();
      await d.stop();
    }
    printTable(
      `mcp tools over stdio (${RUNS} calls each after ${WARMUP} untimed; goal: a fork's p50 ≤ ${FORK_GOAL_MS} ms)`,
      ['tool', 'mode', 'p50', 'p99', 'goal'],
      rows,
    );
  } finally {
    s.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await mcpBench();
