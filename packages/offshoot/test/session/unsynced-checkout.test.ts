// A session's fresh checkout is placed before its copy is on the disk: a durable note names the head it was copied
// from, and a read transaction at mark 0 keeps every checkpoint out of the main file until the copy is synced. These
// tests kill the process that placed it before then, with the stock sqlite3 as the foreign writer, and play the
// power loss: the copy's blocks zeroed under the mtime it was placed with, and the note's boot made another's.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Target } from '../../src/core/target.js';
import { checkout } from '../../src/ops/checkout.js';
import { create } from '../../src/ops/create.js';
import { destroy } from '../../src/ops/destroy.js';
import { fork } from '../../src/ops/fork.js';
import { readUnsyncedNote } from '../../src/ops/helpers/checkout/unsynced-checkout.js';
import { checkoutPath, scratchDir } from '../../src/ops/helpers/context/paths.js';
import { targetNoteName } from '../../src/ops/helpers/context/target-note.js';
import { recoverUnsyncedCheckouts } from '../../src/ops/open.js';
import { Session } from '../../src/session/session.js';
import { makeStoreDir, startDaemon } from '../daemon/daemon-process.js';
import { openTestStore, type TestStore } from '../ops/harness.js';
import { query, runSql } from '../ops/sqlite-cli.js';

const PLACER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'unsynced-placer.ts');
const TEN_ROWS =
  "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) INSERT INTO t(v) SELECT 'row ' || x FROM c;";

const rows = (co: string) => query(co, 'SELECT count(*) FROM t;').trim();
const walBytes = (co: string) => (existsSync(`${co}-wal`) ? statSync(`${co}-wal`).size : 0);

// A child process that places the branch's checkout unsynced and pins it (unsynced-placer.ts), once it has.
async function place(storeDir: string, root: string, t: Target): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', PLACER, storeDir, root, t.db, t.branch], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await once(createInterface({ input: child.stdout as NodeJS.ReadableStream }), 'line')) as [string];
  assert.equal(line, 'pinned', 'placed by a copy (the temp directory does not reflink), so not synced');
  return child;
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

// What a power loss does to a copy never synced: its blocks read as zeros, its inode as it was placed.
function loseTheCopy(co: string): void {
  const st = statSync(co, { bigint: true });
  writeFileSync(co, Buffer.alloc(Number(st.size)), { flag: 'r+' });
  const seconds = Number(st.mtimeNs / 1_000_000_000n);
  utimesSync(co, seconds, seconds);
}

// The note as a reboot leaves it: written in another boot.
function rebootNoteIn(root: string, t: Target): void {
  const file = path.join(scratchDir(root, 'unsynced'), targetNoteName(t));
  const note = JSON.parse(readFileSync(file, 'utf8')) as { boot_id: string };
  writeFileSync(file, JSON.stringify({ ...note, boot_id: 'another-boot' }));
}

