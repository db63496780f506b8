// A session closed right after a foreign write must make that write durable: open → one sqlite3 insert → close,
// then the export of the head must hold the row. Repeated under CPU load from busy child processes, which is what
// stretches the windows between a commit, the close's flush and the capture engine's final drain.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import { connect } from '@offshoot/client';
import { makeStoreDir, startDaemon } from '../daemon/daemon-process.js';
import { query, runSql } from '../ops/sqlite-cli.js';

const ITERATIONS = 50;
const BUSY_CHILDREN = 2;
const DB = 'cw';

function busyChild(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

test(`close right after a foreign write keeps it, ${ITERATIONS} times under CPU load`, {
  timeout: 600_000,
}, async () => {
  const s = makeStoreDir();
  assert.equal(s.cli(['create', DB]).code, 0);
  const d = await startDaemon(s, ['-flush-every', '0', '-reap-every', '0']);
  const load = Array.from({ length: BUSY_CHILDREN }, busyChild);
  const client = await connect(d.sock);
  const out = s.file('head.db');
  const lost: string[] = [];
  try {
    // The table is made durable by an explicit flush, so that every iteration tests exactly one close.
    const setup = await client.open(DB);
    runSql(setup.path, 'CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);');
    await setup.flush();
    await setup.close();
    for (let i = 1; i <= ITERATIONS; i++) {
      const session = await client.open(DB);
      runSql(session.path, `INSERT INTO t(id, v) VALUES (${i}, 'row ${i}');`);
      await session.close();
      const txid = await client.export(DB, 'main', out, { force: true });
      // Only this iteration's row is checked: a row lost earlier stays lost and must not be counted again.
      const [mine, all] = query(out, `SELECT (SELECT count(*) FROM t WHERE id = ${i}), (SELECT count(*) FROM t);`)
        .trim()
        .split('|');
      if (mine !== '1') lost.push(`iteration ${i}: row ${i} is missing from the export of txid ${txid} (${all} rows)`);
    }
  } finally {
    for (const p of load) p.kill('SIGKILL');
    client.close();
    await d.stop();
    s.cleanup();
  }
  const unclean = d
    .stderr()
    .split('\n')
    .filter((l) => /did not stop clean|rebasing capture/.test(l));
  console.log(
    `close-after-write: ${ITERATIONS} iterations, ${lost.length} lost writes, ${unclean.length} engine log lines about unclean stops or rebases`,
  );
  if (lost.length > 0) console.log([...lost, 'daemon log:', ...d.stderr().split('\n').slice(-40)].join('\n'));
  assert.deepEqual(lost, [], 'every write committed before close is durable after it');
});
