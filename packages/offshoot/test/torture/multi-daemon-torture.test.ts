// Many-daemons torture: three `offshoot serve` processes on one local store, each with its own socket and checkout
// root, and one branch per lane with a stock sqlite3 writer on whichever daemon holds it. Each round every lane
// writes and flushes through its daemon; now and then a daemon is SIGKILLed (idle, or with a flush in flight) and
// restarted, and its lanes move to other daemons once their leases expire; GC passes race from all daemons, and
// at-rest commands against leased lanes must be refused. Whatever a daemon reported durable must restore exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Prng } from '../ops/prng.js';
import { LineClient, until, type DaemonProcess } from '../daemon/daemon-process.js';
import { dumpOf, durableDump, sharedStore, slowRequest, sqlite } from '../daemon/multi-daemon-store.js';

const SECONDS = Number(process.env.OFFSHOOT_TORTURE_SECONDS ?? 5);
const SEED = Number(process.env.OFFSHOOT_TORTURE_SEED ?? Date.now() % 2 ** 31);
const DAEMONS = 3;
const LANES = 3;
const LEASE_MS = 1000;

interface Lane {
  branch: string;
  owner: number;
  checkout: string;
  /** What the branch's head must restore to: the checkout's dump when its last flush was reported. */
  durable: string;
  rows: number;
}

test(`three daemons, ${LANES} lanes, ${SECONDS}s (seed ${SEED})`, { timeout: (SECONDS + 120) * 1000 }, async () => {
  const rng = new Prng(SEED);
  const s = await sharedStore('local', LEASE_MS);
  const daemons: DaemonProcess[] = [];
  const tally = { rounds: 0, kills: 0, midFlushKills: 0, moves: 0, gcPasses: 0, gcBusy: 0, refusals: 0 };
  try {
    assert.equal(s.cli(['create', 'app']).code, 0);
    for (let i = 0; i < DAEMONS; i++) daemons.push(await s.daemon(i));
    const lanes: Lane[] = [];
    for (let l = 0; l < LANES; l++) {
      const branch = `lane${l}`;
      assert.equal(s.cli(['fork', 'app', branch]).code, 0);
      const open = await daemons[l % DAEMONS]!.request({ op: 'open', db: 'app', branch });
      assert.equal(open.ok, true, open.error);
      const checkout = open.checkout ?? '';
      sqlite(checkout, 'CREATE TABLE w(lane, n, v);\n');
      lanes.push({ branch, owner: l % DAEMONS, checkout, durable: '', rows: 0 });
    }
    const flush = async (lane: Lane): Promise<void> => {
      const f = await daemons[lane.owner]!.request({ op: 'flush', db: 'app', branch: lane.branch });
      assert.equal(f.ok, true, `${lane.branch} on d${lane.owner}: ${f.error}`);
      lane.durable = dumpOf(lane.checkout);
    };
    for (const lane of lanes) await flush(lane);

    const deadline = Date.now() + SECONDS * 1000;
    while (Date.now() < deadline) {
      tally.rounds++;
      await Promise.all(
        lanes.map(async (lane) => {
          const n = rng.int(1, 20);
          const values = Array.from(
            { length: n },
            (_, i) => `(${lane.branch.at(-1)}, ${lane.rows + i}, randomblob(${rng.int(1, 3000)}))`,
          );
          sqlite(lane.checkout, `INSERT INTO w VALUES ${values.join(',')};\n`);
          lane.rows += n;
          await flush(lane);
        }),
      );
      if (rng.chance(0.3)) {
        const gcs = await Promise.all(daemons.map((d) => slowRequest(d, { op: 'gc', grace: '0s' })));
        for (const g of gcs) {
          if (g.ok) tally.gcPasses++;
          else {
            assert.match(g.error ?? '', /another GC pass is running/);
            tally.gcBusy++;
          }
        }
      }
      if (rng.chance(0.2)) {
        const lane = lanes[rng.int(0, LANES - 1)]!;
        const r = s.cli(['checkpoint', `app@${lane.branch}`, `sneak${tally.rounds}`]);
        assert.equal(r.code, 6, `an at-rest checkpoint of a leased lane is refused: ${r.stderr}`);
        tally.refusals++;
      }
      if (rng.chance(0.25)) {
        const victim = rng.int(0, DAEMONS - 1);
        const moving = lanes.filter((l) => l.owner === victim);
        const inFlight = new Map<Lane, string>();
        let pending: LineClient | undefined;
        if (moving.length > 0 && rng.chance(0.5)) {
          const lane = moving[0]!;
          sqlite(lane.checkout, `INSERT INTO w VALUES (${lane.branch.at(-1)}, ${lane.rows++}, 'in flight');\n`);
          inFlight.set(lane, dumpOf(lane.checkout));
          pending = await LineClient.connect(daemons[victim]!.sock);
          pending.send(`${JSON.stringify({ op: 'flush', db: 'app', branch: lane.branch })}\n`);
          tally.midFlushKills++;
        }
        daemons[victim]!.proc.kill('SIGKILL');
        await daemons[victim]!.exited;
        pending?.close();
        tally.kills++;
        daemons[victim] = await s.daemon(victim);
        for (const lane of moving) {
          const to = (victim + rng.int(1, DAEMONS - 1)) % DAEMONS;
          let opened = await daemons[to]!.request({ op: 'open', db: 'app', branch: lane.branch });
          await until(
            async () => {
              if (!opened.ok) opened = await daemons[to]!.request({ op: 'open', db: 'app', branch: lane.branch });
              return opened.ok === true;
            },
            `${lane.branch}'s lease to expire`,
            LEASE_MS * 20,
          );
          lane.owner = to;
          lane.checkout = opened.checkout ?? '';
          const got = dumpOf(lane.checkout);
          const allowed = [lane.durable, inFlight.get(lane)].filter((d) => d !== undefined);
          assert.ok(
            allowed.includes(got),
            `round ${tally.rounds}: ${lane.branch} restored what d${victim} reported durable`,
          );
          lane.durable = got;
          tally.moves++;
        }
      }
    }
    for (const lane of lanes)
      assert.equal(durableDump(s, `app@${lane.branch}`), lane.durable, `${lane.branch} at the end`);
    process.stderr.write(`multi-daemon torture: seed ${SEED} ${JSON.stringify(tally)}\n`);
  } finally {
    await Promise.all(daemons.map((d) => d.stop()));
    s.cleanup();
  }
});
