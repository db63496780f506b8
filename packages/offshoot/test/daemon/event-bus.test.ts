import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EventBus, SUBSCRIBER_BUFFER } from '../../src/daemon/event-bus.js';
import type { EventEnvelope } from '../../src/protocol/wire.js';

async function take(it: AsyncIterator<EventEnvelope>, n: number): Promise<EventEnvelope[]> {
  const out: EventEnvelope[] = [];
  for (let i = 0; i < n; i++) {
    const r = await it.next();
    assert.equal(r.done, false, `stream ended after ${i} of ${n} events`);
    out.push(r.value);
  }
  return out;
}

test('subscribers see events in publish order, with the envelope shape', async () => {
  const bus = new EventBus();
  const a = bus.subscribe();
  const b = bus.subscribe();
  bus.publish('session_opened', 'app', 'main', { holder: 'h/1', epoch: 3 });
  bus.publish('flushed', 'app', 'main', { kind: 'manual', txid: 4, duration_seconds: 0.01 });
  bus.publish('reaped', 'app', 'old');
  for (const sub of [a, b]) {
    const got = await take(sub, 3);
    assert.deepEqual(
      got.map((e) => e.type),
      ['session_opened', 'flushed', 'reaped'],
    );
    assert.deepEqual(got[0], {
      v: 1,
      ts: got[0]!.ts,
      type: 'session_opened',
      db: 'app',
      branch: 'main',
      detail: { holder: 'h/1', epoch: 3 },
    });
    assert.match(got[0]!.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.equal('detail' in got[2]!, false, 'no empty detail');
  }
  a.close();
  b.close();
  assert.equal(bus.subscriberCount, 0);
});

test('there is no replay: a subscriber only sees what is published after it subscribed', async () => {
  const bus = new EventBus();
  bus.publish('reaped', 'app', 'before');
  const sub = bus.subscribe();
  bus.publish('reaped', 'app', 'after');
  const [first] = await take(sub, 1);
  assert.equal(first!.branch, 'after');
  sub.close();
});

test('a waiting reader is woken by the next publish, and close ends its stream', async () => {
  const bus = new EventBus();
  const sub = bus.subscribe();
  const pending = sub.next();
  bus.publish('fenced', 'app', 'main', { cause: 'epoch moved' });
  assert.equal((await pending).value?.type, 'fenced');
  const waiting = sub.next();
  sub.close();
  assert.equal((await waiting).done, true);
  assert.equal((await sub.next()).done, true);
  assert.equal(bus.subscriberCount, 0);
});

test('breaking out of for-await unsubscribes', async () => {
  const bus = new EventBus();
  const sub = bus.subscribe();
  bus.publish('reaped', 'a', 'x');
  for await (const env of sub) {
    assert.equal(env.type, 'reaped');
    break;
  }
  assert.equal(bus.subscriberCount, 0);
});

test('a stalled subscriber is dropped with dropped_slow_consumer while publish never blocks', async () => {
  const bus = new EventBus();
  const stalled = bus.subscribe();
  const live = bus.subscribe();
  const received: number[] = [];
  const reader = (async () => {
    for await (const env of live) {
      received.push(env.detail?.['n'] as number);
      if (received.length === 5000) return;
    }
  })();

  const started = performance.now();
  for (let n = 0; n < 5000; n++) {
    bus.publish('flushed', 'app', 'main', { kind: 'auto', txid: n, n });
    // Let the live reader run now and then, as a real event loop would; the stalled one never reads.
    if (n % 32 === 31) await new Promise<void>((r) => setImmediate(r));
  }
  const elapsed = performance.now() - started;
  await reader;
  assert.equal(received.length, 5000, 'the reading subscriber got everything');
  assert.deepEqual(received.slice(0, 3), [0, 1, 2]);
  assert.equal(received.at(-1), 4999);
  // Far above what a loaded machine needs (a few hundred ms), far below a publish that waited on the stalled reader.
  assert.ok(elapsed < 20_000, `5000 publishes took ${elapsed.toFixed(0)} ms`);

  const kept: EventEnvelope[] = [];
  for await (const env of stalled) kept.push(env);
  assert.equal(kept.length, SUBSCRIBER_BUFFER + 1);
  assert.deepEqual(
    kept.slice(0, SUBSCRIBER_BUFFER).map((e) => e.detail?.['n']),
    Array.from({ length: SUBSCRIBER_BUFFER }, (_, i) => i),
  );
  assert.equal(kept.at(-1)!.type, 'dropped_slow_consumer');
  assert.equal(bus.subscriberCount, 0, 'the stalled subscriber left; the live one finished');
});

test('publishing to a bus with many stalled subscribers returns at once', () => {
  const bus = new EventBus();
  const subs = Array.from({ length: 100 }, () => bus.subscribe());
  const started = performance.now();
  for (let n = 0; n < 10_000; n++) bus.publish('evicted', 'app', 'main', { checkpoint: 'c', bytes: n });
  const elapsed = performance.now() - started;
  assert.equal(bus.subscriberCount, 0, 'all were dropped');
  // Far above what a loaded machine needs, far below publishes that each did work for every stalled subscriber.
  assert.ok(elapsed < 10_000, `10000 publishes to 100 stalled subscribers took ${elapsed.toFixed(0)} ms`);
  for (const s of subs) s.close();
});
