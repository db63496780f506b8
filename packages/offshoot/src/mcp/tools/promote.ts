import { z } from 'zod';
import { undoPointName } from '../../ops/policy.js';
import { promote } from '../../ops/promote.js';
import { databaseArg, nameArg, nameString } from '../args.js';
import { refuseIfSession, sessionOn, withDaemon } from '../daemon-link.js';
import { promoteThrough } from '../daemon-ops.js';
import { defineTool, HINTS } from '../tool.js';
import { readHead, refreshNote, wayBackNote } from './branch-facts.js';

/** `offshoot_promote`: makes the attempt that worked the content of the target branch. */
export const promoteTool = defineTool({
  name: 'offshoot_promote',
  title: 'Promote the attempt that worked',
  description: [
    "Replace the target branch's content with the source branch's head: promote the fork whose tests passed. The",
    "target's previous head is kept as '<target>-pre-promote'. main is protected: an unforced promote onto it is",
    'refused, and force is honoured only if the human started this server with -allow-force (or, under',
    '-confirm-force, the host asks the human, who must accept). On a refusal, do not retry: tell the human the exact',
    'command from the result (offshoot promote ... --force) or keep working on the fork. Refused while a daemon',
    'session is open on the target; an open source session is flushed through the daemon first, so its writes so',
    'far are promoted. Pass if_head (the head txid you forked from) to promote only if nobody moved the target since:',
    'BASE_MOVED otherwise.',
  ].join(' '),
  annotations: HINTS.destructive,
  input: {
    database: databaseArg,
    source: nameString().describe('branch whose head is promoted (the attempt that worked)'),
    target: nameString().describe('branch that receives it (e.g. main)'),
    force: z
      .boolean()
      .optional()
      .describe('needed for a protected target; honoured only under -allow-force, or when the human confirms it'),
    if_head: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe(
        "promote only while the target's head is still this txid (the head you forked from): otherwise refused BASE_MOVED, nothing changed",
      ),
  },
  output: {
    db: z.string(),
    source: z.string(),
    target: z.string(),
    txid: z.number(),
    backup: z.string(),
    earlier_backup: z
      .string()
      .optional()
      .describe('where the earlier undo point was kept: it held the only copy of its state'),
    path: z.string(),
    refreshed: z.boolean(),
    source_live: z
      .boolean()
      .describe(
        'true when the source had a live session: flushed first where the daemon could, else its last flushed head',
      ),
  },
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
    if (args.force !== true) return undefined;
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
});
