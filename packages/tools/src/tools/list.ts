import { z } from 'zod/v4';
import { nameString } from '../args.js';
import { HINTS } from '../hints.js';
import { defineTool } from '../tool-spec.js';

const checkpoint = z.object({
  name: z.string(),
  txid: z.number(),
  created_at: z.string().optional(),
  meta: z.record(z.string(), z.string()).optional(),
});

/** One branch as offshoot_list and the branch resource show it. */
export const listedBranch = z.object({
  db: z.string(),
  branch: z.string(),
  state: z.string(),
  storage: z.enum(['shared', 'materialized']),
  txid: z.number(),
  checkpoints: z.array(checkpoint),
  protected: z.boolean(),
  checked_out: z.boolean(),
  ttl: z.string().nullable(),
  remaining: z.string().nullable(),
  expires_at: z.string().nullable().describe('when the branch may be reaped, unless touched (RFC 3339)'),
  reap_postponed: z
    .enum(['uncheckpointed_writes', 'unverified_checkout', 'open_connection'])
    .optional()
    .describe('expired, but not reaped while its checkout holds this: checkpoint the writes to keep them'),
  lease_holder: z.string().nullable(),
  parent: z.string().nullable(),
  meta: z.record(z.string(), z.string()).optional(),
  live_session: z.string().nullable().describe("the daemon session's live checkout path, when one is open"),
});

/** `offshoot_list`: every branch of the store (or of one database), with the daemon's live sessions marked. */
export const listTool = defineTool({
  name: 'offshoot_list',
  title: 'List databases and branches',
  description: [
    'List every database branch in the offshoot store: head txid, checkpoints (with meta), protection, TTL and time',
    'remaining, checkout and live-session state. Call this first to see what exists, and again after forking or',
    'promoting to confirm the result. Read-only.',
  ].join(' '),
  annotations: HINTS.readOnly,
  input: { database: nameString().optional().describe('only this database (default: all)') },
  output: {
    branches: z.array(listedBranch),
    daemon: z
      .object({
        socket: z.string(),
        sessions: z.number(),
        ephemeral: z
          .array(z.string())
          .optional()
          .describe('the ephemeral branches the daemon holds (db@branch): gone with it unless kept'),
      })
      .nullable(),
  },
});
