// The engine as a library: what the CLI and the daemon are built from, for programs that embed offshoot directly
// (no daemon). Open a Store, make a context with makeContext, then call the verbs.

export type { Duration, TtlArg } from './core/duration.js';
export { formatDuration, parseDuration, parseTtl } from './core/duration.js';
export { type ErrorCode, hasCode, hintFor, OffshootError, type Surface } from './core/errors.js';
export type { Meta } from './core/meta.js';
export type { Ref } from './core/ref.js';
export { formatTarget, MAIN_BRANCH, parseTarget, type Target } from './core/target.js';
export { checkoutRootFor } from './cli/checkout-root.js';
export { type CheckoutResult, checkout } from './ops/checkout.js';
export { checkoutAt } from './ops/checkout-at.js';
export { type CheckpointResult, checkpoint } from './ops/checkpoint.js';
export { type CompactResult, compact } from './ops/compact.js';
export { type CreateResult, create } from './ops/create.js';
export { type DestroyResult, destroy } from './ops/destroy.js';
export { diff } from './ops/diff.js';
export { exportTo } from './ops/export.js';
export { type ForkManyResult, type ForkOptions, type ForkResult, fork, forkMany } from './ops/fork.js';
export { type CollectReport, collectGarbage, type GcReport, runGc } from './ops/gc.js';
export { type OpsContext, makeContext, type ProgressSink } from './ops/context.js';
export { acquireLease, type LeaseInfo, listLeases, releaseLease } from './ops/lease.js';
export { type MergeConflict, type MergeOptions, type MergeResult, merge } from './ops/merge.js';
export { type PromoteResult, promote } from './ops/promote.js';
export { type ProtectResult, setProtected } from './ops/protect.js';
export type { Actor } from './ops/policy.js';
export { type ReapReport, reap } from './ops/reap.js';
export { type RollbackResult, rollback } from './ops/rollback.js';
export type { BranchStatus, UnreadableRef } from './ops/branch-view.js';
export { type StatusReport, status } from './ops/status.js';
export { type TouchResult, touch } from './ops/touch.js';
export type { DiffResult } from './sqlite/diff/diff-types.js';
export { Store, type VersionedRef } from './store/store.js';
export { canonicalStore, parseStoreSpec, resolveStoreSpec, type StoreSpec } from './store/store-spec.js';
