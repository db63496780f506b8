// `--check` on rollback, promote and destroy: every refusal the verb would meet for who asks (--actor), nothing
// changed; under --json a refusal the human may lift says so (human_can_allow), and rollback reports `protected`.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { refsSnapshot } from '../mcp/mcp-harness.js';
import { assertCleanError, ensureBuilt, tempStore, type TempStore } from './cli-harness.js';

const CONFLICT = 4;
const PROTECTED = 5;

describe('offshoot rollback, promote and destroy --check', () => {
  let ts: TempStore;
  const refs = () => refsSnapshot(ts.store);
  before(() => {
    ensureBuilt();
    ts = tempStore({ init: true });
    ts.run(['create', 'app']);
    ts.run(['fork', 'app', 'work']);
  });
  after(() => ts.cleanup());

  test('a check that would go ahead says so and changes nothing', () => {
    const before = refs();
    const doc = ts.json(['promote', 'app@work', '--onto', 'main', '--force', '--check']);
    assert.deepEqual(doc, { verb: 'promote', db: 'app', branch: 'work', allowed: true });
    assert.match(ts.run(['destroy', 'app@work', '--check']).stdout, /destroy of app@work would go ahead/);
    assert.equal(ts.json<{ allowed: boolean }>(['rollback', 'app@work', '--to', 'fork', '--check']).allowed, true);
    assert.deepEqual(refs(), before);
  });

  test("promote --check runs --if-head's compare-and-swap", () => {
    const head = ts.json<{ txid: number }>(['fork', 'app', 'cas']).txid;
    const promote = ['promote', 'app@cas', '--onto', 'main', '--force', '--check', '--if-head'];
    assert.match(ts.run([...promote, String(head)]).stdout, /would go ahead/);
    assertCleanError(
      ts.run([...promote, String(head + 1)], { expectCode: 'any' }),
      CONFLICT,
      new RegExp(`app@main moved since txid ${head + 1}`),
    );
    ts.run(['destroy', 'app@cas']);
  });

  test("an agent's check is refused as the verb would be, liftable under --json", () => {
    const before = refs();
    const r = ts.run(['promote', 'app@work', '--onto', 'main', '--force', '--check', '--actor', 'agent', '--json'], {
      expectCode: PROTECTED,
    });
    const err = (JSON.parse(r.stderr.trim().split('\n').at(-1) ?? '') as { error: Record<string, unknown> }).error;
    assert.equal(err['code'], 'PROTECTED');
    assert.equal(err['human_can_allow'], true);
    const allowed = [
      'promote',
      'app@work',
      '--onto',
      'main',
      '--force',
      '--check',
      '--actor',
      'agent',
      '--allow-force',
    ];
    assert.match(ts.run(allowed).stdout, /would go ahead/);
    assertCleanError(
      ts.run(['destroy', 'app', '--check', '--actor', 'agent'], { expectCode: 'any' }),
      PROTECTED,
      /protected/,
    );
    assert.deepEqual(refs(), before);
  });

  test('rollback --json says whether the branch is protected', () => {
    assert.equal(ts.json<{ protected: boolean }>(['rollback', 'app@work', '--to', 'fork']).protected, false);
    assert.equal(ts.json<{ protected: boolean }>(['rollback', 'app', '--to', 'init']).protected, true);
  });
});
