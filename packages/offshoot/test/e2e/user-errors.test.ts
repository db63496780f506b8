// What a new user trips over gets a one-line user error that names the fix: no INTERNAL, no silent acceptance of a
// value that means something else, and nothing of the store overwritten.
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { assertCleanError, ensureBuilt, sql, statusMap, tempStore, type TempStore } from './cli-harness.js';

describe('user errors', { timeout: 120_000 }, () => {
  let ts: TempStore;

  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    const db = ts.run(['checkout', 'app']).stdout.trim();
    sql(db, 'CREATE TABLE t(v); INSERT INTO t VALUES (1);');
    ts.run(['checkpoint', 'app', 'one']);
    ts.run(['fork', 'app', 'other']);
    ts.run(['checkout', 'app@other']);
  });
  after(() => ts.cleanup());

  test('export never writes inside the store or the checkout root, even with --force', () => {
    const ref = join(ts.store, 'refs', 'app', 'main');
    const refBefore = readFileSync(ref, 'utf8');
    const other = join(ts.store, 'checkouts', 'app', 'other.db');
    const otherBefore = readFileSync(other);
    for (const out of [ref, other, join(ts.store, 'new.db'), join(ts.store, 'checkouts', 'app', 'fresh.db')]) {
      const r = ts.run(['export', 'app', out, '--force'], { expectCode: 2 });
      assertCleanError(r, 2, /inside .* which offshoot manages/);
    }
    symlinkSync(join(ts.store, 'checkouts'), ts.path('sneaky'));
    assertCleanError(ts.run(['export', 'app', ts.path('sneaky', 'x.db')], { expectCode: 2 }), 2, /inside/);
    assert.equal(readFileSync(ref, 'utf8'), refBefore);
    assert.deepEqual(readFileSync(other), otherBefore);
    assert.ok(!readdirSync(ts.store).includes('new.db'));
  });

  test('export to a directory is a user error naming a file to write', () => {
    mkdirSync(ts.path('outdir'));
    assertCleanError(ts.run(['export', 'app', ts.path('outdir')], { expectCode: 2 }), 2, /is a directory/);
    assertCleanError(ts.run(['export', 'app', ts.path('outdir'), '--force'], { expectCode: 2 }), 2, /outdir\/app\.db/);
  });

  test('an empty --ttl is refused rather than meaning "never expires"', () => {
    for (const args of [
      ['fork', 'app', 'leak', '--ttl', ''],
      ['fork', 'app', 'leak', '--ttl='],
      ['touch', 'app@other', '--ttl', ''],
      ['lease', 'acquire', 'app@other', '--ttl', ''],
    ])
      assertCleanError(ts.run(args, { expectCode: 2 }), 2, /--ttl has an empty value/);
    assert.equal(statusMap(ts).has('app@leak'), false);
  });

  test('file://relative and a store that is a regular file are user errors', () => {
    assertCleanError(ts.run(['-store', 'file://relative/dir', 'status'], { expectCode: 2 }), 2, /file:\/\/\//);
    writeFileSync(ts.path('plain'), 'x');
    assertCleanError(ts.run(['-store', ts.path('plain'), 'status'], { expectCode: 2 }), 2, /is a file, not a store/);
  });

  test('an offshoot.json that is valid JSON but not an object is CORRUPT (exit 7), never an internal error', () => {
    const other = tempStore({ init: true });
    try {
      for (const body of ['null', '[]', '3', '"x"']) {
        writeFileSync(join(other.store, 'offshoot.json'), body);
        assertCleanError(other.run(['status'], { expectCode: 7 }), 7, /offshoot\.json is not a JSON object.*backup/);
      }
    } finally {
      other.cleanup();
    }
  });

  test('status of an unknown database exits 3; checkout of an unknown branch suggests fork', () => {
    assertCleanError(ts.run(['status', 'nope'], { expectCode: 3 }), 3, /no database nope/);
    const r = ts.run(['checkout', 'app@nope'], { expectCode: 3 });
    assertCleanError(r, 3, /'offshoot fork app nope'/);
    assert.doesNotMatch(r.stderr, /offshoot create/);
  });

  test('a corrupt object names itself and the branch, and suggests rolling back to an earlier checkpoint', () => {
    const db = ts.run(['checkout', 'app']).stdout.trim();
    sql(db, 'INSERT INTO t VALUES (2);');
    ts.run(['checkpoint', 'app', 'two']);
    const dataDir = join(ts.store, 'data');
    const segment = readdirSync(dataDir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.includes('segment-'))
      .sort()
      .pop();
    assert.ok(segment !== undefined);
    const path = join(dataDir, segment);
    const bytes = readFileSync(path);
    bytes[bytes.length >> 1] = (bytes[bytes.length >> 1] ?? 0) ^ 0xff;
    writeFileSync(path, bytes);
    const r = ts.run(['export', 'app', ts.path('out.db')], { expectCode: 7 });
    assertCleanError(r, 7);
    assert.ok(r.stderr.includes(segment.split('/').pop() ?? ''), r.stderr);
    assert.match(r.stderr, /app@main/);
    assert.match(r.stderr, /offshoot rollback app@main --to one/);
  });
});
