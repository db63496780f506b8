import { z } from 'zod';
import { checkoutWork, destroy } from '../../ops/destroy.js';
import { databaseArg, nameArg, nameString } from '../args.js';
import { refuseIfSession, withDaemon } from '../daemon-link.js';
import { destroyThrough } from '../daemon-ops.js';
import { defineTool, HINTS } from '../tool.js';
import { readHead } from './branch-facts.js';
import { checkoutPath } from '../../ops/context.js';

/** `offshoot_destroy`: deletes a branch (an abandoned attempt); protected branches and undo points need the human. */
export const destroyTool = defineTool({
  name: 'offshoot_destroy',
  title: 'Destroy a branch',
  description: [
    'Delete a branch and its checkout: an attempt you abandoned (forks also expire on their own by TTL). Protected',
    'branches (main) and the undo points of protected branches are refused; force is honoured only if the human',
    'started this server with -allow-force (or, under -confirm-force, the host asks the human, who must accept). On',
    'a refusal, ask the human (offshoot destroy ... --force) instead of retrying. Refused while a daemon session is',
    'open on the branch, and (without force) while its checkout holds writes no checkpoint has: checkpoint them',
    'first. branch has no default.',
  ].join(' '),
  annotations: HINTS.destructiveIdempotent,
  input: {
    database: databaseArg,
    branch: nameString().describe('branch to destroy (required: there is no default)'),
    force: z
      .boolean()
      .optional()
      .describe(
        'override protection; honoured only under -allow-force, or when the human confirms it (a live lease is never taken)',
      ),
  },
  output: {
    db: z.string(),
    branch: z.string(),
    removed_checkout: z.boolean(),
    discarded: z
      .object({
        reason: z.enum(['uncheckpointed_writes', 'unverified_checkout']),
        since_txid: z.number().optional(),
        last_write: z.string(),
        wal_bytes: z.number(),
      })
      .optional()
      .describe('what the checkout held that no checkpoint had: discarded with it'),
  },
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
    if (args.force !== true) return undefined;
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
});
