import { fail } from '../core/errors.js';
import { errorResponse } from '../protocol/errors.js';
import { keysAsSent } from '../core/name-map.js';
import { RequestSchema, type Op, type Response } from '../protocol/wire.js';
import type { DaemonContext, Transport } from './daemon-context.js';
import { withOrigin } from '../ops/context.js';
import { requestOrigin } from './request-fields.js';
import { branchesOp } from './handlers/branches.js';
import { checkoutAtOp } from './handlers/checkout-at.js';
import { checkOp } from './handlers/check.js';
import { checkpointOp } from './handlers/checkpoint.js';
import { checkoutOp } from './handlers/checkout.js';
import { closeOp } from './handlers/close.js';
import { compactOp } from './handlers/compact.js';
import { createOp } from './handlers/create.js';
import { dbsOp } from './handlers/dbs.js';
import { destroyOp } from './handlers/destroy.js';
import { diffOp } from './handlers/diff.js';
import { exportOp } from './handlers/export.js';
import { flushOp } from './handlers/flush.js';
import { forkOp } from './handlers/fork.js';
import { gcOp } from './handlers/gc.js';
import { logOp } from './handlers/log.js';
import type { OpHandler } from './handlers/op-handler.js';
import { openOp } from './handlers/open.js';
import { mergeOp } from './handlers/merge.js';
import { promoteOp } from './handlers/promote.js';
import { protectOp, unprotectOp } from './handlers/protect.js';
import { queryOp } from './handlers/query.js';
import { rollbackOp } from './handlers/rollback.js';
import { shutdownOp } from './handlers/shutdown.js';
import { statusOp } from './handlers/status.js';
import { subscribeOp } from './handlers/subscribe.js';
import { touchOp } from './handlers/touch.js';
import { refuseOtherStore } from './stated-store.js';

// A Record over every Op, so adding an op to the protocol without a handler fails to compile.
const HANDLERS: Record<Op, OpHandler> = {
  open: openOp,
  flush: flushOp,
  status: statusOp,
  close: closeOp,
  shutdown: shutdownOp,
  subscribe: subscribeOp,
  create: createOp,
  checkout: checkoutOp,
  fork: forkOp,
  destroy: destroyOp,
  rollback: rollbackOp,
  promote: promoteOp,
  compact: compactOp,
  touch: touchOp,
  branches: branchesOp,
  dbs: dbsOp,
  export: exportOp,
  'checkout-at': checkoutAtOp,
  protect: protectOp,
  unprotect: unprotectOp,
  diff: diffOp,
  gc: gcOp,
  checkpoint: checkpointOp,
  query: queryOp,
  check: checkOp,
  log: logOp,
  merge: mergeOp,
};

/** Every op the daemon answers. */
export const OPS = Object.keys(HANDLERS) as Op[];

/**
 * Answers one request from either transport: validates it against the wire schema, runs the op's handler, and turns
 * any failure into an error response (`daemon: <msg>` plus code and hint), counting each request of a known op.
 * Never throws.
 */
export async function dispatch(d: DaemonContext, raw: unknown, transport: Transport): Promise<Response> {
  try {
    const parsed = RequestSchema.safeParse(raw);
    if (!parsed.success) {
      // Our own wording from the issue's path and expected type: the validator's messages are not our protocol.
      const issue = parsed.error.issues[0];
      const where = issue?.path.join('.') || 'request';
      const what = issue?.code === 'invalid_type' ? `must be a ${issue.expected}` : 'is invalid';
      throw fail('INVALID_ARGUMENT', `bad request: ${where} ${what}`, {
        hint: 'see the wire protocol: op, db, branch, name, from, ttl, force, path, meta, store, sql, limit, origin',
      });
    }
    const req = parsed.data;
    if (req.meta !== undefined) req.meta = keysAsSent(req.meta, (raw as { meta?: unknown }).meta);
    refuseOtherStore(req, d.options.store);
    const handler = Object.hasOwn(HANDLERS, req.op) ? HANDLERS[req.op as Op] : undefined;
    if (handler === undefined) {
      throw fail('INVALID_ARGUMENT', `unknown op ${JSON.stringify(req.op)}`, {
        hint: `the ops are: ${Object.keys(HANDLERS).join(', ')}`,
      });
    }
    // The request's own contexts say who asked: every record the op appends to a branch log names it.
    const origin = requestOrigin(req, raw);
    const asked: DaemonContext = { ...d, ops: withOrigin(d.ops, origin), sessionCtx: withOrigin(d.sessionCtx, origin) };
    try {
      const res = await handler(req, asked, transport);
      d.metrics.requested(req.op, true);
      return res;
    } catch (err) {
      d.metrics.requested(req.op, false);
      throw err;
    }
  } catch (err) {
    return errorResponse(err);
  }
}
