import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ensureBuilt } from '../support/built-cli.js';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const bin = join(repoRoot, 'offshoot');

/** Every command the CLI must keep, with the flags its help must mention. */
const COMMANDS: Array<[string, string[]]> = [
  ['init', ['--layout']],
  ['create', ['--from']],
  ['checkout', ['--at', '--read-only', '--force']],
  ['path', []],
  ['export', ['--force']],
  ['diff', ['--summary', '--sql']],
  ['checkpoint', ['--meta']],
  ['fork', ['--at', '--ttl', '--meta']],
  ['touch', ['--ttl']],
  ['rollback', ['--to', '--materialize']],
  ['promote', ['--onto', '--force', '--materialize']],
  ['compact', []],
  ['destroy', ['--force']],
  ['protect', []],
  ['unprotect', []],
  ['status', ['--ro-cache-budget']],
  ['gc', ['--grace']],
  ['upgrade', ['--to']],
  ['lease list', []],
  ['lease acquire', ['--ttl']],
  ['lease release', ['--force']],
  [
    'serve',
    [
      '--socket',
      '--flush-every',
      '--snapshot-every',
      '--reap-every',
      '--gc-grace',
      '--ro-cache-budget',
      '--http',
      '--token',
      '--http-allow-non-loopback',
    ],
  ],
  ['session open', ['--socket']],
  ['session flush', ['--socket', '--meta']],
  ['session status', ['--socket']],
  ['session close', ['--socket']],
  ['session shutdown', ['--socket']],
  ['session dbs', ['--socket']],
  ['session branches', ['--socket']],
  ['version', []],
  ['ui', ['--listen', '--token', '--allow-non-loopback']],
  ['mcp', ['--allow-force', '--default-ttl', '--socket']],
];

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let tmp: string;
let store: string;

function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.OFFSHOOT_STORE;
  delete env.OFFSHOOT_DEBUG;
  return env;
}

