// Every page under docs/integrations/ opens with one install line pinning what it is tested with, and its quickstart,
// pasted into an empty directory after that line, prints what the page shows. Each line runs as written, with the
// docs' `/path/to/dist` replaced by a fresh make pack's folder (our packages are on no registry, so the pages name the
// packed tarballs and wheels by that path); with no index (offIndexEnv): pip's other wheels come from the wheel
// folder of the page's constraints file, npm's packages from its cache. The Python pages run in an empty venv of
// their own; the TypeScript pages on the pinned Node 22, the oldest major offshoot supports (the AI SDK 7 and
// Mastra 1.x declare Node >= 22 too), against a daemon the test starts with a database `app`, as their text asks.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Client, connect } from '@offshoot/client';
import { startDaemon } from '@offshoot/client/testkit';
import { offshootBin, repoRoot } from '../e2e/cli-harness.js';
import { type DocBlock, docBlocks } from '../e2e/doc-blocks.js';
import {
  betterSqlitePrebuilds,
  nodeDir,
  offIndexEnv,
  type Packed,
  packAll,
  unpack,
  runDocLine,
  skipUnlessFull,
  toolsBin,
  wheelFolder,
} from './pack-harness.js';

const PAGES = join(repoRoot, 'docs/integrations');

/** A TypeScript page: the file its text says to save the quickstart as, and what running it must leave. */
interface TsPage {
  file: string;
  check(client: Client, stdout: string): Promise<void>;
}

const TS_PAGES: Record<string, TsPage> = {
  'ai-sdk.md': {
    file: 'agent.mts',
    async check(client, stdout) {
      assert.equal(stdout, 'forked app@try-1\n');
      const fork = (await client.branches('app')).find((b) => b.branch === 'try-1');
      assert.equal(fork?.ttl, '24h0m0s', 'app@try-1 with a 24 h TTL, as the page says');
    },
  },
  'mastra.md': {
    file: 'run.mts',
    async check(client) {
      const tables = "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'mastra_workflow_snapshot'";
      assert.deepEqual((await client.query('app', 'run-1', tables, { at: 'ran' })).rows, [[1]], "Mastra's tables");
      assert.deepEqual((await client.query('app', 'main', tables)).rows, [[0]], 'main untouched');
      assert.deepEqual(await client.status(), [], 'no session left open');
    },
  },
};

/** A page's install line: its first block, one line that runs `pip install` or `npm install` (after `npm init`). */
function installLine(blocks: DocBlock[]): string | undefined {
  const first = blocks[0];
  if (first?.lang !== 'sh' || first.code.trim().split('\n').length !== 1) return undefined;
  return /^(pip install|npm install|npm init) /.test(first.code) ? first.code.trim() : undefined;
}

