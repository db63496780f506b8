// Names valid by the rules that look like a local store's own bookkeeping (`x.lock`, `.tmp-x`) work like any other,
// beside a sibling `x`, through ./offshoot on a local store and on an s3:// store alike.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { S3_REGION } from '../s3e2e/s3-store.js';
import { createTestBucket, S3_ENDPOINT, s3Unavailable, type TestBucket } from '../store/s3-test-env.js';
import { type CliResult, ensureBuilt, run, type RunOptions, sql } from './cli-harness.js';

function scenario(cli: (args: readonly string[], opts?: RunOptions) => CliResult): void {
  const ok = (args: readonly string[]): string => cli(args).stdout.trim();
  const rows = (target: string): string => sql(ok(['checkout', target]), 'SELECT group_concat(v) FROM t;').trim();

  for (const db of ['.tmp-db', 'app.lock']) {
    ok(['create', db]);
    sql(ok(['checkout', db]), 'CREATE TABLE t(v); INSERT INTO t VALUES (1);');
    ok(['checkpoint', db, 'one']);
    for (const branch of ['x', 'x.lock', '.tmp-x']) ok(['fork', db, branch]);
    // Each look-alike and its sibling x take checkpoints in turn: neither is ever the other's lock or temp file.
    for (const [i, branch] of ['x', 'x.lock', '.tmp-x', 'x'].entries()) {
      sql(ok(['checkout', `${db}@${branch}`]), `INSERT INTO t VALUES (${i + 2});`);
      ok(['checkpoint', `${db}@${branch}`, `c${i}`]);
    }
    assert.equal(rows(`${db}@x`), '1,2,5');
    assert.equal(rows(`${db}@x.lock`), '1,3');
    assert.equal(rows(`${db}@.tmp-x`), '1,4');
    ok(['rollback', `${db}@x.lock`, '--to', 'fork']);
    assert.equal(rows(`${db}@x.lock`), '1');
    ok(['promote', `${db}@.tmp-x`, '--onto', 'x.lock']);
    assert.equal(rows(`${db}@x.lock`), '1,4');
    ok(['destroy', `${db}@.tmp-x`]);
  }
  const status = JSON.parse(ok(['status', '--json'])) as { branches: Array<{ db: string; branch: string }> };
  const names = status.branches.map((b) => `${b.db}@${b.branch}`).filter((n) => !n.includes('-pre-'));
  assert.deepEqual(names.sort(), [
    '.tmp-db@main',
    '.tmp-db@x',
    '.tmp-db@x.lock',
    'app.lock@main',
    'app.lock@x',
    'app.lock@x.lock',
  ]);
  assert.match(ok(['gc', '--grace', '0s']), /^gc: tombstoned \d+, deleted \d+ objects$/m);
  assert.equal(rows('app.lock@x.lock'), '1,4', 'gc kept what the look-alike reads');
}

describe('branch and database names ending in .lock or starting with .tmp-', () => {
  let dir: string;
  before(() => {
    ensureBuilt();
    dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-'));
    mkdirSync(path.join(dir, 'tmp'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('work on a local store', () => {
    const store = path.join(dir, 'local');
    const cli = (args: readonly string[], opts: RunOptions = {}) =>
      run(['-store', store, ...args], { cwd: dir, ...opts, env: { TMPDIR: path.join(dir, 'tmp'), ...opts.env } });
    cli(['init']);
    scenario(cli);
    // The ref of x.lock is stored under an escaped name; x's CAS lock file would be refs/app.lock/x.lock.
    assert.ok(existsSync(path.join(store, 'refs', '%app.lock%', '%x.lock%')));
    assert.ok(existsSync(path.join(store, 'refs', '%.tmp-db%', 'x')));
  });

  describe('on an s3:// store', () => {
    if (s3Unavailable('look-alike names on S3')) return;
    let bucket: TestBucket;
    before(async () => {
      bucket = await createTestBucket();
    });
    after(async () => {
      await bucket?.remove();
    });

    it('work there too', () => {
      const cli = (args: readonly string[], opts: RunOptions = {}) =>
        run(['-store', `s3://${bucket.name}/names`, ...args], {
          cwd: dir,
          ...opts,
          env: {
            OFFSHOOT_S3_ENDPOINT: S3_ENDPOINT,
            OFFSHOOT_S3_PATH_STYLE: '1',
            OFFSHOOT_S3_REGION: S3_REGION,
            OFFSHOOT_CHECKOUTS: path.join(dir, 's3-checkouts'),
            TMPDIR: path.join(dir, 'tmp'),
            ...opts.env,
          },
        });
      cli(['init']);
      scenario(cli);
    });
  });
});
