import { parseTtl } from '../../core/duration.js';
import { touch } from '../../ops/touch.js';
import { contextFor } from '../daemon-context.js';
import { requestActor, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

/** `touch` db, branch, ttl: restarts the TTL clock (the one TTL grammar: "" keeps, "none" or zero clears, positive sets). */
export const touchOp: OpHandler = async (req, d) => {
  const t = requestTarget(req);
  const r = await touch(contextFor(d, t), t, parseTtl(req.ttl), { actor: requestActor(req) });
  return {
    ok: true,
    result: { ttl: r.ttl ?? 'none', touched_at: r.touchedAt, ...(r.expiresAt ? { expires_at: r.expiresAt } : {}) },
  };
};