describe('every integration page runs as pasted, in an empty directory', { skip: skipUnlessFull }, () => {
  let packed: Packed;
  let tmp: string;
  let bin: string;
  const pages = readdirSync(PAGES)
    .filter((f) => f.endsWith('.md'))
    .sort();

  before(() => {
    packed = packAll();
    tmp = mkdtempSync(join(tmpdir(), 'offshoot-pages-'));
    bin = toolsBin(tmp);
  });
  after(() => {
    rmSync(tmp, { recursive: true, force: true });
    unpack(packed);
  });

  test('each page opens with one install line that pins every version it names', () => {
    const opening = pages.filter((p) => installLine(docBlocks(join(PAGES, p))) !== undefined);
    assert.deepEqual(opening, [
      'ai-sdk.md',
      'crewai.md',
      'evalite.md',
      'google-adk.md',
      'langgraph.md',
      'llama-index.md',
      'mastra.md',
      'openai-agents.md',
      'pydantic-evals.md',
    ]);
    for (const p of opening) {
      const specs = (installLine(docBlocks(join(PAGES, p))) ?? '')
        .replace(/^.*&& (?=(npm|pip) install )/, '')
        .split(/\s+/)
        .slice(2)
        .filter((s) => !s.startsWith('-') && !s.startsWith('/'));
      for (const s of specs)
        assert.match(s.replaceAll("'", ''), /^(@?[\w.-]+\/)?[\w.[\]-]+(==|@)\d[\w.]*$/, `${p}: ${s} is pinned`);
    }
  });

  for (const page of pages) {
    const blocks = docBlocks(join(PAGES, page));
    const line = installLine(blocks);
    if (line === undefined) continue;

    if (page === 'evalite.md') {
      test(`${page}: the install line into an empty project, the page's four files, then its run line`, () => {
        const work = join(tmp, 'evalite');
        mkdirSync(work);
        const env = offIndexEnv(tmp, '', {
          PATH: `${dirname(process.execPath)}:${bin}:${process.env.PATH ?? ''}`,
          NO_COLOR: '1',
          npm_config_better_sqlite3_local_prebuilds: betterSqlitePrebuilds(tmp, line),
        });
        runDocLine(line, packed, work, env);
        const files = blocks.filter((b) => b.lang === 'ts');
        assert.equal(files.length, 4);
        for (const b of files) writeFileSync(join(work, /^\/\/ ([\w.]+\.ts): /.exec(b.code)?.[1] ?? ''), b.code);
        const [, run] = blocks.filter((b) => b.lang === 'sh');
        const printed = runDocLine(run?.code ?? '', packed, work, env)
          .split('\n')
          .map((l) => l.trim());
        const shown = blocks.find((b) => b.lang === 'text')?.code ?? '';
        for (const l of shown.trimEnd().split('\n')) assert.ok(printed.includes(l.trim()), `prints ${l}`);
      });
      continue;
    }

    if (line.startsWith('pip ')) {
      test(`${page}: the install line into an empty venv, then the quickstart prints what the page shows`, () => {
        const [, quickstart, output] = blocks;
        assert.equal(quickstart?.lang, 'python');
        assert.equal(output?.lang, 'text');
        const name = page.replace(/\.md$/, '');
        const venv = join(tmp, `venv-${name}`);
        const work = join(tmp, name);
        mkdirSync(work);
        const made = spawnSync('python3', ['-m', 'venv', venv], { encoding: 'utf8' });
        assert.equal(made.status, 0, made.stderr);
        // CrewAI cannot share the other frameworks' pins (openai < 3): its wheels are its constraints file's.
        const wheels = wheelFolder(name === 'crewai' ? 'crewai' : 'main');
        const env = offIndexEnv(tmp, wheels, {
          PATH: `${join(venv, 'bin')}:${bin}:${process.env.PATH ?? ''}`,
          VIRTUAL_ENV: venv,
          CREWAI_DISABLE_TELEMETRY: 'true',
          OTEL_SDK_DISABLED: 'true',
        });
        try {
          runDocLine(line, packed, work, env);
          const run = spawnSync('python', ['-c', quickstart?.code ?? ''], {
            cwd: work,
            env,
            encoding: 'utf8',
            timeout: 300_000,
          });
          assert.equal(run.status, 0, `${page}:\n${run.stderr}`);
          assert.equal(run.stdout, output?.code, `${page} prints what it shows`);
        } finally {
          rmSync(venv, { recursive: true, force: true });
        }
      });
      continue;
    }

    test(`${page}: the install line into an empty project on Node 22, then the quickstart`, async () => {
      const spec = TS_PAGES[page];
      assert.ok(spec !== undefined, `${page}: a TypeScript page this test knows`);
      const quickstart = blocks.find((b) => b.lang === 'ts');
      const work = join(tmp, page.replace(/\.md$/, ''));
      mkdirSync(work);
      const env = offIndexEnv(tmp, '', {
        PATH: `${nodeDir(22)}:${bin}:${process.env.PATH ?? ''}`,
        MASTRA_TELEMETRY_DISABLED: '1',
      });
      runDocLine(line, packed, work, env);
      const daemon = await startDaemon({ bin: offshootBin });
      const client = await connect(daemon.sock);
      try {
        await client.create('app');
        writeFileSync(join(work, spec.file), quickstart?.code ?? '');
        const run = spawnSync('node', ['--import', 'tsx', spec.file], {
          cwd: work,
          env: { ...env, OFFSHOOT_SOCKET: daemon.sock },
          encoding: 'utf8',
          timeout: 300_000,
        });
        assert.equal(run.status, 0, `${page}:\n${run.stdout}\n${run.stderr}`);
        await spec.check(client, run.stdout);
      } finally {
        client.close();
        await daemon.stop();
      }
    });
  }
});
