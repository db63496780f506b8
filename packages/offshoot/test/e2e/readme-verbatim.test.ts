// What a new user copies runs as written: every shell block of the README and of docs/*.md in order, in a fresh
// directory with `offshoot` on PATH (a block that cannot run here carries a visible not-run marker with its reason),
// the README's Python snippet against the daemon its blocks started, its host config started the way an MCP host
// starts a server, `make demo`'s script piped, and the root package installed and uninstalled by its own name.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { until } from '../daemon/daemon-process.js';
import { baseEnv, ensureBuilt, offshootBin, repoRoot } from './cli-harness.js';
import { type DocBlock, docBlocks, SHELL_LANGS } from './doc-blocks.js';
import { hostHandshake } from './mcp-host.js';

const README = join(repoRoot, 'README.md');
const DOCS = join(repoRoot, 'docs');

/** The shell blocks of a file that the docs test runs: every one without a not-run marker. */
function runnable(path: string): DocBlock[] {
  return docBlocks(path).filter((b) => SHELL_LANGS.has(b.lang) && b.notRun === undefined);
}

interface BlocksRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The process group of the run: what a block started in the background (`offshoot serve &`) is still in it. */
  group: number;
}

/** Runs the blocks one after another in one bash, as pasted into a terminal, failing at the first failing command. */
function runBlocks(blocks: DocBlock[], cwd: string, env: NodeJS.ProcessEnv): Promise<BlocksRun> {
  const child: ChildProcess = spawn('bash', ['-e', '-c', blocks.map((b) => b.code).join('\n')], {
    cwd,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  // 'exit', not 'close': a daemon a block left running keeps the pipes open.
  return new Promise((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr, group: child.pid ?? 0 })),
  );
}

