import type { OpHandler } from './op-handler.js';

/** `status` → sessions[]: every live session here (reserved slots are not listed). */
export const statusOp: OpHandler = async (_req, d) => ({
  ok: true,
  sessions: d.sessions.live().map((s) => s.session.info()),
});
