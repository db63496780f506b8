import type { destroyTool } from '@offshoot/tools';
import { destroy } from '../../ops/destroy.js';
import { nameArg } from '../args.js';
import { refuseIfSession, withDaemon } from '../daemon/daemon-link.js';
import { destroyThrough } from '../daemon/daemon-ops.js';
import type { ToolRun } from '../tool.js';
import { readHead } from './branch-facts.js';

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
    return {
      structured: { db, branch, removed_checkout: r.removedCheckout },
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
    return {
      message:
        `The agent asks to destroy ${db}@${args.branch} (${what}, head txid ${b.txid}) and its checkout. ` +
        'No undo point is kept: its data is gone once GC runs.',
      fingerprint: `${b.txid}/${b.etag}`,
    };
  },
};
