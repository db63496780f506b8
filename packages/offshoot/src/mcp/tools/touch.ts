import { z } from 'zod';
import { touch } from '../../ops/touch.js';
import { branchArg, branchOr, databaseArg, nameArg, ttlArg, ttlText } from '../args.js';
import { holdingEphemeral, sessionOn, withDaemon } from '../daemon-link.js';
import { defineTool, HINTS } from '../tool.js';

/** `offshoot_touch`: restarts a branch's TTL clock, optionally setting or clearing its TTL. */
export const touchTool = defineTool({
  name: 'offshoot_touch',
  title: "Extend a branch's life",
  description: [
    "Restart a branch's TTL clock so it is not reaped while you still need it (a fork you are still working in, or",
    'the undo point of a rollback). Without ttl it only extends; ttl sets a new TTL ("4h"), "none" clears it. The',
    'undo points of protected branches cannot have their TTL shortened or cleared from here.',
  ].join(' '),
  annotations: HINTS.additiveIdempotent,
  input: {
    database: databaseArg,
    branch: branchArg('branch to touch'),
    ttl: z.string().optional().describe('new TTL ("4h"), or "none" to clear it; omitted keeps the TTL'),
  },
  output: {
    db: z.string(),
    branch: z.string(),
    ttl: z.string().nullable(),
    touched_at: z.string(),
    expires_at: z.string().nullable(),
  },
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const branch = branchOr('branch', args.branch);
    const ttl = ttlArg(args.ttl);
    const ctx = await deps.ops();
    // A branch a daemon session holds is touched by that daemon, under the session's own lease; so is one it holds
    // as an ephemeral branch, which only it has.
    const r = await withDaemon(deps, async (d) => {
      if (d === undefined || (sessionOn(d, db, branch) === undefined && !holdingEphemeral(d, db, branch)))
        return touch(ctx, { db, branch }, ttl, { actor: deps.actor });
      const t = await d.client.touch(db, branch, ttl.kind === 'keep' ? {} : { ttl: ttlText(ttl) ?? 'none' });
      return { ttl: t.ttl === 'none' ? undefined : t.ttl, touchedAt: t.touched_at, expiresAt: t.expires_at };
    });
    const expiresAt = r.expiresAt ?? null;
    return {
      structured: { db, branch, ttl: r.ttl ?? null, touched_at: r.touchedAt, expires_at: expiresAt },
      text: `touched ${db}@${branch} ttl=${r.ttl ?? 'none'} touched_at=${r.touchedAt}${expiresAt ? ` expires_at=${expiresAt}` : ''}`,
      touched: [{ db, branch }],
    };
  },
});
