import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

// Each runner's fixture project runs for real, with parallel workers: one daemon and one seed per run, a fork per
// test, teardown destroying every fork. Their reports say which worker ran what on which branch.
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const BIN = join(ROOT, 'offshoot');
const RUNNERS = join(ROOT, 'packages/client/test/runners');
const bin = (name: string): string => join(ROOT, 'node_modules/.bin', name);

interface Report {
  title: string;
  worker: string;
  pid: number;
  branch: string;
  db: string;
  labels: string;
}

const CASES: { name: string; cmd: string[]; env?: Record<string, string>; workers: 'pids' | 'threads' | 'ids' }[] = [
  {
    name: 'node:test (worker processes)',
    cmd: [process.execPath, join(RUNNERS, 'node-test/run.mjs')],
    workers: 'pids',
  },
  {
    name: 'vitest, threads pool',
    cmd: [bin('vitest'), 'run', '--config', join(RUNNERS, 'vitest/vitest.config.ts'), '--pool=threads'],
    workers: 'threads',
  },
  {
    name: 'vitest, forks pool',
    cmd: [bin('vitest'), 'run', '--config', join(RUNNERS, 'vitest/vitest.config.ts'), '--pool=forks'],
    workers: 'pids',
  },
  {
    name: 'jest workers',
    cmd: [bin('jest'), '--config', join(RUNNERS, 'jest/jest.config.mjs'), '--ci'],
    env: { NODE_OPTIONS: '--experimental-vm-modules' },
    workers: 'pids',
  },
];

function run(cmd: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const [exe, ...args] = cmd;
  const child = spawn(exe ?? '', args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (b: Buffer) => {
    output += b.toString('utf8');
  });
  child.stderr.on('data', (b: Buffer) => {
    output += b.toString('utf8');
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, output })));
}

describe('the testkit under each runner, in parallel workers', { timeout: 240_000 }, () => {
  for (const c of CASES) {
    test(c.name, async () => {
      const tmp = mkdtempSync(join(tmpdir(), 'offshoot-run-'));
      try {
        const report = join(tmp, 'report');
        mkdirSync(report);
        const workdir = join(tmp, 'd');
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          ...c.env,
          OFFSHOOT_BIN: BIN,
          OFFSHOOT_RUNNER_WORKDIR: workdir,
          OFFSHOOT_RUNNER_REPORT: report,
        };
        // The fixture's own node:test must not think it runs inside this one.
        delete env['NODE_TEST_CONTEXT'];
        const { code, output } = await run(
          c.name.startsWith('jest') ? [...c.cmd, '--cacheDirectory', join(tmp, 'jest-cache')] : c.cmd,
          env,
        );
        assert.equal(code, 0, output);

        const reports = readdirSync(report).map((f) => JSON.parse(readFileSync(join(report, f), 'utf8')) as Report);
        assert.deepEqual(reports.map((r) => r.title).sort(), ['one-1', 'one-2', 'one-3', 'two-1', 'two-2', 'two-3']);
        for (const r of reports) assert.equal(r.labels, `a,b,${r.title}`, 'a fork sees the seed and its own row only');
        assert.equal(new Set(reports.map((r) => r.branch)).size, 6, 'every test had its own branch');
        assert.ok(new Set(reports.map((r) => r.worker)).size >= 2, `ran in parallel workers: ${output}`);
        const pids = new Set(reports.map((r) => r.pid)).size;
        if (c.workers === 'threads') assert.equal(pids, 1, 'threads share one process');
        if (c.workers === 'pids') assert.ok(pids >= 2, 'workers are separate processes');

        const status = JSON.parse(
          execFileSync(BIN, ['-store', join(workdir, 'store'), '--json', 'status', 'eval-runner'], {
            encoding: 'utf8',
          }),
        ) as { branches: { branch: string }[] };
        assert.deepEqual(
          status.branches.map((b) => b.branch),
          ['main'],
          'teardown destroyed every fork',
        );
      } finally {
        rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
});
