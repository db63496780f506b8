import type { promoteTool } from '@offshoot/tools';
import { undoPointName } from '../../ops/policy.js';
import { promote } from '../../ops/promote.js';
import { nameArg } from '../args.js';
import { refuseIfSession, sessionOn, withDaemon } from '../daemon/daemon-link.js';
import { promoteThrough } from '../daemon/daemon-ops.js';
import type { ToolRun } from '../tool.js';
import { readHead, refreshNote, wayBackNote } from './branch-facts.js';

/** `offshoot_promote`: makes the attempt that worked the content of the target branch. */
export const promoteRun: ToolRun<ReturnType<typeof promoteTool>> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const source = nameArg('source', args.source);
    const target = nameArg('target', args.target);
    const force = args.force ?? false;
    const ifHead = args.if_head;
    // Through the daemon serving the store when one answers: it flushes a source session of its own first, so the
    // promote holds its writes so far, and applies the agent rules itself. At rest, a source live elsewhere gives
    // its last flushed head.
    const { r, sourceSession } = await withDaemon(deps, async (d) => {
      refuseIfSession(d, db, target, 'promote onto');
      const sourceSession = sessionOn(d, db, source) !== undefined;
      if (d !== undefined)
        return { r: await promoteThrough(d, db, source, target, { force, ifHead }, deps.notes), sourceSession };
      const r = await promote(await deps.ops(), { db, branch: source }, target, {
        force,
        actor: deps.actor,
        ...(ifHead !== undefined ? { ifHead } : {}),
      });
      return { r, sourceSession };
    });
    const lines = [
      `promoted ${db}@${source} -> ${db}@${target} at txid ${r.txid}; the previous ${target} is kept as ${db}@${r.backup}`,
    ];
    if (r.earlierBackup !== undefined)
      lines.push(`the earlier undo point held the only copy of its state: it is kept as ${db}@${r.earlierBackup}`);
    if (sourceSession)
      lines.push(`${db}@${source} has a live session: it was flushed first, so its writes so far are promoted`);
    else if (r.sourceLive)
      lines.push(
        `${db}@${source} has a live session that could not be flushed: its last flushed head (txid ${r.txid}) was promoted, not its unflushed writes`,
      );
    const note = refreshNote(db, target, r);
    if (note !== undefined) lines.push(note);
    return {
      structured: {
        db,
        source,
        target,
        txid: r.txid,
        backup: r.backup,
        ...(r.earlierBackup !== undefined ? { earlier_backup: r.earlierBackup } : {}),
        if_head: ifHead ?? null,
        path: r.path,
        refreshed: r.refreshed,
        source_live: sourceSession || r.sourceLive,
      },
      text: lines.join('\n'),
      touched: [
        { db, branch: target },
        { db, branch: r.backup },
        ...(r.earlierBackup !== undefined ? [{ db, branch: r.earlierBackup }] : []),
        { db, branch: source },
      ],
    };
  },
  async confirm(args, deps) {
    const ctx = await deps.ops();
    const db = args.database;
    const undo = undoPointName(args.target, 'pre-promote');
    const [src, tgt, old, wayBack] = await Promise.all([
      readHead(ctx, db, args.source),
      readHead(ctx, db, args.target),
      readHead(ctx, db, undo),
      wayBackNote(ctx, db, args.target),
    ]);
    if (src === undefined || tgt === undefined) return undefined;
    return {
      message:
        `The agent asks to promote ${db}@${args.source} (head txid ${src.txid}) onto ${tgt.protected ? 'protected ' : ''}` +
        `${db}@${args.target} (head txid ${tgt.txid}): ${db}@${args.target} will then hold txid ${src.txid}'s content.` +
        `${wayBack} Its current head (txid ${tgt.txid}) is kept as the undo point ${db}@${undo}` +
        (old === undefined
          ? '.'
          : `, replacing ${db}@${undo} (txid ${old.txid}), the undo point of the last promote, which is lost.`),
      fingerprint: `${src.txid}/${src.etag}>${tgt.txid}/${tgt.etag}>${old?.etag ?? 'none'}`,
    };
  },
};
