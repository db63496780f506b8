// The durable writes of a fork on a local store, counted and ordered by strace on a real `offshoot fork` process: each
// object's temp file is fsynced, the base pointers and then the refs are linked, and only then is every directory
// they touched synced, each once, all in one round (a crash in it may leave a torn fork: torn-fork.test.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { makeStoreDir, type StoreDir } from '../daemon/daemon-process.js';
import { runSql } from './sqlite-cli.js';

// Under CI=true a missing strace is a failure (scripts/strace-env.sh installs it), never a skip.
const traced = spawnSync('strace', ['-qq', '-e', 'trace=fsync', 'true']).status === 0;
if (!traced && process.env.CI === 'true') throw new Error('strace is missing: run scripts/strace-env.sh');
const bin = fileURLToPath(new URL('../../../../offshoot', import.meta.url));

/** A store write strace saw, in the order the calls started: a link into place, or an fsync of a path. */
type Step = { kind: 'link'; to: string } | { kind: 'fsync'; path: string };

/** Runs the CLI under strace and returns its links and fsyncs under the store, paths relative to it. */
function traceCli(s: StoreDir, args: string[], name: string): Step[] {
  const out = s.file(name);
  const r = spawnSync(
    'strace',
    ['-f', '-qq', '-y', '-e', 'trace=fsync,fdatasync,link', '-o', out, bin, '-store', s.store, ...args],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  const steps: Step[] = [];
  const rel = (p: string): string | undefined => {
    const x = path.relative(s.store, p);
    return x.startsWith('..') ? undefined : x;
  };
  for (const line of readFileSync(out, 'utf8').split('\n')) {
    const linked = /\blink\("[^"]*", "([^"]*)"/.exec(line);
    const synced = /\bf(?:data)?sync\(\d+<([^>]*)>/.exec(line);
    const p = rel(linked?.[1] ?? synced?.[1] ?? '/');
    if (p === undefined) continue;
    if (linked) steps.push({ kind: 'link', to: p });
    else if (synced) steps.push({ kind: 'fsync', path: p });
  }
  return steps;
}

/** The store's directory syncs, its file syncs, and the index of the last link among steps. */
function split(steps: Step[]): { dirs: string[]; files: string[]; lastLink: number; firstDirSync: number } {
  const isDir = (p: string) => p === 'data' || /^data\/[0-9a-f]{32}$/.test(p) || /^refs\/[^/]+$/.test(p);
  const dirs = steps.flatMap((x) => (x.kind === 'fsync' && isDir(x.path) ? [x.path] : []));
  const files = steps.flatMap((x) => (x.kind === 'fsync' && !isDir(x.path) ? [x.path] : []));
  const lastLink = steps.map((x) => x.kind).lastIndexOf('link');
  const firstDirSync = steps.findIndex((x) => x.kind === 'fsync' && isDir(x.path));
  return { dirs, files, lastLink, firstDirSync };
}

describe('the durable writes of a fork', { timeout: 300_000 }, () => {
  let s: StoreDir;

  before(() => {
    s = makeStoreDir();
    const seed = s.file('seed.db');
    runSql(seed, 'CREATE TABLE t(v TEXT); INSERT INTO t VALUES (1);');
    const made = s.cli(['create', 'app', '--from', seed]);
    assert.equal(made.code, 0, made.stderr);
  });

  after(() => s?.cleanup());

  it('a fork fsyncs its two files, links both, then syncs its three directories in one round', {
    skip: !traced && 'strace is not available',
  }, () => {
    const steps = traceCli(s, ['fork', 'app@main', 'one'], 'one.txt');
    const { dirs, files, lastLink, firstDirSync } = split(steps);
    const links = steps.flatMap((x) => (x.kind === 'link' ? [x.to] : []));
    assert.equal(links.length, 2, JSON.stringify(steps));
    assert.match(links[0] ?? '', /^data\/[0-9a-f]{32}\/base\.json$/, 'the base pointer is visible first');
    assert.equal(links[1], 'refs/app/one');
    assert.equal(files.length, 2, `a temp file each: ${JSON.stringify(files)}`);
    const lineage = (links[0] ?? '').split('/')[1];
    assert.deepEqual([...dirs].sort(), ['data', `data/${lineage}`, 'refs/app'], 'each directory synced once');
    assert.ok(
      firstDirSync > lastLink,
      `no directory is synced before both objects are linked: ${JSON.stringify(steps)}`,
    );
  });

  it('a batch of twenty forks syncs each lineage directory, data/ and refs/app once, after every link', {
    skip: !traced && 'strace is not available',
  }, () => {
    const names = Array.from({ length: 20 }, (_, i) => `ep-${i}`);
    const steps = traceCli(s, ['fork', 'app@main', ...names], 'batch.txt');
    const { dirs, files, lastLink, firstDirSync } = split(steps);
    const links = steps.flatMap((x) => (x.kind === 'link' ? [x.to] : []));
    assert.equal(links.length, 40);
    assert.ok(
      links.slice(0, 20).every((l) => l.endsWith('/base.json')),
      'every base pointer is visible before any ref',
    );
    assert.equal(files.length, 40);
    assert.equal(dirs.length, 22, `20 lineage directories, data and refs/app: ${JSON.stringify(dirs)}`);
    assert.equal(new Set(dirs).size, 22, 'each synced once');
    assert.ok(firstDirSync > lastLink, 'the directories are synced in one round, after every link');
  });
});
