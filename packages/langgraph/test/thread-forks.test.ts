import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { type Client, connect, isOffshootError, sanitizeName } from '@offshoot/client';
import { startDaemon, type TestDaemon } from '@offshoot/client/testkit';
import { ThreadForks } from '../src/index.js';
import './daemon-fixture.js';

// Computed with the Python SDK's rule; a thread maps to the same branch from either language.
const VECTORS: [string, string][] = [
  ['thread-1', 'thread-1-4b0a5fef'],
  ['THREAD-1', 'thread-1-91046cfb'],
  ['User 42', 'user-42-d4e60774'],
  ['Alice@Example.com', 'alice-example-com-f8db6f2f'],
  ['', 'id-e3b0c442'],
  ['___', 'id-bda25155'],
  ['a'.repeat(60), `${'a'.repeat(40)}-11ee3912`],
  ['é日本', 'id-ef670660'],
  ['550e8400-e29b-41d4-a716-446655440000', '550e8400-e29b-41d4-a716-446655440000-a3a9e1ed'],
  [`${'x'.repeat(39)}-y`, `${'x'.repeat(39)}-36cb42cc`],
];

function sql(path: string, text: string): string {
  return execFileSync('sqlite3', ['-bail', path, text], { encoding: 'utf8' }).trim();
}

test('sanitizeName matches the Python rule: lowercase, runs to "-", 40-char body, 8 hex of SHA-256 of the raw id', () => {
  for (const [raw, want] of VECTORS) assert.equal(sanitizeName(raw), want, raw);
  assert.equal(sanitizeName(42), sanitizeName('42'));
});

describe('ThreadForks on a real daemon', { timeout: 120_000 }, () => {
  let daemon: TestDaemon;
  let client: Client;
  before(async () => {
    daemon = await startDaemon({ serveArgs: ['-flush-every', '0'] });
    client = await connect(daemon.sock);
    await client.create('app');
    const seed = await client.open('app');
    sql(seed.path, "CREATE TABLE notes(body TEXT); INSERT INTO notes VALUES ('seed');");
    await seed.flush('seeded');
    await seed.close();
  });
  after(async () => {
    client.close();
    await daemon.stop();
  });

  test('each thread gets its own fork of the base; checkpoints are named after LangGraph ids', async () => {
    const forks = new ThreadForks(client, 'app');
    assert.equal(forks.branchFor('User 42'), 'thread-user-42-d4e60774');
    const a = await forks.path('User 42');
    assert.equal(await forks.path('User 42'), a, 'a thread is forked once');
    const b = await forks.path('other');
    sql(a, "INSERT INTO notes VALUES ('a1');");
    const cp = '1ef4f797-8335-6428-8001-8a1503f9b875';
    assert.ok((await forks.checkpoint('User 42', cp)) > 0);
    sql(a, "INSERT INTO notes VALUES ('a2');");
    assert.equal(sql(b, 'SELECT group_concat(body) FROM notes;'), 'seed');

    const rewound = await forks.forkThread('User 42', cp, 'User 42 (rewind)');
    assert.equal(sql(rewound, 'SELECT group_concat(body) FROM notes;'), 'seed,a1');
    const info = (await client.branches('app')).find((x) => x.branch === forks.branchFor('User 42'));
    assert.deepEqual(info?.checkpoints.includes(sanitizeName(cp)), true);
    assert.equal(info?.ttl, '24h0m0s');

    await assert.rejects(forks.forkThread('nobody', cp, 'n2'), (e) => isOffshootError(e, 'NOT_FOUND'));
    await assert.rejects(forks.forkThread('User 42', cp, 'other'), (e) => isOffshootError(e, 'ALREADY_EXISTS'));
    await assert.rejects(forks.forkThread('User 42', 'never-recorded', 'n3'), (e) => isOffshootError(e, 'NOT_FOUND'));
    await forks.close('other');
    await forks.close();
    assert.deepEqual(
      (await client.status()).filter((s) => s.db === 'app'),
      [],
    );
  });
});
