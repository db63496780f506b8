// The front door of ops: the one view of a branch (BranchStatus, from which every surface's JSON derives) and what
// a surface shows beside it: why a reap waits, how to undo what an undo point keeps, a branch's chain, the tree of a
// database, which branches still read shared objects, and the watch that says when a ref changed.

export { type BranchChain, branchChain } from './helpers/branch/branch-chain.js';
export { leaseLiveNow } from './helpers/branch/branch-ref.js';
export type { BranchState } from './helpers/branch/branch-state.js';
export type { BranchStatus, CheckpointStatus, UnreadableRef } from './helpers/branch/branch-status.js';
export { parseParent, type TreeEdge, treeEdges } from './helpers/branch/branch-tree.js';
export { type BranchLineage, readsShared } from './helpers/branch/reads-shared.js';
export { type ReapHold, reapHoldText } from './helpers/branch/reap-hold.js';
export { undoCommand } from './helpers/branch/undo-command.js';
export { type RefChange, RefWatch } from './helpers/context/ref-watch.js';
