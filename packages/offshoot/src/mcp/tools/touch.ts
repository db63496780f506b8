import type { touchTool } from '@offshoot/tools';
import { touch } from '../../ops/touch.js';
import { branchOr, nameArg, ttlArg, ttlText } from '../args.js';
import { holdingEphemeral, sessionOn, withDaemon } from '../daemon/daemon-link.js';
import type { ToolRun } from '../tool.js';

/** `offshoot_touch`: restarts a branch's TTL clock, optionally setting or clearing its TTL. */
export const touchRun: ToolRun<typeof touchTool> = {
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
};
