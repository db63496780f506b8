import type { BranchStatus } from './branch-status.js';
import { undoTag } from './undo-point-names.js';

/** How a branch came to hang off another: a fork, a promote onto it, or an undo point a rollback or promote kept. */
export type TreeEdgeKind = 'fork' | 'promote' | 'undo';

/** One edge of a database's branch tree: `to` was made from `from` at `txid`. */
export interface TreeEdge {
  from: string;
  to: string;
  txid: number;
  kind: TreeEdgeKind;
}

/** A ref's `parent` field (`db@branch@txid`), parsed. */
export interface ParentPointer {
  db: string;
  branch: string;
  txid: number;
}

/** Parses `db@branch@txid`; undefined for a missing or malformed value (refs written by hand). */
export function parseParent(parent: string | undefined): ParentPointer | undefined {
  const m = /^([^@]+)@([^@]+)@([0-9]+)$/.exec(parent ?? '');
  if (m === null) return undefined;
  return { db: m[1] as string, branch: m[2] as string, txid: Number(m[3]) };
}

/**
 * The kind of edge a branch's parent pointer stands for: undo points carry the tag offshoot writes on them (undoTag), a promoted
 * target has its checkpoints reset to `promote` at the parent txid, and anything else is a fork.
 */
export function edgeKind(b: BranchStatus, parentTxid: number): TreeEdgeKind {
  if (undoTag(b.meta) !== undefined) return 'undo';
  const promote = b.checkpointsV2.find((c) => c.name === 'promote');
  if (promote !== undefined && promote.txid === parentTxid && !b.checkpoints.includes('fork')) return 'promote';
  return 'fork';
}

/**
 * The edges between the branches of one database, from their parent pointers. A parent that no longer exists
 * (destroyed, reaped) or lives in another database draws no edge: the branch becomes a root of its own.
 */
export function treeEdges(branches: readonly BranchStatus[]): TreeEdge[] {
  const names = new Set(branches.map((b) => b.branch));
  const edges: TreeEdge[] = [];
  for (const b of branches) {
    const p = parseParent(b.parent);
    if (p === undefined || p.db !== b.db || !names.has(p.branch) || p.branch === b.branch) continue;
    edges.push({ from: p.branch, to: b.branch, txid: p.txid, kind: edgeKind(b, p.txid) });
  }
  return edges.sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
}
