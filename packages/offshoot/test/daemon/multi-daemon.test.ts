// Three daemons serving one store at once (a local directory, and a bucket on the S3 test server), each with its own
// socket and checkout root: sessions on different branches with a stock sqlite3 writer each; a daemon SIGKILLed
// mid-flush whose branch another takes over once the lease expires, with nothing it reported durable lost; at-rest
// commands against a branch leased elsewhere refused with nothing changed; GC passes from all three at once.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseLeaseHolder } from '../../src/ops/helpers/context/lease-holder.js';
import { processSpace } from '../../src/platform/process-space.js';
import type { Response } from '../../src/protocol/wire.js';
import { S3_ENDPOINT, S3_SERVER } from '../store/s3-test-env.js';
import { LineClient, until, type DaemonProcess } from './daemon-process.js';
import {
  dumpOf,
  durableDump,
  killDaemon,
  otherMachine,
  sharedStore,
  slowRequest,
  sqlite,
  type SharedStore,
} from './multi-daemon-store.js';

// Renewed every third of it: long enough that a loaded machine never lets a live daemon's lease lapse.
const LEASE_MS = 6000;
// The daemon killed as if on another machine: long enough that a refusal right after the kill is certain.
const FAR_LEASE_MS = 6000;

/** True once a session of this checkout root is writing a flush's LTX file (the flush is under way). */
function flushStaged(root: string): boolean {
  const sessions = path.join(root, '.scratch', 'sessions');
  try {
    return readdirSync(sessions).some((d) => {
      try {
        return readdirSync(path.join(sessions, d)).some((f) => /^flush-\d+\.ltx$/.test(f));
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

// Under RGW (make test-rgw) only the bucket variant runs; the local one already ran in make test.
const KINDS = S3_SERVER === 'rgw' ? (['s3'] as const) : (['local', 's3'] as const);

for (const kind of KINDS) {
  describe(`three daemons on one ${kind} store`, { concurrency: false }, () => {
    if (kind === 's3' && S3_ENDPOINT === undefined) {
      it('needs the S3 test server', {
        skip: process.env.CI !== 'true' && 'run through scripts/with-s3-server.sh',
      }, () => {
        assert.fail('OFFSHOOT_TEST_S3_ENDPOINT is not set; run through scripts/with-s3-server.sh (make test does)');
      });
      return;
    }
    let s: SharedStore;
    const daemons: DaemonProcess[] = [];
    const checkouts: string[] = [];
    const holders: string[] = [];
    const durable: string[] = [];

    before(async () => {
      s = await sharedStore(kind, LEASE_MS);
      assert.equal(s.cli(['create', 'app']).code, 0);
      for (let i = 0; i < 3; i++) assert.equal(s.cli(['fork', 'app', `b${i}`]).code, 0);
      for (let i = 0; i < 3; i++) daemons.push(await s.daemon(i));
    });
    after(async () => {
      await Promise.all(daemons.map((d) => d.stop()));
      await s?.remove();
    });

    it('serves a session per daemon on different branches, each with its own sqlite3 writer', async () => {
      for (let i = 0; i < 3; i++) {
        const open = await daemons[i]!.request({ op: 'open', db: 'app', branch: `b${i}` });
        assert.equal(open.ok, true, open.error);
        checkouts.push(open.checkout ?? '');
        assert.ok(checkouts[i]!.startsWith(s.file(`co${i}`)), 'each daemon checks out under its own root');
      }
      for (let i = 0; i < 3; i++) {
        sqlite(checkouts[i]!, `CREATE TABLE w(i, v); INSERT INTO w VALUES (${i}, 'first');\n`);
        const f = await daemons[i]!.request({ op: 'flush', db: 'app', branch: `b${i}`, name: 'one' });
        assert.equal(f.ok, true, f.error);
        durable.push(dumpOf(checkouts[i]!));
      }
      const st = await Promise.all(daemons.map((d) => d.request({ op: 'status' })));
      for (let i = 0; i < 3; i++) {
        const sess = st[i]!.sessions ?? [];
        assert.equal(sess.length, 1);
        holders.push(sess[0]!.holder);
        assert.match(sess[0]!.holder, /^[^/]+\/[0-9]+\/[0-9a-f]{16}$/, 'host/pid/random id');
      }
      assert.equal(new Set(holders).size, 3, 'every daemon leases under its own identity');
      for (let i = 0; i < 3; i++) assert.equal(durableDump(s, `app@b${i}`), durable[i]);
    });

    it('refuses an at-rest command on a branch leased by another daemon, and changes nothing', async () => {
      const before = await daemons[0]!.request({ op: 'branches', db: 'app' });
      const attempts: string[][] = [
        ['touch', 'app@b2', '--ttl', '1h'],
        ['checkpoint', 'app@b2', 'sneak'],
        ['destroy', 'app@b2', '--force'],
        ['rollback', 'app@b2', '--to', 'one'],
        ['compact', 'app@b2'],
        ['protect', 'app@b2'],
        ['promote', 'app@b0', '--onto', 'b2', '--force'],
      ];
      for (const args of attempts) {
        const r = s.cli(args);
        assert.equal(r.code, 6, `${args.join(' ')}: ${r.stderr}`);
        assert.ok(r.stderr.includes(holders[2]!), `${args.join(' ')} names the holder: ${r.stderr}`);
      }
      const viaDaemon = await daemons[0]!.request({ op: 'touch', db: 'app', branch: 'b2', ttl: '1h' });
      assert.equal(viaDaemon.ok, false);
      assert.match(viaDaemon.error ?? '', /leased by/);
      assert.deepEqual(await daemons[0]!.request({ op: 'branches', db: 'app' }), before);
      assert.equal(durableDump(s, 'app@b2'), durable[2]);
      // The daemon whose session holds the lease may touch the branch: its session's lease covers it.
      const own = await daemons[2]!.request({ op: 'touch', db: 'app', branch: 'b2', ttl: '1h' });
      assert.equal(own.ok, true, own.error);
    });

    it('a daemon SIGKILLed mid-flush loses its leases (at once on its own host, else on expiry); another takes the branch over with everything durable', async () => {
      sqlite(checkouts[0]!, `INSERT INTO w VALUES (0, 'second');\n`);
      const inFlight = dumpOf(checkouts[0]!);
      const c = await LineClient.connect(daemons[0]!.sock);
      c.send(`${JSON.stringify({ op: 'flush', db: 'app', branch: 'b0' })}\n`);
      daemons[0]!.proc.kill('SIGKILL');
      await daemons[0]!.exited;
      c.close();

      const early = await daemons[1]!.request({ op: 'open', db: 'app', branch: 'b0' });
      if (!early.ok) assert.match(early.error ?? '', new RegExp(`leased by ${holders[0]!.replace(/[.]/g, '\\.')}`));
      let opened = early;
      await until(
        async () => {
          if (!opened.ok) opened = await daemons[1]!.request({ op: 'open', db: 'app', branch: 'b0' });
          return opened.ok === true;
        },
        'the dead daemon’s lease to expire',
        LEASE_MS * 10,
      );
      const taken = dumpOf(opened.checkout ?? '');
      assert.ok(
        taken === durable[0] || taken === inFlight,
        'the takeover sees the last durable state (or the flush that landed)',
      );
      assert.equal(durableDump(s, 'app@b0'), taken);
      sqlite(opened.checkout ?? '', `INSERT INTO w VALUES (1, 'took over');\n`);
      const f = await daemons[1]!.request({ op: 'flush', db: 'app', branch: 'b0', name: 'after' });
      assert.equal(f.ok, true, f.error);
      assert.equal(durableDump(s, 'app@b0'), dumpOf(opened.checkout ?? ''));
      assert.equal(durableDump(s, 'app@b0@one'), durable[0]);
    });

    it('a daemon SIGKILLed mid-flush where the shortcut cannot see it (as on another machine) keeps its lease until it expires; then another daemon takes the branch over with everything it reported durable', async (t) => {
      const m = otherMachine();
      t.diagnostic(
        `the killed daemon runs in ${m.how === 'pid namespace' ? 'a pid namespace of its own' : 'OFFSHOOT_HOST=another-machine'}`,
      );
      assert.equal(s.cli(['fork', 'app', 'far']).code, 0);
      const far = await s.daemon(3, [], {
        env: { ...m.env, OFFSHOOT_LEASE_TTL_MS: String(FAR_LEASE_MS) },
        launcher: m.launcher,
      });
      daemons.push(far);
      const open = await far.request({ op: 'open', db: 'app', branch: 'far' });
      assert.equal(open.ok, true, open.error);
      const co = open.checkout ?? '';
      const holder = (await far.request({ op: 'status' })).sessions?.[0]?.holder ?? '';
      const h = parseLeaseHolder(holder);
      assert.ok(h?.id !== undefined, holder);
      assert.notEqual(`${h?.host}:${h?.pidns}`, processSpace(), 'its lease names another host or pid namespace');

      sqlite(co, `CREATE TABLE w(i, v); INSERT INTO w VALUES (0, 'reported');\n`);
      const f = await far.request({ op: 'flush', db: 'app', branch: 'far', name: 'one' });
      assert.equal(f.ok, true, f.error);
      const reported = dumpOf(co);
      // Some MiB of new pages, so the next flush takes long enough to be caught in the middle.
      sqlite(
        co,
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO w SELECT i, randomblob(4096) FROM n;\n`,
      );
      const inFlight = dumpOf(co);
      const c = await LineClient.connect(far.sock);
      let answered = false;
      c.socket.on('data', () => {
        answered = true;
      });
      c.send(`${JSON.stringify({ op: 'flush', db: 'app', branch: 'far' })}\n`);
      await until(() => answered || flushStaged(s.file('co3')), 'the flush to get under way', 60_000);
      const midFlush = !answered;
      await killDaemon(far, m);
      const reply: Response | undefined = answered ? await c.next(1000) : undefined;
      c.close();
      t.diagnostic(midFlush ? 'killed while its flush was writing' : 'the flush answered before the kill');

      const openFar = { op: 'open', db: 'app', branch: 'far' };
      const early = await daemons[1]!.request(openFar);
      assert.equal(early.ok, false, 'the lease of a daemon that may still be alive elsewhere stands');
      const until_ = new RegExp(`leased by ${holder.replace(/[.]/g, '\\.')} until (\\S+)`).exec(early.error ?? '');
      assert.ok(until_, `the refusal names the dead daemon: ${early.error}`);
      const expiry = Date.parse(until_[1] ?? '');
      let opened = early;
      await until(
        async () => {
          opened = await daemons[1]!.request(openFar);
          if (!opened.ok) assert.match(opened.error ?? '', /leased by /);
          return opened.ok === true;
        },
        'the dead daemon’s lease to expire',
        FAR_LEASE_MS * 10,
      );
      assert.ok(Date.now() >= expiry, 'the branch is taken over only once the lease ran out');
      const taken = dumpOf(opened.checkout ?? '');
      if (reply?.ok === true) assert.equal(taken, inFlight, 'a flush reported durable is there');
      else assert.ok(taken === reported || taken === inFlight, 'the takeover sees what was reported durable');
      assert.equal(durableDump(s, 'app@far'), taken);
      assert.equal(durableDump(s, 'app@far@one'), reported);
      sqlite(opened.checkout ?? '', `INSERT INTO w VALUES (1, 'took over');\n`);
      const after = await daemons[1]!.request({ op: 'flush', db: 'app', branch: 'far', name: 'after' });
      assert.equal(after.ok, true, after.error);
      assert.equal(durableDump(s, 'app@far'), dumpOf(opened.checkout ?? ''));
      const closed = await daemons[1]!.request({ op: 'close', db: 'app', branch: 'far' });
      assert.equal(closed.ok, true, closed.error);
    });

    it('GC passes from several daemons at once run one at a time and keep every live object', async () => {
      for (let i = 0; i < 4; i++) assert.equal(s.cli(['fork', 'app@b1', `tmp${i}`]).code, 0);
      const racing = [
        ...[1, 2].flatMap((i) => [0, 1].map(() => slowRequest(daemons[i]!, { op: 'gc', grace: '0s' }))),
        s.cli(['destroy', 'app@tmp0']).code,
        daemons[2]!.request({ op: 'fork', db: 'app', branch: 'b2', name: 'late' }),
        daemons[1]!.request({ op: 'destroy', db: 'app', branch: 'tmp1' }),
      ];
      const results = await Promise.all(racing);
      for (const r of results.slice(0, 4)) {
        const res = r as { ok: boolean; error?: string };
        if (!res.ok) assert.match(res.error ?? '', /another GC pass is running/);
      }
      for (let i = 0; i < 2; i++) {
        const g = await slowRequest(daemons[1]!, { op: 'gc', grace: '0s' });
        assert.equal(g.ok, true, g.error);
      }
      for (let i = 1; i < 3; i++) {
        const f = await daemons[i]!.request({ op: 'flush', db: 'app', branch: `b${i}` });
        assert.equal(f.ok, true, f.error);
      }
      assert.equal(durableDump(s, 'app@b2'), durable[2]);
      assert.equal(durableDump(s, 'app@late'), durable[2]);
      assert.equal(durableDump(s, 'app@tmp2'), durableDump(s, 'app@b1@one'));
      assert.equal(durableDump(s, 'app@b0@one'), durable[0]);
    });
  });
}
