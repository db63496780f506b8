import { requestTarget } from '../request-fields.js';
import { closeLive } from '../session-lifecycle.js';
import type { OpHandler } from './op-handler.js';

/** `close` db, branch: flushes pending writes, stops capture and releases the lease. */
export const closeOp: OpHandler = async (req, d) => {
  await closeLive(d, d.sessions.beginClose(requestTarget(req)));
  return { ok: true };
};
