// `offshoot status` on a store of several databases: --db, --state and --limit are exact filters, a limit says how
// many more matched, the streamed --json document keeps the one-document bytes, and --json --stream's lines are the
// document's branches.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertCleanError, ensureBuilt, sql, tempStore, type StatusBranch, type TempStore } from './cli-harness.js';

interface StatusDoc {
  branches: StatusBranch[];
  unreadable: unknown[];
  ro_cache: { entries: number; bytes: number };
  layout: { version: number; newest: number; allows: string; upgrade?: string };
  truncated?: boolean;
  more?: number;
}

let ts: TempStore;

const names = (bs: readonly StatusBranch[]): string[] => bs.map((b) => `${b.db}@${b.branch}`);

// `remaining` counts down between two runs; every other field is stable.
const stable = (bs: readonly StatusBranch[]): StatusBranch[] => bs.map(({ remaining: _, ...b }) => b as StatusBranch);

function doc(args: readonly string[]): StatusDoc {
  return ts.json<StatusDoc>(['status', ...args]);
}

function streamed(args: readonly string[]): { branches: StatusBranch[]; rest: Record<string, unknown> } {
  const out = ts.run(['status', '--json', '--stream', ...args]).stdout;
  assert.ok(out.endsWith('\n'));
  const lines = out.slice(0, -1).split('\n');
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  return { branches: parsed.slice(0, -1) as unknown as StatusBranch[], rest: parsed.at(-1) ?? {} };
}

before(() => {
  ensureBuilt();
  ts = tempStore({ init: true });
  for (const db of ['app', 'app-x', 'billing']) ts.run(['create', db]);
  const main = ts.run(['checkout', 'app']).stdout.trim();
  sql(main, 'CREATE TABLE t(id INTEGER PRIMARY KEY)');
  ts.run(['checkpoint', 'app', 'schema']);
  for (const b of ['f1', 'f2', 'f3', 'f4']) ts.run(['fork', 'app', b, '--ttl', '720h']);
  for (const b of ['b1', 'b2']) ts.run(['fork', 'billing', b]);
  ts.run(['fork', 'app-x', 'x1']);
  // app@main dirty (a write no checkpoint holds), app@f1 and billing@b2 active (a live lease), app@f2 checked out clean.
  sql(main, 'INSERT INTO t VALUES (1)');
  ts.run(['lease', 'acquire', 'app@f1', '--ttl', '1h']);
  ts.run(['lease', 'acquire', 'billing@b2', '--ttl', '1h']);
  ts.run(['checkout', 'app@f2']);
});

after(() => ts?.cleanup());

describe('status --json without filters', () => {
  test('is the one document, byte for byte as a pretty-printed JSON document, with exactly its fields', () => {
    const out = ts.run(['status', '--json']).stdout;
    const parsed = JSON.parse(out) as StatusDoc;
    assert.equal(out, `${JSON.stringify(parsed, null, 2)}\n`);
    assert.deepEqual(Object.keys(parsed), ['branches', 'unreadable', 'ro_cache', 'layout']);
    assert.equal(parsed.branches.length, 10);
    const f1 = parsed.branches.find((b) => b.db === 'app' && b.branch === 'f1');
    assert.deepEqual(Object.keys(f1 ?? {}), [
      'db',
      'branch',
      'state',
      'storage',
      'txid',
      'checkpoints',
      'checkpoints_v2',
      'protected',
      'checked_out',
      'ttl',
      'remaining',
      'expires_at',
      'lease_holder',
      'lease_expiry',
      'touched_at',
      'parent',
    ]);
  });

  test('an empty listing is the same document shape', () => {
    const empty = tempStore({ init: true });
    try {
      const out = empty.run(['status', '--json']).stdout;
      assert.equal(out, `${JSON.stringify(JSON.parse(out), null, 2)}\n`);
      assert.deepEqual(JSON.parse(out).branches, []);
    } finally {
      empty.cleanup();
    }
  });
});

