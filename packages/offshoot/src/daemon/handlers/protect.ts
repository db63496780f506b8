import { setProtected } from '../../ops/protect.js';
import type { Request, Response } from '../../protocol/wire.js';
import { contextFor, type DaemonContext } from '../daemon-context.js';
import { requestActor, requestTarget } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';

async function setFlag(req: Request, d: DaemonContext, value: boolean): Promise<Response> {
  const t = requestTarget(req);
  const r = await setProtected(contextFor(d, t), t, value, { actor: requestActor(req) });
  return {
    ok: true,
    result: { protected: r.protected, changed: r.changed, ...(r.expiresAt ? { expires_at: r.expiresAt } : {}) },
  };
}

/** `protect` db, branch: destroy and promote-onto then need force. */
export const protectOp: OpHandler = (req, d) => setFlag(req, d, true);

/** `unprotect` db, branch. */
export const unprotectOp: OpHandler = (req, d) => setFlag(req, d, false);
