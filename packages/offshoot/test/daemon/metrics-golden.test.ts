import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DaemonMetrics, DURATION_BUCKETS } from '../../src/daemon/metrics.js';

/** The frozen surface: every family with its type, HELP text and label names. Renaming any of these breaks dashboards. */
const GOLDEN: Array<{ name: string; type: 'gauge' | 'counter' | 'histogram'; help: string; labels: string[] }> = [
  {
    name: 'offshoot_build_info',
    type: 'gauge',
    help: 'Build information; the value is always 1.',
    labels: ['version'],
  },
  { name: 'offshoot_sessions_open', type: 'gauge', help: 'Sessions open in this daemon.', labels: [] },
  {
    name: 'offshoot_sessions_evicted',
    type: 'gauge',
    help: 'Open sessions evicted to stay within -max-open: lease held, no descriptor open on the checkout.',
    labels: [],
  },
  {
    name: 'offshoot_sessions_max_open',
    type: 'gauge',
    help: 'The most sessions whose checkouts have descriptors open at once (-max-open).',
    labels: [],
  },
  {
    name: 'offshoot_capture_lag_bytes',
    type: 'gauge',
    help: 'WAL bytes committed in an open session but not yet flushed to the store.',
    labels: ['db', 'branch'],
  },
  {
    name: 'offshoot_durable_age_seconds',
    type: 'gauge',
    help: 'Seconds since an open session was last durable in the store.',
    labels: ['db', 'branch'],
  },
  {
    name: 'offshoot_gc_backlog',
    type: 'gauge',
    help: 'Tombstoned objects waiting out the GC grace period after the last pass.',
    labels: [],
  },
  {
    name: 'offshoot_ro_cache_bytes',
    type: 'gauge',
    help: 'Bytes used by read-only checkpoint checkouts, measured once per janitor pass.',
    labels: [],
  },
  {
    name: 'offshoot_flush_total',
    type: 'counter',
    help: 'Session flushes by result and kind.',
    labels: ['result', 'kind'],
  },
  {
    name: 'offshoot_fork_total',
    type: 'counter',
    help: 'Forks by path: fast reuses the source chain, slow uploads a fork point first.',
    labels: ['path'],
  },
  {
    name: 'offshoot_fork_mode_total',
    type: 'counter',
    help: 'Forks by storage class of the new branch.',
    labels: ['mode'],
  },
  { name: 'offshoot_reap_total', type: 'counter', help: 'Branches reaped after their TTL.', labels: [] },
  {
    name: 'offshoot_gc_tombstoned_total',
    type: 'counter',
    help: 'Objects tombstoned by GC as unreachable.',
    labels: [],
  },
  { name: 'offshoot_gc_deleted_total', type: 'counter', help: 'Objects deleted by GC.', labels: [] },
  { name: 'offshoot_gc_errors_total', type: 'counter', help: 'GC passes that failed.', labels: [] },
  {
    name: 'offshoot_ro_cache_evictions_total',
    type: 'counter',
    help: 'Read-only checkouts evicted to stay within the ro-cache budget.',
    labels: [],
  },
  { name: 'offshoot_janitor_runs_total', type: 'counter', help: 'Janitor ticks by result.', labels: ['result'] },
  {
    name: 'offshoot_session_evictions_total',
    type: 'counter',
    help: 'Sessions evicted to stay within -max-open (each reconnects on its next write or request).',
    labels: [],
  },
  {
    name: 'offshoot_contract_breaches_total',
    type: 'counter',
    help: 'Checkouts found out of WAL mode (journal_mode) or beside a rollback journal (rollback_journal).',
    labels: ['kind'],
  },
  {
    name: 'offshoot_requests_total',
    type: 'counter',
    help: 'Requests answered, over the socket or HTTP, by op and result.',
    labels: ['op', 'result'],
  },
  {
    name: 'offshoot_flush_duration_seconds',
    type: 'histogram',
    help: 'Duration of session flushes, auto and manual.',
    labels: [],
  },
  { name: 'offshoot_fork_duration_seconds', type: 'histogram', help: 'Duration of forks.', labels: [] },
  {
    name: 'offshoot_checkpoint_duration_seconds',
    type: 'histogram',
    help: 'Duration of at-rest checkpoints.',
    labels: [],
  },
];

interface Family {
  help?: string;
  type?: string;
  samples: Map<string, number>;
}

/** Parses the text exposition format strictly enough that a malformed line fails the test. */
function parse(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (f === undefined) families.set(name, (f = { samples: new Map() }));
    return f;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\w+) (.*)$/.exec(line);
    if (meta !== null) {
      const f = family(meta[2]!);
      if (meta[1] === 'HELP') f.help = meta[3]!;
      else f.type = meta[3]!;
      continue;
    }
    const sample = /^(\w+)(\{[^}]*\})? (\S+)$/.exec(line);
    assert.ok(sample !== null, `unparseable exposition line: ${line}`);
    let name = sample[1]!;
    let suffix = '';
    const part = /^(\w+)(_bucket|_sum|_count)$/.exec(name);
    if (part !== null && families.get(part[1]!)?.type === 'histogram') {
      name = part[1]!;
      suffix = part[2]!;
    }
    family(name).samples.set(suffix + (sample[2] ?? ''), Number(sample[3]));
  }
  return families;
}