function groupAlive(group: number): boolean {
  try {
    process.kill(-group, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops what the blocks left running (a daemon shuts down cleanly on SIGTERM) and waits until it is gone. */
async function stopGroup(group: number): Promise<void> {
  if (group <= 0 || !groupAlive(group)) return;
  process.kill(-group, 'SIGTERM');
  await until(() => !groupAlive(group), 'the processes the doc blocks started to exit', 60_000);
}

describe('copied as written', { timeout: 600_000 }, () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;

  before(() => {
    ensureBuilt();
    dir = mkdtempSync(join(tmpdir(), 'offshoot-'));
    for (const d of ['bin', 'tmp', 'cache']) mkdirSync(join(dir, d));
    symlinkSync(offshootBin, join(dir, 'bin', 'offshoot'));
    // `claude mcp add` runs through a stand-in that starts the server as Claude Code would (see claude-stand-in.ts).
    const tsx = fileURLToPath(import.meta.resolve('tsx'));
    const standIn = fileURLToPath(new URL('./claude-stand-in.ts', import.meta.url));
    writeFileSync(
      join(dir, 'bin', 'claude'),
      `#!/bin/sh\nexec '${process.execPath}' --import '${tsx}' '${standIn}' "$@"\n`,
      { mode: 0o755 },
    );
    env = baseEnv({
      PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}`,
      TMPDIR: join(dir, 'tmp'),
      XDG_CACHE_HOME: join(dir, 'cache'),
    });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the README blocks run in order as pasted, its Python and host config included, and end where they say', async () => {
    const work = join(dir, 'readme');
    mkdirSync(work);
    const blocks = docBlocks(README);
    const shell = runnable(README);
    assert.deepEqual(
      shell.map((b) => b.code.split('\n')[0]?.split('#')[0]?.trim()),
      [
        'offshoot -store ./.offshoot init',
        'offshoot serve -socket ./o.sock &',
        'claude mcp add offshoot -- offshoot -store ./.offshoot mcp',
      ],
      'the quickstart, the daemon and the Claude Code blocks run',
    );
    const r = await runBlocks(shell, work, env);
    try {
      assert.equal(r.code, 0, `the README blocks failed:\n${r.stdout}\n${r.stderr}`);
      assert.match(r.stdout, /claude stand-in: offshoot -store \.\/\.offshoot mcp: \d+ tools/);
      assert.match(shell[0]?.code ?? '', /--to promote\s+#.*checkpoint/, 'the rollback line says what "promote" names');

      const python = blocks.filter((b) => b.lang === 'python');
      assert.equal(python.length, 1);
      const py = spawnSync('python3', ['-c', python[0]?.code ?? ''], {
        cwd: work,
        env: { ...env, PYTHONPATH: join(repoRoot, 'python/offshoot/src') },
        encoding: 'utf8',
      });
      assert.equal(py.status, 0, `the README's Python failed:\n${py.stderr}`);

      const status = spawnSync('offshoot', ['status', '--json'], { cwd: work, env, encoding: 'utf8' });
      const branches = (
        JSON.parse(status.stdout) as { branches: Array<{ db: string; branch: string; checkpoints: string[] }> }
      ).branches;
      const cps = new Map(branches.map((b) => [`${b.db}@${b.branch}`, b.checkpoints]));
      for (const want of ['app@main', 'legacy@main', 'app@main-pre-rollback', 'app@attempt-2'])
        assert.ok(cps.has(want), want);
      assert.ok(cps.get('app@main')?.includes('tests-pass'), 'the daemon block flushed tests-pass on main');
      assert.ok(cps.get('app@attempt-2')?.includes('tests-pass'), 'the Python snippet flushed tests-pass on its fork');

      const configs = blocks.filter((b) => b.lang === 'json' && b.code.includes('mcpServers'));
      assert.equal(configs.length, 1);
      const server = (
        JSON.parse(configs[0]?.code ?? '') as { mcpServers: Record<string, { command: string; args: string[] }> }
      ).mcpServers.offshoot;
      assert.ok(server !== undefined);
      const view = await hostHandshake(server.command, server.args, { cwd: work, env });
      assert.ok(view.tools >= 7, `${view.tools} tools`);
      assert.match(view.listText, /app@main/);
    } finally {
      await stopGroup(r.group);
    }
  });

  const docs = readdirSync(DOCS).filter((f) => f.endsWith('.md'));
  for (const doc of docs.filter((d) => runnable(join(DOCS, d)).length > 0)) {
    test(`docs/${doc}: its shell blocks run in order, as pasted`, async () => {
      const work = join(dir, doc);
      mkdirSync(work);
      const r = await runBlocks(runnable(join(DOCS, doc)), work, env);
      try {
        assert.equal(r.code, 0, `docs/${doc} blocks failed:\n${r.stdout}\n${r.stderr}`);
        // The MCP server the daemon block adds rides the session the block opened.
        if (doc === 'mcp.md') assert.match(r.stdout, /-socket \.\/o\.sock: \d+ tools, daemon sessions 1/);
      } finally {
        await stopGroup(r.group);
      }
    });
  }

  test('a shell block left out of these runs says why, in the doc source', () => {
    for (const path of [README, ...docs.map((d) => join(DOCS, d))]) {
      for (const b of docBlocks(path).filter((x) => SHELL_LANGS.has(x.lang) && x.notRun !== undefined))
        assert.ok((b.notRun ?? '').length > 10, `${path}:${b.line} says why it is not run`);
    }
  });

  test('the demo prints no escape codes when piped', () => {
    const r = spawnSync(join(repoRoot, 'scripts/demo.sh'), [], { env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /demo done/);
    assert.ok(!(r.stdout + r.stderr).includes(String.fromCharCode(27)), 'no ESC byte in the output');
  });

  test('npm install -g . puts offshoot on PATH and npm uninstall -g offshoot removes it', () => {
    const prefix = join(dir, 'prefix');
    const npm = (args: string[]) =>
      spawnSync('npm', [...args, '--prefix', prefix, '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
        cwd: repoRoot,
        env: { ...env, npm_config_cache: join(dir, 'npm-cache') },
        encoding: 'utf8',
      });
    const installed = npm(['install', '-g', '.']);
    assert.equal(installed.status, 0, installed.stderr);
    assert.ok(existsSync(join(prefix, 'bin', 'offshoot')), 'installed the offshoot command');
    const removed = npm(['uninstall', '-g', 'offshoot']);
    assert.equal(removed.status, 0, removed.stderr);
    assert.ok(!existsSync(join(prefix, 'bin', 'offshoot')), 'uninstall by name removed the command');
  });
});
