import type { destroyTool } from '@offshoot/tools';
import { checkoutWork, destroy } from '../../ops/destroy.js';
import { nameArg } from '../args.js';
import { refuseIfSession, withDaemon } from '../daemon/daemon-link.js';
import { destroyThrough } from '../daemon/daemon-ops.js';
import type { ToolRun } from '../tool.js';
import { readHead } from './branch-facts.js';
import { checkoutPath } from '../../ops/context.js';

/** `offshoot_destroy`: deletes a branch (an abandoned attempt); protected branches and undo points need the human. */
export const destroyRun: ToolRun<typeof destroyTool> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const branch = nameArg('branch', args.branch);
    const force = args.force ?? false;
    const r = await withDaemon(deps, async (d) => {
      refuseIfSession(d, db, branch, 'destroy');
      if (d !== undefined) return destroyThrough(d, db, branch, force, deps.notes);
      return destroy(await deps.ops(), { db, branch }, { force, actor: deps.actor });
    });
    const w = r.discarded;
    return {
      structured: {
        db,
        branch,
        removed_checkout: r.removedCheckout,
        ...(w !== undefined
          ? {
              discarded: {
                reason: w.reason,
                ...(w.sinceTxid !== undefined ? { since_txid: w.sinceTxid } : {}),
                last_write: w.lastWrite,
                wal_bytes: w.walBytes,
              },
            }
          : {}),
      },
      text: `destroyed ${db}@${branch}${r.removedCheckout ? ' and its checkout' : ''}`,
      touched: [{ db, branch }],
    };
  },
  async confirm(args, deps) {
    const ctx = await deps.ops();
    const db = args.database;
    const b = await readHead(ctx, db, args.branch);
    if (b === undefined) return undefined;
    const what = b.undoPointOf ? `the undo point of ${db}@${b.undoPointOf}` : b.protected ? 'protected' : 'the branch';
    const work = await checkoutWork(checkoutPath(ctx.checkoutRoot, db, args.branch));
    return {
      message:
        `The agent asks to destroy ${db}@${args.branch} (${what}, head txid ${b.txid}) and its checkout` +
        (work === undefined
          ? '. '
          : `, which holds writes no checkpoint has (last written ${work.lastWrite}): they are discarded. `) +
        'No undo point is kept: its data is gone once GC runs.',
      fingerprint: `${b.txid}/${b.etag}`,
    };
  },
};
