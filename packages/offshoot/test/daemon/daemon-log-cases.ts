// The branch log through real daemons, on a local store or S3: records from the wire with the origin an SDK sends,
// the log op, the CLI, durable across a restart and read by another daemon; a destroyed branch's log says who did it.
import assert from 'node:assert/strict';
import { connect, type LogReport } from '@offshoot/client';
import { sharedStore, sqlite } from './multi-daemon-store.js';

/** Runs the whole story on a store of the given kind. */
export async function daemonLogStory(kind: 'local' | 's3'): Promise<void> {
  const s = await sharedStore(kind, 30_000);
  try {
    assert.equal(s.cli(['create', 'app']).code, 0);
    const d0 = await s.daemon(0);
    const agent = await connect(d0.sock, {
      actor: 'agent',
      origin: { surface: 'sdk:test-adapter/node-test', meta: { run: 'r-1', agent: 'tester' } },
    });
    const human = await connect(d0.sock);
    try {
      await agent.fork('app', 'main', 'a1', { ttl: '1h' });
      const session = await agent.open('app', 'a1');
      sqlite(session.path, '.timeout 5000\nCREATE TABLE t(x); INSERT INTO t VALUES (1), (2);');
      const flushed = await session.flush();
      sqlite(session.path, '.timeout 5000\nINSERT INTO t VALUES (3);');
      // Someone else's flush of that session is theirs in the log, not the opener's.
      const named = await human.flush('app', 'a1', 'three');
      await session.close();
      const log = await agent.log('app', 'a1');
      assert.deepEqual(
        log.records.map((r) => [r.op, r.actor, r.surface]),
        [
          ['fork', 'agent', 'sdk:test-adapter/node-test'],
          ['flush', 'agent', 'sdk:test-adapter/node-test'],
          ['checkpoint', 'human', 'sdk:typescript'],
        ],
      );
      const flush = log.records[1];
      assert.deepEqual(flush?.meta, { run: 'r-1', agent: 'tester' });
      assert.equal(flush?.txid_after, flushed);
      assert.ok((flush?.pages ?? 0) > 0 && (flush?.bytes ?? 0) > 0, 'a flush says the pages and bytes it wrote');
      assert.equal(log.records[2]?.txid_after, named);
      assert.equal(log.records[2]?.name, 'three');
      // The wire op as it is, and the CLI at rest, read the same records.
      const wire = await d0.request({ op: 'log', db: 'app', branch: 'a1', by: 'agent' });
      assert.equal(wire.ok, true, JSON.stringify(wire));
      assert.deepEqual(
        (wire.result as LogReport).records.map((r) => r.op),
        ['fork', 'flush'],
      );
      const cli = s.cli(['log', 'app@a1', '--json']);
      assert.equal(cli.code, 0, cli.stderr);
      const doc = JSON.parse(cli.stdout) as LogReport;
      for (const r of doc.records)
        for (const f of ['op', 'branch', 'actor', 'surface', 'txid_before', 'txid_after', 'at', 'meta'])
          assert.ok(f in r, `--json records carry ${f}`);
      // A moment over the wire: the state of the first flush.
      const out = s.file('at-flush.db');
      assert.equal(await human.export('app', 'a1', out, { checkpoint: `tx:${flushed}` }), flushed);
      assert.equal(sqlite(out, 'SELECT count(*) FROM t;').trim(), '2');
    } finally {
      await agent.close();
      await human.close();
    }
    // After a restart, and from another daemon with checkouts of its own, the log is all there.
    await d0.stop();
    const d1 = await s.daemon(1);
    const again = await connect(d1.sock, { actor: 'agent', origin: { surface: 'mcp:offshoot_destroy' } });
    try {
      const log = await again.log('app', 'a1');
      assert.deepEqual(
        log.records.map((r) => r.op),
        ['fork', 'flush', 'checkpoint'],
      );
      await again.destroy('app', 'a1');
      const gone = await again.log('app', 'a1');
      assert.equal(gone.live, false);
      assert.deepEqual(
        [gone.destroyed?.op, gone.destroyed?.actor, gone.destroyed?.surface],
        ['destroy', 'agent', 'mcp:offshoot_destroy'],
      );
      const text = s.cli(['log', 'app@a1']);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /destroy +txid 3 {2}agent mcp:offshoot_destroy/);
      assert.match(text.stderr, /no longer exists/);
    } finally {
      await again.close();
      await d1.stop();
    }
  } finally {
    await s.remove();
  }
}
