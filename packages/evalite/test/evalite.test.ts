// withFork and offshootSetup under the real evalite CLI (which runs on Vitest): the example's three items each run in
// a fork of one seed and are destroyed after; with keep, each item's fork stays with its result checkpointed.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { type Client, connect } from '@offshoot/client';
import { startDaemon, type TestDaemon } from '@offshoot/client/testkit';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const OFFSHOOT_BIN = join(ROOT, 'offshoot');
const EVALITE = join(ROOT, 'node_modules/.bin/evalite');
const EXAMPLE = join(ROOT, 'examples/evalite-migrations');

interface EvaliteReport {
  evals: Array<{
    name: string;
    averageScore: number;
    results: Array<{ input: unknown; output: unknown; status: string; scores: Array<{ score: number }> }>;
  }>;
}

/** Runs a shell script in `cwd` against the daemon at `sock` (npx never reaches the network). */
function shell(script: string, sock: string, cwd: string) {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
    cwd,
    env: { ...process.env, OFFSHOOT_BIN, OFFSHOOT_SOCKET: sock, NO_COLOR: '1', npm_config_offline: 'true' },
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
  return new Promise<{ code: number | null; out: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, out })),
  );
}

/** Runs `evalite run` in `cwd` against the daemon at `sock`; resolves with its exit code, output and JSON report. */
function evaliteRun(cwd: string, sock: string, outDir: string) {
  const outputPath = join(outDir, `${Date.now()}.json`);
  const child = spawn(EVALITE, ['run', '--outputPath', outputPath], {
    cwd,
    env: { ...process.env, OFFSHOOT_BIN, OFFSHOOT_SOCKET: sock, NO_COLOR: '1' },
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
  child.stderr.on('data', (b: Buffer) => (out += b.toString('utf8')));
  return new Promise<{ code: number | null; out: string; report: () => EvaliteReport }>((resolve) =>
    child.once('close', (code) =>
      resolve({ code, out, report: () => JSON.parse(readFileSync(outputPath, 'utf8')) as EvaliteReport }),
    ),
  );
}

describe('evalite with a fork per data item', { timeout: 300_000 }, () => {
  let daemon: TestDaemon;
  let client: Client;
  const out = mkdtempSync(join(tmpdir(), 'offshoot-evalite-'));

  before(async () => {
    process.env['OFFSHOOT_BIN'] = OFFSHOOT_BIN;
    daemon = await startDaemon();
    client = await connect(daemon.sock);
  });
  after(async () => {
    client.close();
    await daemon.stop();
    rmSync(out, { recursive: true, force: true });
  });

  test("the page's files are the example's, and its run line there prints what the page shows", async () => {
    const page = readFileSync(join(ROOT, 'docs/integrations/evalite.md'), 'utf8');
    const blocks = [...page.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].map(([, lang, code]) => ({ lang, code }));
    const files = blocks.filter((b) => b.lang === 'ts' && /^\/\/ [\w.]+\.ts: /.test(b.code ?? ''));
    assert.deepEqual(
      files.map((b) => /^\/\/ ([\w.]+\.ts): /.exec(b.code ?? '')?.[1]),
      ['vitest.config.ts', 'offshoot.setup.ts', 'evalite.config.ts', 'migrations.eval.ts'],
    );
    for (const b of files) {
      const name = /^\/\/ ([\w.]+\.ts): /.exec(b.code ?? '')?.[1] ?? '';
      assert.equal(b.code, readFileSync(join(EXAMPLE, name), 'utf8'), `${name} on the page is the example's`);
    }
    const [, run] = blocks.filter((b) => b.lang === 'sh');
    const shown = blocks.find((b) => b.lang === 'text')?.code ?? '';
    const r = await shell(run?.code ?? '', daemon.sock, EXAMPLE);
    assert.equal(r.code, 0, r.out);
    const printed = r.out.split('\n').map((l) => l.trim());
    for (const line of shown.trimEnd().split('\n'))
      assert.ok(printed.includes(line.trim()), `prints ${line}\n${r.out}`);
    const branches = await client.branches('eval-orders');
    assert.deepEqual(
      branches.map((b) => b.branch),
      ['main'],
      'the forks were destroyed',
    );
    assert.ok(branches[0]?.checkpoints.includes('seed'));
    assert.deepEqual(await client.status(), [], 'no session left open');
  });

  test('examples/evalite-migrations: each item saw the seed, not the others, and scored', async () => {
    const r = await evaliteRun(EXAMPLE, daemon.sock, out);
    assert.equal(r.code, 0, r.out);
    const [orders] = r.report().evals;
    assert.equal(orders?.averageScore, 1, r.out);
    assert.equal(orders?.results.length, 3);
    for (const res of orders?.results ?? []) {
      assert.equal((res.output as { before: number }).before, 3, 'each item saw the seed, not the others');
    }
  });

  test('keep: every item and trial keeps its fork, sessions closed, the result checkpointed', async () => {
    const r = await evaliteRun(join(ROOT, 'packages/evalite/test/keep-fixture'), daemon.sock, out);
    assert.equal(r.code, 0, r.out);
    assert.equal(r.report().evals[0]?.averageScore, 1, r.out);
    const forks = (await client.branches('eval-kept')).filter((b) => b.branch !== 'main');
    assert.equal(forks.length, 4, forks.map((b) => b.branch).join(' '));
    for (const f of forks) {
      assert.match(f.branch, /^t-[a-z0-9-]+-kept-/);
      assert.ok(f.checkpoints.includes('result'), `${f.branch} has its result`);
      assert.equal(f.ttl, '2h0m0s');
    }
    const values = await Promise.all(
      forks.map(
        async (f) =>
          (await client.query('eval-kept', f.branch, "SELECT group_concat(x, ',') FROM t", { at: 'result' }))
            .rows[0]?.[0],
      ),
    );
    assert.deepEqual(values.sort(), ['0,1', '0,1', '0,2', '0,2']);
    assert.deepEqual(await client.status(), []);
  });
});