function run(args: string[]): Run {
  const r = spawnSync(bin, args, { cwd: tmp, env: cleanEnv(), encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function runAsync(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(bin, args, { cwd: tmp, env: cleanEnv(), encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

function stderrLines(r: Run): string[] {
  return r.stderr.split('\n').filter((l) => l !== '');
}

function assertOneCleanErrorLine(r: Run): void {
  assert.equal(stderrLines(r).length, 1, `expected one stderr line, got:\n${r.stderr}`);
  assert.match(r.stderr, /^offshoot: /);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack frames for a user error');
}

before(() => {
  ensureBuilt();
  tmp = mkdtempSync(join(tmpdir(), 'offshoot-'));
  store = join(tmp, 'store');
});

after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('usage and help', () => {
  test('bare offshoot prints usage on stderr and exits 2; --help prints it on stdout and exits 0', () => {
    const bare = run([]);
    assert.equal(bare.code, 2);
    assert.equal(bare.stdout, '');
    for (const [name] of COMMANDS) assert.ok(bare.stderr.includes(name), `usage lists ${name}`);
    const help = run(['--help']);
    assert.equal(help.code, 0);
    for (const [name] of COMMANDS) assert.ok(help.stdout.includes(name), `usage lists ${name}`);
    assert.equal(help.stderr, '');
  });

  test('--version prints what version prints', () => {
    const v = run(['version']);
    for (const flag of ['--version', '-version']) {
      const r = run([flag]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, v.stdout);
      assert.match(r.stdout, /^offshoot \d+\.\d+\.\d+ node/);
    }
  });

  test('every help page carries its examples once, in one examples section', async () => {
    const runs = await Promise.all(COMMANDS.map(([name]) => runAsync([...name.split(' '), '--help'])));
    for (const [i, [name]] of COMMANDS.entries()) {
      const page = runs[i]?.stdout ?? '';
      assert.equal(page.match(/^examples?:/gim)?.length, 1, `${name} --help has one examples section:\n${page}`);
      const examples = page.split('\nexamples:\n')[1]?.split('\n\n')[0] ?? '';
      assert.match(examples, new RegExp(`^  .*offshoot ${name}\\b`, 'm'), `${name} --help has an example of itself`);
      const lines = page.split('\n').map((l) => l.trim());
      for (const e of examples.split('\n'))
        assert.equal(lines.filter((l) => l === e.trim()).length, 1, `${name} --help repeats ${e.trim()}`);
    }
  });

  test('--help for every command exits 0 and mentions its flags', async () => {
    const runs = await Promise.all(COMMANDS.map(([name]) => runAsync([...name.split(' '), '--help'])));
    COMMANDS.forEach(([name, flags], i) => {
      const r = runs[i] as Run;
      assert.equal(r.code, 0, `${name} --help: ${r.stderr}`);
      assert.ok(r.stdout.startsWith(`usage: offshoot ${name}`), `${name} help starts with its usage line`);
      for (const f of flags) assert.ok(r.stdout.includes(f), `${name} --help mentions ${f}`);
      assert.ok(r.stdout.includes('--json'), `${name} --help lists the global flags`);
    });
  });

  test('-h and -help work anywhere on the line, even after arguments', async () => {
    const cases = [
      ['fork', 'app', '-h'],
      ['-help', 'touch'],
      ['lease', '--help'],
    ];
    const runs = await Promise.all(cases.map((args) => runAsync(args)));
    runs.forEach((r, i) => {
      assert.equal(r.code, 0, cases[i]?.join(' '));
      assert.match(r.stdout, /^usage: offshoot /);
    });
  });

  test('an unknown command is a usage error (exit 2) with one stderr line', () => {
    const r = run(['frobnicate']);
    assert.equal(r.code, 2);
    assertOneCleanErrorLine(r);
    assert.match(r.stderr, /unknown command "frobnicate"/);
    assert.equal(r.stdout, '');
  });

  test('unknown flags, missing values and wrong arity are usage errors', async () => {
    const cases = [
      ['status', '--bogus'],
      ['fork', 'app', 'x', '--at'],
      ['fork', 'app', 'x', '--ttl', '--at', 'c'],
      ['destroy', 'app', '--force=yes'],
      ['checkout'],
      ['path', 'a', 'b'],
      ['lease'],
      ['--bogus'],
    ];
    const runs = await Promise.all(cases.map((args) => runAsync(['-store', store, ...args])));
    runs.forEach((r, i) => {
      assert.equal(r.code, 2, `${cases[i]?.join(' ')}: ${r.stderr}`);
      assertOneCleanErrorLine(r);
    });
  });

  test('version prints offshoot <version> node<version> <os>/<arch>', () => {
    const r = run(['version']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^offshoot \d+\.\d+\.\d+\S* node\d+\.\d+\.\d+ [a-z0-9]+\/[a-z0-9]+\n$/);
    const j = JSON.parse(run(['version', '--json']).stdout) as { version: string; node: string };
    assert.equal(j.node, process.versions.node);
  });
});

describe('against a store', () => {
  test('a missing store exits 3 and the hint points at offshoot init', () => {
    const r = run(['-store', join(tmp, 'nowhere'), 'status']);
    assert.equal(r.code, 3);
    assertOneCleanErrorLine(r);
    const j = run(['-store', join(tmp, 'nowhere'), '--json', 'status']);
    assert.equal(j.code, 3);
    const err = (JSON.parse(j.stderr) as { error: { code: string; hint: string } }).error;
    assert.equal(err.code, 'NOT_INITIALIZED');
    assert.match(err.hint, /offshoot .*init/);
  });

  test('init, then -store before and after the verb, in every spelling', async () => {
    const init = run(['-store', store, 'init']);
    assert.equal(init.code, 0, init.stderr);
    assert.equal(init.stdout, `initialized store at ${store}\n`);
    assert.equal(run(['init', '--store', store]).code, 4, 'a second init is a conflict');
    assert.equal(run(['create', 'app', '-store', store]).code, 0);
    const cases = [
      ['-store', store, 'status'],
      ['status', '-store', store],
      [`--store=${store}`, 'status'],
      ['status', `-store=${store}`],
    ];
    const runs = await Promise.all(cases.map((args) => runAsync(args)));
    runs.forEach((r, i) => {
      assert.equal(r.code, 0, `${cases[i]?.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^app@main state=\S+ storage=materialized txid=1 checkpoints=\[init\] protected/m);
    });
  });

  test('a bad name exits 2 with one stderr line, before the store is even opened', () => {
    for (const s of [store, join(tmp, 'nowhere')]) {
      const r = run(['-store', s, 'create', 'Bad_Name']);
      assert.equal(r.code, 2);
      assertOneCleanErrorLine(r);
      assert.match(r.stderr, /invalid database name "Bad_Name"/);
    }
  });

  test('-flag, --flag and --flag=value are the same flag', () => {
    const spellings = [
      ['f1', '-ttl', '1h'],
      ['f2', '--ttl', '1h'],
      ['f3', '--ttl=1h'],
      ['f4', '-ttl=1h'],
    ];
    for (const [branch, ...flag] of spellings) {
      const r = run(['-store', store, 'fork', 'app', branch as string, ...flag]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `forked app@main -> app@${branch} at txid 1\n`);
    }
    const status = run(['-store', store, 'status']).stdout;
    for (const [branch] of spellings) assert.match(status, new RegExp(`^app@${branch} .* ttl=1h0m0s remaining=`, 'm'));
    const at = run(['-store', store, 'fork', 'app', 'f5', '-at', 'init', '-meta', 'k=v', '--meta', 'x=y']);
    assert.equal(at.code, 0, at.stderr);
  });

  test('a dash-leading value goes to its flag and is judged there', () => {
    const r = run(['-store', store, 'fork', 'app', 'neg', '--ttl', '-5s']);
    assert.equal(r.code, 2);
    assertOneCleanErrorLine(r);
    assert.match(r.stderr, /ttl "-5s"/);
  });

  test('checkpoint reports, then merges the chain it grew: no checkpoint merges inline', () => {
    // Merged segments need layout 3; the shared store is at the default layout.
    const store = join(tmp, 'merging');
    assert.equal(run(['-store', store, 'init', '--layout', '3']).code, 0);
    assert.equal(run(['-store', store, 'create', 'chainy']).code, 0);
    const co = run(['-store', store, 'checkout', 'chainy']).stdout.trim();
    spawnSync('sqlite3', [co, 'CREATE TABLE t(x)']);
    for (let i = 0; i < 8; i++) {
      spawnSync('sqlite3', [co, `INSERT INTO t VALUES (${i})`]);
      const r = run(['-store', store, '--json', 'checkpoint', 'chainy', `c${i}`]);
      assert.equal(r.code, 0, r.stderr);
      const doc = JSON.parse(r.stdout) as { kind: string; merged?: unknown };
      assert.equal(doc.kind, 'segment');
      assert.equal(doc.merged, undefined, `checkpoint ${i} wrote only its own segment`);
    }
    const objects = readdirSync(join(store, 'data'), { recursive: true, encoding: 'utf8' });
    const merged = objects.filter((f) => {
      const m = /segment-([0-9a-f]{16})-([0-9a-f]{16})\.ltx$/.exec(f);
      return m !== null && m[1] !== m[2];
    });
    assert.ok(merged.length > 0, `a merge ran after a checkpoint: ${objects.join(' ')}`);
    const out = join(tmp, 'chainy.db');
    assert.equal(run(['-store', store, 'export', 'chainy@main@c2', out]).code, 0);
    assert.equal(
      spawnSync('sqlite3', [out, 'SELECT group_concat(x) FROM t'], { encoding: 'utf8' }).stdout.trim(),
      '0,1,2',
    );
  });

  test('--json prints one parseable document with snake_case keys', () => {
    const r = run(['-store', store, '--json', 'status']);
    assert.equal(r.code, 0, r.stderr);
    const doc = JSON.parse(r.stdout) as { branches: Array<Record<string, unknown>>; ro_cache: { entries: number } };
    const main = doc.branches.find((b) => b.db === 'app' && b.branch === 'main');
    assert.ok(main, 'app@main is listed');
    assert.equal(main.checked_out, false);
    assert.equal(main.protected, true);
    assert.equal(typeof doc.ro_cache.entries, 'number');
    const f5 = doc.branches.find((b) => b.branch === 'f5');
    assert.deepEqual(f5?.meta, { k: 'v', x: 'y' });
  });

  test('--json errors are one JSON line on stderr, and exit codes follow the error class', () => {
    const bad = run(['-store', store, 'create', 'Bad', '--json']);
    assert.equal(bad.code, 2);
    assert.equal(stderrLines(bad).length, 1);
    const err = (JSON.parse(bad.stderr) as { error: { code: string; message: string; retryable: boolean } }).error;
    assert.equal(err.code, 'INVALID_NAME');
    assert.equal(err.retryable, false);
    assert.equal(bad.stdout, '');

    assert.equal(run(['-store', store, 'fork', 'app', 'x', '--at', 'nope']).code, 3, 'unknown checkpoint: not found');
    assert.equal(run(['-store', store, 'create', 'app']).code, 4, 'existing database: conflict');
    const prot = run(['-store', store, 'destroy', 'app']);
    assert.equal(prot.code, 5, 'protected main');
    assertOneCleanErrorLine(prot);
  });

  test('a lease held by another process is busy (exit 6); --quiet drops the note', () => {
    const first = run(['-store', store, 'lease', 'acquire', 'app@f1', '--ttl', '1m']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^acquired app@f1 as \S+ \(epoch \d+\) until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n$/);
    assert.match(first.stderr, /note: .*expires unless/);
    const second = run(['-store', store, 'lease', 'acquire', 'app@f1']);
    assert.equal(second.code, 6, second.stderr);
    assertOneCleanErrorLine(second);
    assert.match(run(['-store', store, 'lease', 'list']).stdout, /^app@f1 held by \S+ epoch=\d+ until /m);
    assert.equal(run(['-store', store, 'lease', 'release', 'app@f1']).code, 0);
    const quiet = run(['-store', store, '--quiet', 'lease', 'acquire', 'app@f2']);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '');
  });
});