test('the exposition has exactly the 23 golden families with their HELP and TYPE lines', async () => {
  const m = await DaemonMetrics.create('9.9.9-test');
  const text = await m.render();
  const families = parse(text);
  assert.equal(GOLDEN.length, 23);
  assert.deepEqual([...families.keys()].sort(), GOLDEN.map((g) => g.name).sort());
  for (const g of GOLDEN) {
    assert.ok(text.includes(`# HELP ${g.name} ${g.help}\n`), `HELP line of ${g.name}`);
    assert.ok(text.includes(`# TYPE ${g.name} ${g.type}\n`), `TYPE line of ${g.name}`);
    for (const key of families.get(g.name)!.samples.keys()) {
      const labels = [...key.matchAll(/(\w+)="/g)].map((x) => x[1]).filter((l) => l !== 'le');
      assert.deepEqual(labels, g.labels, `labels of ${g.name}${key}`);
    }
  }
  assert.equal(m.contentType, 'text/plain; version=0.0.4; charset=utf-8');
  assert.doesNotMatch(text, /^process_|^nodejs_/m, 'no default Node metrics');
  assert.equal(families.get('offshoot_build_info')!.samples.get('{version="9.9.9-test"}'), 1);
});

test('every label combination of the labelled counters is pre-registered at 0', async () => {
  const metrics = await DaemonMetrics.create('t');
  metrics.requestOps(['status', 'rollback']);
  const families = parse(await metrics.render());
  const expect: Record<string, string[]> = {
    offshoot_requests_total: [
      '{op="status",result="ok"}',
      '{op="status",result="error"}',
      '{op="rollback",result="ok"}',
      '{op="rollback",result="error"}',
    ],
    offshoot_flush_total: [
      '{result="ok",kind="auto"}',
      '{result="ok",kind="manual"}',
      '{result="error",kind="auto"}',
      '{result="error",kind="manual"}',
    ],
    offshoot_fork_total: ['{path="fast"}', '{path="slow"}'],
    offshoot_fork_mode_total: ['{mode="shared"}', '{mode="materialized"}'],
    offshoot_janitor_runs_total: ['{result="ok"}', '{result="error"}'],
  };
  for (const [name, keys] of Object.entries(expect)) {
    const samples = families.get(name)!.samples;
    assert.deepEqual([...samples.keys()].sort(), [...keys].sort(), name);
    for (const k of keys) assert.equal(samples.get(k), 0, `${name}${k}`);
  }
  for (const name of [
    'offshoot_reap_total',
    'offshoot_gc_tombstoned_total',
    'offshoot_gc_deleted_total',
    'offshoot_gc_errors_total',
  ]) {
    assert.equal(families.get(name)!.samples.get(''), 0, name);
  }
});

test('histograms use the fixed buckets and record observations', async () => {
  const m = await DaemonMetrics.create('t');
  m.flushed('auto', false, 0.02);
  m.flushed('manual', true, 7);
  m.forked('slow', 'materialized', 0.3);
  m.checkpointed(400);
  const families = parse(await m.render());
  const flush = families.get('offshoot_flush_duration_seconds')!.samples;
  const les = [...flush.keys()].filter((k) => k.startsWith('_bucket')).map((k) => /le="([^"]+)"/.exec(k)![1]);
  assert.deepEqual(les, [...DURATION_BUCKETS.map(String), '+Inf']);
  assert.equal(flush.get('_bucket{le="0.01"}'), 0);
  assert.equal(flush.get('_bucket{le="0.025"}'), 1);
  assert.equal(flush.get('_bucket{le="5"}'), 1);
  assert.equal(flush.get('_bucket{le="10"}'), 2);
  assert.equal(flush.get('_count'), 2);
  assert.equal(flush.get('_sum'), 7.02);
  assert.equal(families.get('offshoot_flush_total')!.samples.get('{result="error",kind="auto"}'), 1);
  assert.equal(families.get('offshoot_flush_total')!.samples.get('{result="ok",kind="manual"}'), 1);
  assert.equal(families.get('offshoot_fork_total')!.samples.get('{path="slow"}'), 1);
  assert.equal(families.get('offshoot_fork_mode_total')!.samples.get('{mode="materialized"}'), 1);
  assert.equal(families.get('offshoot_fork_duration_seconds')!.samples.get('_bucket{le="0.5"}'), 1);
  const cp = families.get('offshoot_checkpoint_duration_seconds')!.samples;
  assert.equal(cp.get('_bucket{le="300"}'), 0);
  assert.equal(cp.get('_bucket{le="+Inf"}'), 1);
});

test('janitor, GC, reap and ro-cache figures land in their families', async () => {
  const m = await DaemonMetrics.create('t');
  m.gcPass({ tombstoned: 5, deleted: 3, backlog: 9 });
  m.gcPass({ tombstoned: 0, deleted: 2, backlog: 4, error: true });
  m.reaped(2);
  m.reaped(0);
  m.janitorRun('ok');
  m.janitorRun('error');
  m.janitorRun('ok');
  m.roCache(4096, 3);
  m.roCache(1024, 0);
  m.sessionsOpen(7);
  m.maxOpen(24);
  m.sessionEvicted();
  m.sessionEvicted();
  m.contractBroken('journal_mode');
  const f = parse(await m.render());
  const v = (name: string, key = ''): number | undefined => f.get(name)!.samples.get(key);
  assert.equal(v('offshoot_gc_tombstoned_total'), 5);
  assert.equal(v('offshoot_gc_deleted_total'), 5);
  assert.equal(v('offshoot_gc_backlog'), 4);
  assert.equal(v('offshoot_gc_errors_total'), 1);
  assert.equal(v('offshoot_reap_total'), 2);
  assert.equal(v('offshoot_janitor_runs_total', '{result="ok"}'), 2);
  assert.equal(v('offshoot_janitor_runs_total', '{result="error"}'), 1);
  assert.equal(v('offshoot_ro_cache_bytes'), 1024);
  assert.equal(v('offshoot_ro_cache_evictions_total'), 3);
  assert.equal(v('offshoot_sessions_open'), 7);
  assert.equal(v('offshoot_sessions_max_open'), 24);
  assert.equal(v('offshoot_session_evictions_total'), 2);
  assert.equal(v('offshoot_contract_breaches_total', '{kind="journal_mode"}'), 1);
  assert.equal(v('offshoot_contract_breaches_total', '{kind="rollback_journal"}'), 0);
});

test('per-session gauges cover exactly the sessions the source reports at scrape time', async () => {
  const m = await DaemonMetrics.create('t');
  let f = parse(await m.render());
  assert.equal(f.get('offshoot_capture_lag_bytes')!.samples.size, 0, 'absent without a source');
  assert.equal(f.get('offshoot_durable_age_seconds')!.samples.size, 0);

  let sessions = [
    { db: 'app', branch: 'main', captureLagBytes: 4096, durableAgeSeconds: 2.5, evicted: false },
    { db: 'app', branch: 'exp', captureLagBytes: 0, durableAgeSeconds: 0, evicted: true },
  ];
  m.setSessionSource(() => sessions);
  f = parse(await m.render());
  assert.deepEqual(
    [...f.get('offshoot_capture_lag_bytes')!.samples],
    [
      ['{db="app",branch="main"}', 4096],
      ['{db="app",branch="exp"}', 0],
    ],
  );
  assert.equal(f.get('offshoot_durable_age_seconds')!.samples.get('{db="app",branch="main"}'), 2.5);
  assert.equal(f.get('offshoot_sessions_evicted')!.samples.get(''), 1);

  sessions = [{ db: 'app', branch: 'exp', captureLagBytes: 10, durableAgeSeconds: 1, evicted: false }];
  f = parse(await m.render());
  assert.deepEqual(
    [...f.get('offshoot_capture_lag_bytes')!.samples],
    [['{db="app",branch="exp"}', 10]],
    'a closed session disappears',
  );
  assert.deepEqual([...f.get('offshoot_durable_age_seconds')!.samples], [['{db="app",branch="exp"}', 1]]);
});

test('the operator docs and the Grafana dashboard use exactly the golden families', () => {
  const read = (name: string): string =>
    readFileSync(fileURLToPath(new URL(`../../../../docs/${name}`, import.meta.url)), 'utf8');
  const names = new Set(GOLDEN.map((g) => g.name));
  const dashboard = JSON.parse(read('grafana-dashboard.json')) as {
    panels: Array<{ targets?: Array<{ expr: string }> }>;
  };
  const exprs = dashboard.panels.flatMap((p) => p.targets ?? []).map((t) => t.expr);
  const used = new Set(
    exprs.flatMap((e) => [...e.matchAll(/\boffshoot_\w+/g)].map((m) => m[0].replace(/_bucket$/, ''))),
  );
  assert.deepEqual([...used].sort(), [...names].sort(), 'the dashboard covers every family and invents none');
  const doc = read('operations.md');
  // Table cells may be padded (the formatter aligns columns); the name and type cells must match exactly.
  const rows = new Set([...doc.matchAll(/^\|\s*`(offshoot_\w+)`\s*\|\s*(\w+)\s*\|/gm)].map((m) => `${m[1]} ${m[2]}`));
  for (const g of GOLDEN)
    assert.ok(rows.has(`${g.name} ${g.type}`), `docs/operations.md lists ${g.name} as a ${g.type}`);
});
