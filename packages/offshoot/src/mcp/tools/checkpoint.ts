import type { checkpointTool } from '@offshoot/tools';
import { validateMeta } from '../../core/meta.js';
import { checkpoint } from '../../ops/checkpoint.js';
import { branchOr, nameArg } from '../args.js';
import { holdingEphemeral, sessionOn, withDaemon } from '../daemon/daemon-link.js';
import type { ToolRun } from '../tool.js';

/** `offshoot_checkpoint`: names the branch's current state durably — a live flush under a session, else at rest. */
export const checkpointRun: ToolRun<typeof checkpointTool> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const name = nameArg('name', args.name);
    const branch = branchOr('branch', args.branch);
    const meta = validateMeta(args.meta);
    return withDaemon(deps, async (d) => {
      const s = sessionOn(d, db, branch);
      const base = { db, branch, name, ...(meta ? { meta } : {}) };
      if (d !== undefined && s !== undefined && !s.error) {
        const txid = await d.client.flush(db, branch, name, meta ? { meta } : {});
        return {
          structured: { ...base, txid, kind: 'live' as const, live: true },
          text: `checkpoint "${name}" at txid ${txid} (captured live by the daemon session)`,
          touched: [{ db, branch }],
        };
      }
      const held = holdingEphemeral(d, db, branch);
      if (held !== undefined) {
        // Only the daemon has it; a named checkpoint keeps it, durable from here on.
        const r = await held.client.checkpoint(db, branch, name, meta ? { meta } : {});
        return {
          structured: { ...base, txid: r.txid, kind: r.kind, live: r.kind === 'live' },
          text: `checkpoint "${name}" at txid ${r.txid}: ${db}@${branch} was ephemeral and is kept, durable in the store from now on`,
          touched: [{ db, branch }],
        };
      }
      const ctx = await deps.ops();
      const r = await checkpoint(ctx, { db, branch }, name, meta, { actor: deps.actor });
      return {
        structured: { ...base, txid: r.txid, kind: r.kind, live: false },
        text: `checkpoint "${name}" at txid ${r.txid} (at rest: ${r.kind === 'none' ? 'unchanged since the last one' : `a ${r.kind} of ${r.pages} page(s)`})`,
        touched: [{ db, branch }],
      };
    });
  },
};
