// A daemon's overlay in front of a real local backend: a group of which nothing is held (durable forks made while
// ephemeral ones are held) reaches the backend as one group commit, tiers and all, so its directories are synced in
// one round; a group with held objects keeps them in memory and passes the rest on tier by tier.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { GroupCreateResult, NewObject } from '../../src/store/backend.js';
import { LocalBackend } from '../../src/store/local/local-backend.js';
import { OverlayBackend } from '../../src/store/overlay/overlay-backend.js';

const HELD = 'a'.repeat(32);
const DURABLE = 'b'.repeat(32);
const ANOTHER = 'c'.repeat(32);
const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

/** The real local backend, recording the tiers of each group create it is asked for. */
class RecordingLocal extends LocalBackend {
  groups: string[][][] = [];

  override createInTiers(tiers: readonly (readonly NewObject[])[]): Promise<GroupCreateResult> {
    this.groups.push(tiers.map((t) => t.map((o) => o.key)));
    return super.createInTiers(tiers);
  }
}

function fork(lineage: string, base: string, branch: string): NewObject[][] {
  return [
    [{ key: `data/${lineage}/base.json`, body: bytes(JSON.stringify({ lineage: base, txid: 1 })) }],
    [{ key: `refs/app/${branch}`, body: bytes(JSON.stringify({ lineage, base: { lineage: base, txid: 1 } })) }],
  ];
}

describe('group creates through the overlay', () => {
  let dir: string;
  let inner: RecordingLocal;
  let overlay: OverlayBackend;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'offshoot-overlay-'));
    inner = new RecordingLocal(path.join(dir, 'store'));
    overlay = new OverlayBackend(inner, path.join(dir, 'scratch'));
    overlay.holdLineage(HELD);
    overlay.holdRef('refs/app/ephemeral');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('passes a durable fork made beside held ones to the backend as one group of two tiers', async () => {
    const r = await overlay.createInTiers(fork(DURABLE, ANOTHER, 'kept'));
    assert.equal(r.failed, undefined);
    assert.deepEqual(inner.groups, [[[`data/${DURABLE}/base.json`], ['refs/app/kept']]]);
    assert.ok(await inner.stat('refs/app/kept'), 'the ref is the backend’s');
  });

  it('keeps a fork of a held lineage in memory, and passes only the rest on', async () => {
    const tiers = fork(DURABLE, HELD, 'on-held');
    const other = fork(ANOTHER, 'd'.repeat(32), 'plain');
    const r = await overlay.createInTiers([
      [...(tiers[0] ?? []), ...(other[0] ?? [])],
      [...(tiers[1] ?? []), ...(other[1] ?? [])],
    ]);
    assert.equal(r.failed, undefined);
    assert.deepEqual(inner.groups, [[[`data/${ANOTHER}/base.json`]], [['refs/app/plain']]]);
    assert.equal(await inner.stat('refs/app/on-held'), undefined, 'a ref naming a held lineage is held');
    assert.ok(await overlay.stat('refs/app/on-held'));
    assert.ok(overlay.holdsLineage(DURABLE), 'a base pointer naming a held lineage holds its own');
  });
});
