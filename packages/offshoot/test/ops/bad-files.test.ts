// Bad local files: an import source that is truncated, empty, corrupt, a directory, mid-crash or a WAL file copied
// without its -shm; and a checkout whose file is garbage.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openDatabase } from '../../src/sqlite/sqlite-driver.js';
import { checkout } from '../../src/ops/checkout.js';
import { checkpoint } from '../../src/ops/checkpoint.js';
import { create } from '../../src/ops/create.js';
import { exportDump, openTestStore, rejectsCode, storeSnapshot, type TestStore } from './harness.js';
import { dump, runSql } from './sqlite-cli.js';

/** The files of a source's directory with their sizes and mtimes: what "untouched" means. */
function around(file: string): string {
  const dir = dirname(file);
  return readdirSync(dir)
    .filter((n) => n.startsWith(basename(file)))
    .sort()
    .map((n) => {
      const st = statSync(join(dir, n));
      return `${n}:${st.size}:${st.mtimeMs}`;
    })
    .join('\n');
}

/** A rollback-journal database of several pages at path. */
function bigDb(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const db = openDatabase(path);
  db.exec(
    "CREATE TABLE t(v TEXT); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) INSERT INTO t SELECT printf('row-%04d-%s', i, hex(randomblob(40))) FROM n;",
  );
  db.close();
}

describe('create --from refuses a bad source and leaves it untouched', () => {
  let ts: TestStore;
  before(async () => {
    ts = await openTestStore();
  });
  after(async () => ts.cleanup());

  async function refused(file: string, code: 'CORRUPT' | 'INVALID_ARGUMENT', message: RegExp): Promise<void> {
    const was = around(file);
    const stored = await storeSnapshot(ts.store);
    const err = await rejectsCode(create(ts.ctx, 'imported', { from: file }), code);
    assert.match(err.message, message);
    assert.ok(err.hint, err.message);
    assert.equal(around(file), was, 'the source and its companions are untouched');
    assert.deepEqual(await storeSnapshot(ts.store), stored, 'nothing was stored');
  }

  it('a zero-byte file', async () => {
    const f = ts.tmpPath('empty.db');
    writeFileSync(f, '');
    await refused(f, 'CORRUPT', /empty/);
  });

  it('a truncated database', async () => {
    const f = ts.tmpPath('trunc.db');
    bigDb(f);
    truncateSync(f, Math.floor(statSync(f).size / 2));
    await refused(f, 'CORRUPT', /truncated/);
  });

  it('a database that fails quick_check', async () => {
    const f = ts.tmpPath('corrupt.db');
    bigDb(f);
    const bytes = readFileSync(f);
    const pageSize = bytes.readUInt16BE(16);
    // Scribble over the cell area of the table's second page: the header stays sane, the b-tree does not.
    bytes.fill(0x41, pageSize * 2 + 200, pageSize * 3);
    writeFileSync(f, bytes);
    await refused(f, 'CORRUPT', /quick_check|malformed/);
  });

  it('a directory', async () => {
    const d = ts.tmpPath('dir.db');
    mkdirSync(d);
    await refused(d, 'INVALID_ARGUMENT', /directory/);
  });

  it('a database with a hot journal (a writer crashed mid-transaction)', async () => {
    const f = ts.tmpPath('hot.db');
    bigDb(f);
    const child = spawn('sqlite3', ['-bail', f], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stdin.write("PRAGMA cache_size=2; BEGIN; UPDATE t SET v = v || 'x'; SELECT 'spilled';\n");
    while (!out.includes('spilled')) await once(child.stdout, 'data');
    child.kill('SIGKILL');
    await once(child, 'exit');
    assert.ok(statSync(`${f}-journal`).size > 0, 'the crashed writer left its journal');
    await refused(f, 'INVALID_ARGUMENT', /hot journal/);
  });

  it('imports a WAL database copied without its -shm, creating nothing beside it', async () => {
    const live = ts.tmpPath('live.db');
    const conn = openDatabase(live);
    conn.pragma('journal_mode = WAL');
    conn.pragma('wal_autocheckpoint = 0');
    conn.exec("CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('only-in-the-wal');");
    const copy = ts.tmpPath('copy.db');
    copyFileSync(live, copy);
    copyFileSync(`${live}-wal`, `${copy}-wal`);
    conn.close();
    const was = around(copy);
    await create(ts.ctx, 'walcopy', { from: copy });
    assert.equal(around(copy), was, 'no -shm (or anything else) was left beside the source');
    assert.match(await exportDump(ts, { db: 'walcopy', branch: 'main' }), /only-in-the-wal/);
  });
});

describe('a checkout whose file is garbage', () => {
  it('fails CORRUPT, and checkout --force moves it aside and re-materializes the head', async () => {
    const warnings: string[] = [];
    const ts = await openTestStore({ warn: (m) => warnings.push(m) });
    try {
      await create(ts.ctx, 'app');
      const main = { db: 'app', branch: 'main' };
      const co = await checkout(ts.ctx, main);
      runSql(co.path, "CREATE TABLE t(v TEXT); INSERT INTO t VALUES ('kept');");
      await checkpoint(ts.ctx, main, 'one');
      const garbage = 'not a database at all '.repeat(400);
      writeFileSync(co.path, garbage);
      const err = await rejectsCode(checkout(ts.ctx, main), 'CORRUPT');
      assert.match(err.hint ?? '', /offshoot checkout app@main --force/);
      const r = await checkout(ts.ctx, main, { force: true });
      assert.equal(r.path, co.path);
      assert.match(dump(co.path), /'kept'/, 'the head is back at the path');
      const aside = readdirSync(dirname(co.path)).filter((n) => n.startsWith('main.db.aside-'));
      assert.equal(aside.length, 1, readdirSync(dirname(co.path)).join(', '));
      assert.equal(readFileSync(join(dirname(co.path), aside[0] ?? '')).toString(), garbage, 'the bad file is kept');
      assert.ok(
        warnings.some((w) => w.includes(aside[0] ?? '?')),
        warnings.join('\n'),
      );
      assert.equal((await checkout(ts.ctx, main)).reused, true, 'the fresh checkout is clean');
      assert.ok(existsSync(co.path));
    } finally {
      await ts.cleanup();
    }
  });
});
