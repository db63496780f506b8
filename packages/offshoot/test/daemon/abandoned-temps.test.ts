// A daemon killed with SIGKILL in the middle of a 1,000-name batch fork leaves temp files (in refs/ and in the new
// lineages' folders under data/) and lineage folders no ref names. GC removes every one of them that is past the age
// a live writer could still be using it at, and nothing younger.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TEMPORARY_MIN_AGE_MS } from '../../src/ops/gc.js';
import { runSql } from '../ops/sqlite-cli.js';
import { makeStoreDir, startDaemon, until, type StoreDir } from './daemon-process.js';

/** Every `.tmp-*` file under the store's refs/ and data/, as paths relative to the store. */
function temps(store: string): string[] {
  return ['refs', 'data'].flatMap((top) =>
    readdirSync(path.join(store, top), { recursive: true, encoding: 'utf8' })
      .filter((f) => path.basename(f).startsWith('.tmp-'))
      .map((f) => path.join(top, f)),
  );
}

/** Sets the modification time of the file at p to `ago` ms in the past. */
function age(p: string, ago: number): void {
  const t = new Date(Date.now() - ago);
  utimesSync(p, t, t);
}

describe('temporaries of a daemon killed mid batch fork', () => {
  let s: StoreDir;
  before(() => {
    s = makeStoreDir();
    const seed = s.file('seed.db');
    runSql(seed, 'CREATE TABLE t(v TEXT); INSERT INTO t VALUES (1);');
    assert.equal(s.cli(['create', 'app', '--from', seed]).code, 0);
  });
  after(() => s.cleanup());

  test('gc removes the abandoned temp files and orphan lineage folders, and nothing a live writer may hold', async () => {
    const d = await startDaemon(s, ['-reap-every', '0', '-flush-every', '0']);
    const names = Array.from({ length: 1000 }, (_, i) => `ep-${i}`);
    const sock = connect(d.sock, () =>
      sock.write(`${JSON.stringify({ op: 'fork', db: 'app', branch: 'main', names })}\n`),
    );
    sock.on('error', () => undefined);
    // The batch writes every fork's temp files before linking any: kill the daemon once they are being written.
    await until(() => temps(s.store).length > 0, 'the batch fork to write its temp files');
    d.proc.kill('SIGKILL');
    await d.exited;
    sock.destroy();
    const left = temps(s.store);
    assert.ok(left.length > 0, 'the kill left temp files behind');
    const refLineages = (): Set<string> =>
      new Set(
        readdirSync(path.join(s.store, 'refs', 'app'))
          .filter((f) => !f.startsWith('.') && !f.endsWith('.lock'))
          .map(
            (f) =>
              (JSON.parse(readFileSync(path.join(s.store, 'refs', 'app', f), 'utf8')) as { lineage: string }).lineage,
          ),
      );
    const orphans = (): string[] => readdirSync(path.join(s.store, 'data')).filter((l) => !refLineages().has(l));
    assert.ok(orphans().length > 0, 'the kill left lineage folders no ref names');

    // What a gc finds right after the crash is as young as a live writer's: it stays.
    assert.equal(s.cli(['gc', '--grace', '0s']).code, 0);
    assert.deepEqual(temps(s.store).sort(), left.sort());

    // Later: everything the crash left is older than any live writer's temp file can be.
    const old = TEMPORARY_MIN_AGE_MS + 60_000;
    for (const t of left) age(path.join(s.store, t), old);
    // And the lineage folders it made: one a writer made moments ago is never pruned under it.
    for (const l of orphans()) age(path.join(s.store, 'data', l), old);
    // A live writer's temp file beside the refs, fresh, and one in a lineage folder it is writing.
    const live = [path.join('refs', 'app', '.tmp-live-writer'), path.join('data', 'lineage-in-flight', '.tmp-live')];
    mkdirSync(path.join(s.store, 'data', 'lineage-in-flight'));
    for (const t of live) writeFileSync(path.join(s.store, t), 'in flight');

    const first = s.cli(['gc', '--grace', '0s', '--json']);
    assert.equal(first.code, 0, first.stderr);
    assert.equal((JSON.parse(first.stdout) as { temporaries: number }).temporaries, left.length);
    // The orphans' objects (their base pointers) were tombstoned by the first pass and go in the second.
    assert.equal(s.cli(['gc', '--grace', '0s']).code, 0);
    assert.deepEqual(temps(s.store).sort(), [...live].sort());
    assert.deepEqual(orphans(), ['lineage-in-flight']);

    // The store serves on: a fork of the same names goes through.
    const again = await startDaemon(s, ['-reap-every', '0', '-flush-every', '0']);
    try {
      const r = await again.request({ op: 'fork', db: 'app', branch: 'main', names: names.slice(0, 10) });
      assert.equal(r.ok, true, JSON.stringify(r));
    } finally {
      await again.stop();
    }
  });
});
