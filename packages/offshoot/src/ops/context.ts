// The front door of ops, one of its declared faces (with the verbs, policy.ts, branch-view.ts and live-branch.ts):
// the context every verb is called with, and where the files it keeps live. Nothing outside ops reaches into
// ops/helpers/; scripts/check-layers.mjs holds it so.

export { makeContext, type OpsContext, type ProgressSink, withOrigin } from './helpers/context/context.js';
export { newDetachedLeaseHolder, newLeaseHolder } from './helpers/context/lease-holder.js';
export { checkoutPath, scratchDir } from './helpers/context/paths.js';
