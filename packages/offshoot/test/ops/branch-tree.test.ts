// The dashboard's tree edges from parent pointers: kinds, and the parents that draw no edge.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseParent, treeEdges } from '../../src/ops/helpers/branch/branch-tree.js';
import type { BranchStatus } from '../../src/ops/branch-view.js';

function branch(name: string, over: Partial<BranchStatus> = {}): BranchStatus {
  return {
    db: 'app',
    branch: name,
    state: 'idle',
    storage: 'shared',
    txid: 5,
    checkpoints: ['fork'],
    checkpointsV2: [{ name: 'fork', txid: 3, createdAt: undefined, meta: undefined }],
    protected: false,
    checkedOut: false,
    ttl: undefined,
    remaining: undefined,
    leaseHolder: undefined,
    leaseExpiry: undefined,
    touchedAt: undefined,
    parent: undefined,
    meta: undefined,
    ...over,
  };
}

describe('treeEdges', () => {
  it('parses parent pointers and refuses malformed ones', () => {
    assert.deepEqual(parseParent('app@main@12'), { db: 'app', branch: 'main', txid: 12 });
    assert.equal(parseParent('app@main'), undefined);
    assert.equal(parseParent('app@main@x'), undefined);
    assert.equal(parseParent(undefined), undefined);
  });

  it('tells forks, promotes and undo points apart, and drops edges to missing or foreign parents', () => {
    const edges = treeEdges([
      branch('main', {
        parent: 'app@b@7',
        checkpoints: ['promote'],
        checkpointsV2: [{ name: 'promote', txid: 7, createdAt: undefined, meta: undefined }],
      }),
      branch('b', { parent: 'app@main@3' }),
      branch('main-pre-promote', {
        parent: 'app@main@4',
        meta: { 'offshoot.safety': 'pre-promote', 'offshoot.of': 'main' },
      }),
      branch('orphan', { parent: 'app@reaped@2' }),
      branch('foreign', { parent: 'other@main@2' }),
      branch('self', { parent: 'app@self@1' }),
    ]);
    assert.deepEqual(edges, [
      { from: 'b', to: 'main', txid: 7, kind: 'promote' },
      { from: 'main', to: 'b', txid: 3, kind: 'fork' },
      { from: 'main', to: 'main-pre-promote', txid: 4, kind: 'undo' },
    ]);
  });
});
