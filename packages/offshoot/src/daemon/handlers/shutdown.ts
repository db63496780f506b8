import type { OpHandler } from './op-handler.js';

/** `shutdown` → ok, then a graceful shutdown once the response is on its way. */
export const shutdownOp: OpHandler = async (_req, d) => {
  d.requestShutdown();
  return { ok: true };
};
