// A diff whose changed rows pass what a surface may send is narrowed on every surface, and answers: the CLI's
// --table and --limit, the MCP tool's `limit`, the dashboard's table= and limit=. The counts stay true, the cap bounds
// what is sent (not what is compared), and what does not fit says so in each surface's own terms: the MCP hint names
// tool arguments, the dashboard answers 4xx with a message, never 500.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { makeStoreDir, type StoreDir } from '../daemon/daemon-process.js';
import { type McpSession, startMcp } from '../mcp/mcp-harness.js';
import { runSql } from '../ops/sqlite-cli.js';
import { startUi, type UiProcess } from '../ui/ui-support.js';
import type { ApiDiff, ApiError } from '../../src/ui/api-types.js';

const TOKEN = 'diff-narrowing-token-0123456789ab';
// 600 rows of 30 KB, every one changed: about 72 MB of rows as JSON, past the 48 MiB a server sends, short of the
// CLI's 256 MiB; 500 of them (the MCP tool's largest limit) still pass 48 MiB.
const ROWS = 600;
const BLOB = 30_000;

describe('a diff past the cap narrows on every surface', { timeout: 300_000 }, () => {
  let s: StoreDir;
  let m: McpSession;
  let ui: UiProcess;

  before(async () => {
    s = makeStoreDir();
    const seed = s.file('wide.db');
    runSql(
      seed,
      `CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB); CREATE TABLE other(id INTEGER PRIMARY KEY, v TEXT);
       WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
       INSERT INTO t SELECT x, randomblob(${BLOB}) FROM c;`,
    );
    assert.equal(s.cli(['create', 'wide', '--from', seed]).code, 0);
    assert.equal(s.cli(['fork', 'wide', 'all']).code, 0);
    const co = s.cli(['checkout', 'wide@all']).stdout.trim();
    runSql(co, `UPDATE t SET b = randomblob(${BLOB}); INSERT INTO other VALUES (1, 'one');`);
    assert.equal(s.cli(['checkpoint', 'wide@all', 'changed']).code, 0);
    m = await startMcp(s.store);
    ui = await startUi(s, ['-listen', '127.0.0.1:0'], { OFFSHOOT_TOKEN: TOKEN });
  });

  after(async () => {
    await m?.close();
    await ui?.stop();
    s?.cleanup();
  });

  test('CLI: --table with --limit lists the first rows and the whole count', () => {
    // Few rows: each prints its 30 KB blob twice, as hex.
    const r = s.cli(['diff', 'wide', 'wide@all', '--table', 't', '--limit', '3']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /table t \(key id\): changed, 0 added, 0 removed, 600 changed/);
    assert.equal(r.stdout.split('\n').filter((l) => l.startsWith('  ~ ')).length, 3);
    assert.match(r.stdout, /… 597 more not listed/);
    const json = JSON.parse(s.cli(['diff', 'wide', 'wide@all', '--limit', '1', '--json']).stdout) as {
      tables: Array<{ table: string; changed: unknown[]; counts?: Record<string, number> }>;
    };
    const t = json.tables.find((x) => x.table === 't');
    assert.deepEqual([t?.changed.length, t?.counts], [1, { added: 0, removed: 0, changed: 600 }]);
    const sqlLimited = s.cli(['diff', 'wide', 'wide@all', '--sql', '--limit', '2']);
    assert.equal(sqlLimited.code, 2, 'SQL needs every row');
    assert.match(sqlLimited.stderr, /--sql needs every row change/);
  });

  test('MCP: limit narrows the diff; past the cap, the hint names tool arguments, never CLI flags', async () => {
    const five = await m.call('offshoot_diff', { database: 'wide', target: 'all', limit: 5 });
    assert.equal(five.isError, false, five.text);
    const t = (five.structured.tables as Array<Record<string, unknown>>).find((x) => x.table === 't') as {
      changed: number;
      rows: { changed: unknown[] };
    };
    assert.equal(t.changed, ROWS, 'the count is the whole table');
    assert.equal(t.rows.changed.length, 5);
    assert.equal(five.structured.truncated, true);
    assert.match(five.text, /600 changed/);
    const most = await m.call('offshoot_diff', { database: 'wide', target: 'all', limit: 500 });
    assert.equal(most.isError, true, 'the first 500 rows of each kind still pass the cap');
    assert.equal(most.code, 'TOO_LARGE');
    const hint = /hint: (.*)/.exec(most.text)?.[1] ?? '';
    assert.match(hint, /a smaller limit than 500/);
    assert.match(hint, /summary: true/);
    assert.doesNotMatch(hint, /--|offshoot diff/, 'no CLI flag for an agent');
    assert.match(most.text, /500 per table and kind/);
  });

  const api = async (path: string): Promise<{ status: number; body: unknown }> => {
    const res = await fetch(`${ui.url}${path}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    return { status: res.status, body: await res.json() };
  };

  test('dashboard: table= and limit= page through it, with true counts', async () => {
    const r = await api('api/diff?left=wide&right=wide@all&table=t&limit=10');
    assert.equal(r.status, 200, JSON.stringify(r.body).slice(0, 300));
    const d = r.body as ApiDiff;
    assert.deepEqual(
      d.tables.map((x) => [x.table, x.changed, x.added]),
      [
        ['other', 0, 1],
        ['t', ROWS, 0],
      ],
    );
    assert.deepEqual([d.page?.table, d.page?.total, d.page?.rows.length], ['t', ROWS, 10]);
    assert.ok(d.page?.rows.every((row) => row.op === '~'));
    const last = (await api('api/diff?left=wide&right=wide@all&table=t&offset=595&limit=10')).body as ApiDiff;
    assert.deepEqual(
      last.page?.rows.map((row) => row.key['id']),
      [596, 597, 598, 599, 600],
    );
    const first = (await api('api/diff?left=wide&right=wide@all')).body as ApiDiff;
    assert.deepEqual([first.page?.table, first.page?.rows.length], ['other', 1], 'the first changed table');
  });

  test('dashboard: what still does not fit is a 4xx saying so, never a 500', async () => {
    const big = await api('api/diff?left=wide&right=wide@all&table=t&limit=1000');
    assert.equal(big.status, 200, 'the counts stand');
    const d = big.body as ApiDiff;
    assert.equal(d.page_error?.code, 'TOO_LARGE');
    assert.match(d.page_error?.error ?? '', /too large to send/);
    assert.match(d.page_error?.hint ?? '', /limit=100\b/);
    assert.deepEqual([d.page?.total, d.page?.rows.length], [ROWS, 0]);
    const sql = await api('api/diff.sql?left=wide&right=wide@all');
    assert.equal(sql.status, 422, JSON.stringify(sql.body).slice(0, 300));
    const e = sql.body as ApiError;
    assert.equal(e.code, 'TOO_LARGE');
    assert.match(e.hint ?? '', /offshoot diff wide@main wide@all --sql/);
  });
});
