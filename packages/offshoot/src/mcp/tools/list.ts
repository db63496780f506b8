import { z } from 'zod';
import type { BranchStatus } from '../../ops/branch-view.js';
import { status } from '../../ops/status.js';
import { nameArg, nameString } from '../args.js';
import { sessionOn, withDaemon } from '../daemon-link.js';
import { defineTool, HINTS } from '../tool.js';

const checkpoint = z.object({
  name: z.string(),
  txid: z.number(),
  created_at: z.string().optional(),
  meta: z.record(z.string(), z.string()).optional(),
});

const branch = z.object({
  db: z.string(),
  branch: z.string(),
  state: z.string(),
  storage: z.enum(['shared', 'materialized']),
  txid: z.number(),
  checkpoints: z.array(checkpoint),
  protected: z.boolean(),
  checked_out: z.boolean(),
  ttl: z.string().nullable(),
  remaining: z.string().nullable(),
  expires_at: z.string().nullable().describe('when the branch may be reaped, unless touched (RFC 3339)'),
  reap_postponed: z
    .enum(['uncheckpointed_writes', 'unverified_checkout', 'open_connection'])
    .optional()
    .describe('expired, but not reaped while its checkout holds this: checkpoint the writes to keep them'),
  lease_holder: z.string().nullable(),
  parent: z.string().nullable(),
  meta: z.record(z.string(), z.string()).optional(),
  live_session: z.string().nullable().describe("the daemon session's live checkout path, when one is open"),
});

/** One branch as offshoot_list and the branch resource show it; `live` is the daemon session's path, if one is open. */
export function branchView(b: BranchStatus, live: string | undefined): z.infer<typeof branch> {
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
export const listTool = defineTool({
  name: 'offshoot_list',
  title: 'List databases and branches',
  description: [
    'List every database branch in the offshoot store: head txid, checkpoints (with meta), protection, TTL and time',
    'remaining, checkout and live-session state. Call this first to see what exists, and again after forking or',
    'promoting to confirm the result. Read-only.',
  ].join(' '),
  annotations: HINTS.readOnly,
  input: { database: nameString().optional().describe('only this database (default: all)') },
  output: {
    branches: z.array(branch),
    daemon: z.object({ socket: z.string(), sessions: z.number() }).nullable(),
  },
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
      const text =
        lines.length > 0
          ? lines.join('\n')
          : `no ${db === undefined ? 'databases' : `branches of ${db}`} yet: a human creates one with 'offshoot create <db>' (or 'offshoot create <db> --from app.db')`;
      return {
        structured: { branches, daemon: d ? { socket: d.socket, sessions: d.sessions.length } : null },
        text,
        touched: branches.map((b) => ({ db: b.db, branch: b.branch })),
      };
    });
  },
});
