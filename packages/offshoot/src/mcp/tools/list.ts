import type { listedBranch, listTool } from '@offshoot/tools';
import type { z } from 'zod';
import type { BranchStatus } from '../../ops/branch-view.js';
import { status } from '../../ops/status.js';
import { nameArg } from '../args.js';
import { sessionOn, withDaemon } from '../daemon/daemon-link.js';
import type { ToolRun } from '../tool.js';

/** One branch as offshoot_list and the branch resource show it; `live` is the daemon session's path, if one is open. */
export function branchView(b: BranchStatus, live: string | undefined): z.infer<typeof listedBranch> {
  return {
    db: b.db,
    branch: b.branch,
    state: b.state,
    storage: b.storage,
    txid: b.txid,
    checkpoints: b.checkpointsV2.map((c) => ({
      name: c.name,
      txid: c.txid,
      ...(c.createdAt ? { created_at: c.createdAt } : {}),
      ...(c.meta ? { meta: c.meta } : {}),
    })),
    protected: b.protected,
    checked_out: b.checkedOut,
    ttl: b.ttl ?? null,
    remaining: b.remaining ?? null,
    expires_at: b.expiresAt ?? null,
    ...(b.reapPostponed ? { reap_postponed: b.reapPostponed } : {}),
    lease_holder: b.leaseHolder ?? null,
    parent: b.parent ?? null,
    ...(b.meta ? { meta: b.meta } : {}),
    live_session: live ?? null,
  };
}

/** `offshoot_list`: every branch of the store (or of one database) at rest, with the daemon's live sessions marked. */
export const listRun: ToolRun<typeof listTool> = {
  async run(args, deps) {
    const db = args.database === undefined ? undefined : nameArg('database', args.database);
    const ctx = await deps.ops();
    const report = await status(ctx, db === undefined ? {} : { db });
    return withDaemon(deps, async (d) => {
      const branches = report.branches.map((b) => branchView(b, sessionOn(d, b.db, b.branch)?.checkout));
      const lines = branches.map(
        (b) =>
          `${b.db}@${b.branch} head=${b.txid} checkpoints=[${b.checkpoints.map((c) => c.name).join(',')}] protected=${b.protected} checked_out=${b.checked_out}` +
          (b.ttl ? ` ttl=${b.ttl} remaining=${b.remaining}` : '') +
          (b.reap_postponed ? ` reap_postponed=${b.reap_postponed}` : '') +
          (b.live_session ? ' live' : ''),
      );
      const held = (d?.ephemeral ?? [])
        .filter((e) => db === undefined || e.db === db)
        .map((e) => `${e.db}@${e.branch}`);
      if (held.length > 0) lines.push(`ephemeral (held by the daemon, gone with it unless kept): ${held.join(', ')}`);
      const text =
        lines.length > 0
          ? lines.join('\n')
          : `no ${db === undefined ? 'databases' : `branches of ${db}`} yet: a human creates one with 'offshoot create <db>' (or 'offshoot create <db> --from app.db')`;
      return {
        structured: {
          branches,
          daemon: d
            ? { socket: d.socket, sessions: d.sessions.length, ...(held.length > 0 ? { ephemeral: held } : {}) }
            : null,
        },
        text,
        touched: branches.map((b) => ({ db: b.db, branch: b.branch })),
      };
    });
  },
};
