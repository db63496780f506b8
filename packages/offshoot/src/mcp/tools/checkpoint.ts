import { z } from 'zod';
import { validateMeta } from '../../core/meta.js';
import { checkpoint } from '../../ops/checkpoint.js';
import { branchArg, branchOr, databaseArg, metaArg, nameArg, nameString } from '../args.js';
import { holdingEphemeral, sessionOn, withDaemon } from '../daemon-link.js';
import { defineTool, HINTS } from '../tool.js';

/** `offshoot_checkpoint`: names the branch's current state durably — a live flush under a session, else at rest. */
export const checkpointTool = defineTool({
  name: 'offshoot_checkpoint',
  title: 'Checkpoint a branch',
  description: [
    "Record the branch's current state as a named checkpoint, durably in the store. Checkpoint when tests pass (or",
    'before the next risky step), so offshoot_rollback can return here if a later step fails. With a daemon session',
    "open on the branch it flushes live; otherwise it quiesces the branch's checkout and writes what changed.",
    '`meta` tags the checkpoint (test results, git SHA, run id).',
  ].join(' '),
  annotations: HINTS.additive,
  input: {
    database: databaseArg,
    name: nameString().describe('checkpoint name, unique on the branch (e.g. "migrated", "tests-pass")'),
    branch: branchArg('branch to checkpoint'),
    meta: metaArg,
  },
  output: {
    db: z.string(),
    branch: z.string(),
    name: z.string(),
    txid: z.number(),
    kind: z.enum(['segment', 'snapshot', 'none', 'live']),
    live: z.boolean(),
    meta: z.record(z.string(), z.string()).optional(),
  },
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
});
