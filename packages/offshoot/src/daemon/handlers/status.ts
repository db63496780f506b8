import type { OpHandler } from './op-handler.js';

/**
 * `status` → sessions[]: every live session here (reserved slots are not listed), `ephemeral` on an ephemeral branch's;
 * and additively `ephemeral_branches`, every ephemeral branch this daemon holds, open or not (absent when none).
 */
export const statusOp: OpHandler = async (_req, d) => {
  const held = d.ephemeral.held();
  return {
    ok: true,
    sessions: d.sessions.live().map((s) => {
      const info = s.session.info();
      return d.ephemeral.holds(s.target.db, s.target.branch) ? { ...info, ephemeral: true } : info;
    }),
    ...(held.length > 0 ? { ephemeral_branches: held } : {}),
  };
};