describe('filters', () => {
  test('--db keeps exactly that database (not a lookalike prefix), with or beside the positional', () => {
    const all = doc([]).branches;
    const app = doc(['--db', 'app']).branches;
    assert.deepEqual(names(app), names(all.filter((b) => b.db === 'app')));
    assert.equal(app.length, 5);
    assert.deepEqual(stable(doc(['app']).branches), stable(app));
    const two = doc(['app', '--db', 'billing']).branches;
    assert.deepEqual(names(two), names(all.filter((b) => b.db === 'app' || b.db === 'billing')));
    assert.deepEqual(names(doc(['--db', 'billing', '--db', 'app-x', '--db', 'billing']).branches), [
      'app-x@main',
      'app-x@x1',
      'billing@b1',
      'billing@b2',
      'billing@main',
    ]);
  });

  test('--state keeps exactly the branches in those states, and combines with --db', () => {
    const all = doc([]).branches;
    assert.deepEqual(names(doc(['--state', 'active']).branches), ['app@f1', 'billing@b2']);
    assert.deepEqual(names(doc(['--state', 'dirty']).branches), ['app@main']);
    const idle = doc(['--state', 'idle']).branches;
    assert.deepEqual(names(idle), names(all.filter((b) => b.state === 'idle')));
    assert.ok(idle.some((b) => b.branch === 'f2' && b.checked_out));
    assert.deepEqual(names(doc(['--state', 'active', '--state', 'dirty', '--db', 'app']).branches), [
      'app@f1',
      'app@main',
    ]);
    assert.deepEqual(doc(['--state', 'detached']).branches, []);
    assert.match(ts.run(['status', '--state', 'dirty']).stdout, /^app@main state=dirty .*\nro-cache: /);
  });

  test('--limit prints at most N and reports how many more matched', () => {
    const all = doc([]).branches;
    const cut = doc(['--limit', '3']);
    assert.deepEqual(names(cut.branches), names(all).slice(0, 3));
    assert.equal(cut.truncated, true);
    assert.equal(cut.more, all.length - 3);
    const whole = doc(['--limit', '10']);
    assert.equal(whole.branches.length, 10);
    assert.equal(whole.truncated, false);
    assert.equal(whole.more, 0);
    const idle = doc(['--state', 'idle', '--db', 'app', '--limit', '1']);
    assert.equal(idle.branches.length, 1);
    assert.equal(idle.branches[0]?.state, 'idle');
    assert.equal(idle.more, all.filter((b) => b.db === 'app' && b.state === 'idle').length - 1);
    const text = ts.run(['status', '--limit', '2']).stdout.split('\n');
    assert.deepEqual(
      text.slice(0, 2).map((l) => l.split(' ')[0]),
      names(all).slice(0, 2),
    );
    assert.equal(text[2], `more: ${all.length - 2} more branches match; raise --limit to list them`);
    assert.match(text[3] ?? '', /^ro-cache: /);
  });

  test('bad filters are usage errors and a missing database is not found, with nothing on stdout', async () => {
    const cases: Array<[string[], number, RegExp]> = [
      [['status', '--state', 'leased'], 2, /unknown branch state "leased".*active, dirty, detached, idle/],
      [['status', '--limit', '0'], 2, /limit must be a whole number of at least 1/],
      [['status', '--limit', 'ten'], 2, /--limit "ten" is not a whole number/],
      [['status', '--stream'], 2, /--stream needs --json/],
      [['status', '--db', 'Bad_Name'], 2, /invalid database name/],
      [['status', '--db', 'app', '--db', 'nosuch'], 3, /no database nosuch/],
    ];
    const results = await Promise.all(cases.map(([args]) => ts.runAsync(args, { expectCode: 'any' })));
    results.forEach((r, i) => {
      const [, code, message] = cases[i] as [string[], number, RegExp];
      assertCleanError(r, code, message);
    });
  });
});

describe('status --json --stream', () => {
  test("prints the document's branches one per line, then the rest of the document", () => {
    const full = doc([]);
    const s = streamed([]);
    assert.deepEqual(stable(s.branches), stable(full.branches));
    assert.deepEqual(s.rest, { unreadable: full.unreadable, ro_cache: full.ro_cache, layout: full.layout });
  });

  test("each line is the document's branch or its rest, byte for byte, keys in the same order", () => {
    const full = doc([]);
    const out = ts.run(['status', '--json', '--stream']).stdout;
    const lines = out.slice(0, -1).split('\n');
    assert.equal(lines.length, full.branches.length + 1);
    full.branches.forEach((b, i) => {
      const line = lines[i] as string;
      // `remaining` counts down between the two runs: the line's own stands in the document's place.
      const { remaining } = JSON.parse(line) as StatusBranch;
      assert.equal(line, JSON.stringify({ ...b, remaining }));
    });
    assert.equal(
      lines.at(-1),
      JSON.stringify({ unreadable: full.unreadable, ro_cache: full.ro_cache, layout: full.layout }),
    );
  });

  test('takes the same filters, and its last line says what a limit left out', () => {
    const full = doc(['--db', 'app', '--state', 'idle', '--limit', '2']);
    const s = streamed(['--db', 'app', '--state', 'idle', '--limit', '2']);
    assert.deepEqual(stable(s.branches), stable(full.branches));
    assert.equal(s.rest.truncated, full.truncated);
    assert.equal(s.rest.more, full.more);
    assert.equal(s.branches.length, 2);
  });
});