describe('a checkout placed before its copy is on the disk', () => {
  let ts: TestStore;
  let n = 0;
  const warnings: string[] = [];

  before(async () => {
    ts = await openTestStore({ warn: (m) => warnings.push(m) });
    const src = ts.tmpPath('src.db');
    // Enough pages that a copy lost to a power loss is no database at all.
    runSql(
      src,
      "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500) INSERT INTO t(v) SELECT printf('seed %.200c', x) FROM c;",
    );
    await create(ts.ctx, 'app', { from: src });
  });
  after(async () => ts.cleanup());

  // A fresh fork whose checkout a child process placed unsynced and still pins; the child and the checkout path.
  async function placedByChild(): Promise<{ t: Target; co: string; child: ChildProcess }> {
    const t = { db: 'app', branch: `placed-${n++}` };
    await fork(ts.ctx, { db: 'app', branch: 'main' }, t.branch);
    const child = await place(path.join(ts.dir, 'store'), ts.ctx.checkoutRoot, t);
    return { t, co: checkoutPath(ts.ctx.checkoutRoot, t.db, t.branch), child };
  }

  const rebootNote = (t: Target) => rebootNoteIn(ts.ctx.checkoutRoot, t);
  const asides = (co: string) =>
    readdirSync(path.dirname(co)).filter((f) => f.startsWith(`${path.basename(co)}.aside-`));

  it('keeps every checkpoint out of the main file while it is pinned, and writes a durable note first', async () => {
    const { t, co, child } = await placedByChild();
    try {
      const note = readUnsyncedNote(ts.ctx.checkoutRoot, t);
      assert.ok(note !== undefined, 'a note names the checkout');
      assert.equal(note.identity.lineage, (await ts.store.getRef(t.db, t.branch)).ref.lineage);
      runSql(co, TEN_ROWS);
      const before = walBytes(co);
      assert.ok(before > 0, 'the foreign commit is in the -wal');
      const [busy, , folded] = query(co, 'PRAGMA wal_checkpoint(TRUNCATE);').trim().split('|');
      assert.equal(busy, '1', 'the checkpoint is refused');
      assert.equal(folded, '0', 'no frame reached the main file');
      assert.equal(walBytes(co), before, 'the -wal is as it was');
    } finally {
      await kill(child);
    }
  });

  it('after a power loss, rebuilds the lost copy from the store and replays the -wal over it', async () => {
    const { t, co, child } = await placedByChild();
    runSql(co, TEN_ROWS);
    await kill(child);
    loseTheCopy(co);
    rebootNote(t);
    assert.throws(() => rows(co), 'the zeroed copy is no database');
    assert.deepEqual(await recoverUnsyncedCheckouts(ts.ctx), []);
    assert.equal(rows(co), '510', 'the seed and the ten rows written after the copy');
    assert.equal(query(co, 'PRAGMA integrity_check;').trim(), 'ok');
    assert.equal(readUnsyncedNote(ts.ctx.checkoutRoot, t), undefined, 'the note is gone');
    assert.deepEqual(asides(co), [], 'nothing was moved aside');
  });

  it('in the same boot, a checkout syncs the copy the dead process left and keeps what was written', async () => {
    const { t, co, child } = await placedByChild();
    runSql(co, TEN_ROWS);
    await kill(child);
    const r = await checkout(ts.ctx, t);
    assert.equal(r.dirty, true, 'the ten rows are uncheckpointed writes of the checkout');
    assert.equal(readUnsyncedNote(ts.ctx.checkoutRoot, t), undefined, 'the note is gone');
    assert.equal(rows(co), '510');
  });

  it('after a power loss, keeps a main file a foreign checkpoint folded whole and synced', async () => {
    const { t, co, child } = await placedByChild();
    runSql(co, TEN_ROWS);
    await kill(child);
    const [busy] = query(co, 'PRAGMA wal_checkpoint(TRUNCATE);').trim().split('|');
    assert.equal(busy, '0', 'with the placer gone the checkpoint runs');
    assert.equal(walBytes(co), 0);
    rebootNote(t);
    assert.deepEqual(await recoverUnsyncedCheckouts(ts.ctx), []);
    assert.equal(rows(co), '510', 'the folded rows are kept');
    assert.equal(readUnsyncedNote(ts.ctx.checkoutRoot, t), undefined);
    assert.deepEqual(asides(co), []);
  });

  it('after a power loss, moves aside a main file written beside frames it cannot vouch for, and says so', async () => {
    const { t, co, child } = await placedByChild();
    runSql(co, TEN_ROWS);
    await kill(child);
    // A foreign reader at the -wal's end keeps the checkpoint's writer from deleting the -wal as it closes; it dies
    // without closing, so the frames stay beside a main file they were folded into.
    const reader = spawn('sqlite3', [co], { stdio: ['pipe', 'pipe', 'inherit'] });
    reader.stdin.write('BEGIN; SELECT count(*) FROM t;\n');
    await once(createInterface({ input: reader.stdout }), 'line');
    const [busy, , folded] = query(co, 'PRAGMA wal_checkpoint(PASSIVE);').trim().split('|');
    await kill(reader);
    assert.equal(busy, '0');
    assert.notEqual(folded, '0', 'frames reached the main file');
    assert.ok(walBytes(co) > 0, 'the frames stay in the -wal');
    rebootNote(t);
    warnings.length = 0;
    assert.deepEqual(await recoverUnsyncedCheckouts(ts.ctx), []);
    assert.equal(rows(co), '510', 'rebuilt from the store, the -wal replayed over it');
    const aside = asides(co);
    assert.equal(aside.length, 1, 'the file it had is kept');
    assert.ok(
      warnings.some((w) => w.includes(aside[0] ?? '-')),
      'the warning names it',
    );
  });

  it('is forgotten with its branch: destroy removes the note', async () => {
    const { t, child } = await placedByChild();
    await kill(child);
    await destroy(ts.ctx, t, { force: true });
    assert.equal(readUnsyncedNote(ts.ctx.checkoutRoot, t), undefined);
  });

  it('after a power loss, drops the note of a branch destroyed since, rebuilding nothing', async () => {
    const { t, co, child } = await placedByChild();
    await kill(child);
    const file = path.join(scratchDir(ts.ctx.checkoutRoot, 'unsynced'), targetNoteName(t));
    const note = readFileSync(file);
    // A destroy that died before it removed the note: the branch and its checkout are gone, the note is not.
    await destroy(ts.ctx, t, { force: true });
    writeFileSync(file, note);
    rebootNote(t);
    assert.deepEqual(await recoverUnsyncedCheckouts(ts.ctx), []);
    assert.equal(readUnsyncedNote(ts.ctx.checkoutRoot, t), undefined, 'the note is gone');
    assert.equal(existsSync(co), false, 'no checkout of the gone branch was rebuilt');
  });

  it('a session settles its checkout: the copy synced, the note removed, checkpoints let through', async () => {
    const t = { db: 'app', branch: `session-${n++}` };
    await fork(ts.ctx, { db: 'app', branch: 'main' }, t.branch);
    const s = await Session.open(ts.context({ now: () => new Date(), holder: 'daemon-host/1' }), t, {});
    try {
      await s.checkoutOnDisk();
      assert.equal(readUnsyncedNote(ts.ctx.checkoutRoot, t), undefined);
      runSql(s.path, TEN_ROWS);
      await s.flush({ kind: 'auto' });
      assert.equal(rows(s.path), '510');
    } finally {
      await s.close();
    }
    assert.equal(query(checkoutPath(ts.ctx.checkoutRoot, t.db, t.branch), 'SELECT count(*) FROM t;').trim(), '510');
  });
});

describe('a daemon that starts after a power loss', () => {
  it('recovers a checkout an earlier one placed before its copy was on the disk, before it serves', async () => {
    const s = makeStoreDir();
    try {
      const src = s.file('src.db');
      runSql(
        src,
        "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500) INSERT INTO t(v) SELECT printf('seed %.200c', x) FROM c;",
      );
      assert.equal(s.cli(['create', 'app', '--from', src]).code, 0);
      assert.equal(s.cli(['fork', 'app', 'ep']).code, 0);
      const t = { db: 'app', branch: 'ep' };
      // A local store's checkouts live under the store's own directory.
      const child = await place(s.store, s.store, t);
      const co = checkoutPath(s.store, t.db, t.branch);
      runSql(co, TEN_ROWS);
      await kill(child);
      loseTheCopy(co);
      rebootNoteIn(s.store, t);
      const d = await startDaemon(s);
      try {
        assert.equal(readUnsyncedNote(s.store, t), undefined, 'the note is gone once the daemon answers');
        assert.equal(rows(co), '510');
        assert.equal(query(co, 'PRAGMA integrity_check;').trim(), 'ok');
      } finally {
        await d.stop();
      }
    } finally {
      s.cleanup();
    }
  });
});
