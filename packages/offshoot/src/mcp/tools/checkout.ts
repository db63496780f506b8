import type { checkoutTool } from '@offshoot/tools';
import { checkout, checkoutLive } from '../../ops/checkout.js';
import { branchOr, nameArg } from '../args.js';
import { holdingEphemeral, sessionOn, withDaemon } from '../daemon/daemon-link.js';
import type { ToolRun } from '../tool.js';

/** `offshoot_checkout`: the file to open with any SQLite client — a session's live path, else an at-rest checkout. */
export const checkoutRun: ToolRun<typeof checkoutTool> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const branch = branchOr('branch', args.branch);
    return withDaemon(deps, async (d) => {
      const s = sessionOn(d, db, branch);
      const ctx = await deps.ops();
      if (s !== undefined && !s.error) {
        // A live path is as writable as a checkout: the same rule decides whether an agent may have it.
        await checkoutLive(ctx, { db, branch }, s.checkout, deps.actor);
        return {
          structured: {
            db,
            branch,
            path: s.checkout,
            txid: s.durable_txid,
            live: true,
            reused: true,
            dirty: false,
            kept: null,
          },
          text: `${s.checkout}\ncaptured live by the daemon session (durable through txid ${s.durable_txid}); checkpoint with offshoot_checkpoint`,
          touched: [{ db, branch }],
        };
      }
      const held = holdingEphemeral(d, db, branch);
      if (held !== undefined) {
        const res = await held.client.request({ op: 'checkout', db, branch });
        const path = res.checkout ?? '';
        return {
          structured: { db, branch, path, txid: null, live: false, reused: false, dirty: false, kept: null },
          text: [
            path,
            ...(res.warnings ?? []),
            'ephemeral: held by the daemon and gone with it; offshoot_checkpoint with a name keeps your writes',
          ].join('\n'),
          touched: [{ db, branch }],
        };
      }
      deps.control.step(`checking out ${db}@${branch}`);
      const r = await checkout(ctx, { db, branch }, { actor: deps.actor });
      const notes = [`at rest: writes to this file are kept only when you call offshoot_checkpoint`];
      if (r.dirty)
        notes.push('it holds writes no checkpoint has recorded yet (kept): call offshoot_checkpoint to keep them');
      if (r.kept !== undefined)
        notes.push(`${db}@${branch} moved under this file; your uncheckpointed writes are kept as ${db}@${r.kept}`);
      if (s?.error) notes.push(`warning: the daemon's session on ${db}@${branch} is fenced (${s.error})`);
      else if (d !== undefined) notes.push(`a daemon is up but has no session on ${db}@${branch}`);
      return {
        structured: {
          db,
          branch,
          path: r.path,
          txid: r.txid,
          live: false,
          reused: r.reused,
          dirty: r.dirty,
          kept: r.kept ?? null,
        },
        text: [r.path, ...notes].join('\n'),
        touched: [{ db, branch }],
      };
    });
  },
};
