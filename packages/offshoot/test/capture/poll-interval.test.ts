import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextPollInterval } from '../../src/capture/poll-interval.js';
import { converge, fixture, waitFor } from './capture-fixture.js';

test('quiet polls double the pause up to the idle bound; a found transaction drops it back at once', () => {
  const seen: number[] = [];
  let interval = 10;
  for (let i = 0; i < 6; i++) seen.push((interval = nextPollInterval(interval, false, 10, 100)));
  assert.deepEqual(seen, [20, 40, 80, 100, 100, 100]);
  assert.equal(nextPollInterval(100, true, 10, 100), 10);
  assert.equal(nextPollInterval(3_600_000, false, 3_600_000, 3_600_000), 3_600_000, 'a poll interval above the bound');
});

test('an engine that has backed off to its idle bound still captures the next commits', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: 2, idlePollMs: 32 });
    await engine.start();
    await waitFor('the loop to reach its idle bound', () => engine.polls >= 8);
    f.insert(3);
    await waitFor('the poll loop to capture the commits', () => f.sink.applies === 3);
    await converge(engine, f);
    assert.equal(f.sink.applies, 3, 'every commit was applied once');
  } finally {
    await f.cleanup();
  }
});

test('an engine left idle rests at its longest interval and still captures the next commits', async () => {
  const f = fixture();
  try {
    const engine = f.engine({ pollMs: 2, idlePollMs: 8, restPollMs: 40, restAfterMs: 30 });
    await engine.start();
    await waitFor('the loop to rest', () => engine.polls >= 12);
    f.insert(2);
    await waitFor('the resting loop to capture the commits', () => f.sink.applies === 2);
    await converge(engine, f);
    assert.equal(f.sink.applies, 2, 'every commit was applied once');
  } finally {
    await f.cleanup();
  }
});
