import { branchOf, type rollbackTool, rollbackUndo } from '@offshoot/tools';
import { undoPointName } from '../../ops/policy.js';
import { rollback } from '../../ops/rollback.js';
import { branchOr, nameArg, pointArg } from '../args.js';
import { refuseIfSession, withDaemon } from '../daemon/daemon-link.js';
import { rollbackThrough } from '../daemon/daemon-ops.js';
import type { ToolRun } from '../tool.js';
import { readHead, refreshNote, wayBackNote } from './branch-facts.js';

/** `offshoot_rollback`: repoints a branch at a checkpoint, keeping the old head as `<branch>-pre-rollback`. */
export const rollbackRun: ToolRun<typeof rollbackTool> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const to = pointArg('to', args.to);
    const branch = branchOr('branch', args.branch);
    // Through the daemon serving the store when one answers (it holds the leases and applies the agent rules
    // itself), else at rest.
    const r = await withDaemon(deps, async (d) => {
      refuseIfSession(d, db, branch, 'rollback');
      if (d !== undefined) return rollbackThrough(d, db, branch, to, deps.notes);
      return rollback(await deps.ops(), { db, branch }, to, { actor: deps.actor });
    });
    const ctx = await deps.ops();
    const isProtected = (await ctx.store.tryGetRef(db, branch))?.ref.protected ?? false;
    // The agent may make the forced undo itself where its human let it force, or is asked to confirm forced calls.
    const { undo, humans } = rollbackUndo({
      db,
      branch,
      backup: r.backup,
      protected: isProtected,
      allowForce: deps.options.allowForce || deps.options.confirmForce,
    });
    const undoLine = humans
      ? `${db}@${branch} is protected, so undoing this is the human's call: ask them to run '${undo}'`
      : `to undo: ${undo}${isProtected && !deps.options.allowForce ? ' (the human is asked to confirm it)' : ''}`;
    return {
      structured: {
        db,
        branch,
        to,
        txid: r.txid,
        backup: r.backup,
        ...(r.earlierBackup !== undefined ? { earlier_backup: r.earlierBackup } : {}),
        abandoned: r.abandoned ?? null,
        path: r.path,
        refreshed: r.refreshed,
        protected: isProtected,
        undo,
      },
      text: [
        `rolled ${db}@${branch} back to "${to}" (txid ${r.txid}); the previous head is kept as ${db}@${r.backup}`,
        undoLine,
        ...(r.earlierBackup !== undefined
          ? [`the earlier undo point held the only copy of its state: it is kept as ${db}@${r.earlierBackup}`]
          : []),
        refreshNote(db, branch, r) ?? `checkout: ${r.path}`,
      ].join('\n'),
      touched: [
        { db, branch },
        { db, branch: r.backup },
        ...(r.earlierBackup !== undefined ? [{ db, branch: r.earlierBackup }] : []),
      ],
    };
  },
  async confirm(args, deps) {
    const ctx = await deps.ops();
    const db = args.database;
    const branch = branchOf(args.branch);
    const undo = undoPointName(branch, 'pre-rollback');
    const [cur, old, wayBack] = await Promise.all([
      readHead(ctx, db, branch),
      readHead(ctx, db, undo),
      wayBackNote(ctx, db, branch),
    ]);
    const cp = cur?.checkpoints[args.to];
    if (cur === undefined || cp === undefined) return undefined;
    return {
      message:
        `The agent asks to roll ${cur.protected ? 'protected ' : ''}${db}@${branch} back from head txid ${cur.txid} to ` +
        `checkpoint "${args.to}" (txid ${cp}).${wayBack} Its current head (txid ${cur.txid}) is kept as the undo point ` +
        `${db}@${undo}` +
        (old === undefined
          ? '.'
          : `, replacing the undo point of the last rollback (txid ${old.txid}), which is lost.`),
      fingerprint: `${cur.txid}/${cur.etag}>${old?.etag ?? 'none'}`,
    };
  },
};
