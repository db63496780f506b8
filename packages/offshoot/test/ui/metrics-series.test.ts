// The dashboard's time series reads the daemon's own Prometheus text: counters summed over their labels, as deltas.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { counterTotals, MetricsSeries } from '../../src/ui/metrics-series.js';

const exposition = (flushOk: number, reaped: number): string =>
  [
    '# HELP offshoot_flush_total Session flushes.',
    '# TYPE offshoot_flush_total counter',
    `offshoot_flush_total{result="ok",kind="auto"} ${flushOk}`,
    'offshoot_flush_total{result="error",kind="manual"} 1',
    'offshoot_fork_total{path="fast"} 2',
    'offshoot_fork_total{path="slow"} 0',
    'offshoot_janitor_runs_total{result="ok"} 7',
    `offshoot_reap_total ${reaped}`,
    'offshoot_flush_duration_seconds_count 99',
  ].join('\n');

test('counterTotals sums each family over its labels and ignores everything else', () => {
  assert.deepEqual(counterTotals(exposition(3, 4)), { flushes: 4, forks: 2, gc_passes: 7, reaped: 4 });
});

test('MetricsSeries records the change between samples', async () => {
  let text = exposition(3, 0);
  const series = new MetricsSeries(async () => text, 3600);
  try {
    await series.sample();
    text = exposition(8, 1);
    await series.sample();
    const got = series.samples().map(({ ts: _ts, ...rest }) => rest);
    assert.deepEqual(got.at(-1), { flushes: 5, forks: 0, gc_passes: 0, reaped: 1 });
  } finally {
    series.stop();
  }
});
