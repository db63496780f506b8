import { z } from 'zod/v4';
import { branchArg, databaseArg, metaArg, nameString, MOMENTS } from '../args.js';
import { HINTS } from '../hints.js';
import { TOOL_LIMITS } from '../limits.js';
import { defineTool } from '../tool-spec.js';

const MORE = TOOL_LIMITS.moreBranches;

/**
 * `offshoot_fork`: a copy-on-write branch for one attempt, with the surface's default TTL (`defaultTtl`, named in
 * the schema) unless the call names one.
 */
export function forkTool(defaultTtl: string) {
  return defineTool({
    name: 'offshoot_fork',
    title: 'Fork a branch for an attempt',
    description: [
      'Fork a branch (default main) into a new copy-on-write branch: a real, private database for one attempt, made',
      'in milliseconds at any size. Fork BEFORE any schema migration, bulk delete, backfill or data experiment, then',
      "work in the fork's checkout (offshoot_checkout), never in main's. The fork expires after its TTL (the default",
      'TTL when ttl is omitted; "none" for never); the result echoes the TTL and expiry. `at` forks from a checkpoint',
      'instead of the head; `meta` tags the fork (run id, git SHA, agent name). `more_branches` forks those too, at',
      'the same fork point in one call, all or nothing (one fork per parallel attempt).',
      '`ephemeral` (only through a daemon) makes forks the daemon holds and never writes to the store until kept (a',
      'named offshoot_checkpoint, or offshoot_promote of it): a throwaway attempt then costs no storage, but an',
      'ephemeral fork is GONE WITH ITS DAEMON: if the daemon stops or dies, it and its checkout are lost, and no other',
      'daemon or CLI ever sees it. Checkpoint with a name to keep what is worth keeping.',
    ].join(' '),
    annotations: HINTS.additive,
    input: {
      database: databaseArg,
      new_branch: nameString().describe('name of the new branch (a-z, 0-9, "-", "_", ".")'),
      branch: branchArg('source branch'),
      at: nameString().optional().describe(`fork from this point of the source instead of its head: ${MOMENTS}`),
      ttl: z
        .string()
        .optional()
        .describe(
          `reap the fork after this long without activity ("2h", "30m"); "none" for no TTL; default ${defaultTtl}`,
        ),
      meta: metaArg,
      more_branches: z
        .array(nameString())
        .max(MORE)
        .optional()
        .describe(
          `more new branches to fork at the same point in the same call (at most ${MORE}); all are made or none`,
        ),
      ephemeral: z
        .boolean()
        .optional()
        .describe(
          'held by the daemon, never written to the store until kept (a named checkpoint or a promote); gone with the daemon. Needs a daemon',
        ),
    },
    output: {
      db: z.string(),
      source: z.string(),
      branch: z.string(),
      branches: z.array(z.string()).optional().describe('with more_branches: every branch made, new_branch first'),
      txid: z.number(),
      at: z.string().nullable(),
      ttl: z.string().nullable().describe('the TTL applied, canonical (e.g. 24h0m0s), or null for none'),
      ttl_source: z.enum(['explicit', 'default', 'none']),
      expires_at: z.string().nullable(),
      via: z.enum(['daemon', 'at-rest']),
      meta: z.record(z.string(), z.string()).optional(),
      ephemeral: z.boolean().optional().describe('true: the forks are ephemeral, gone with the daemon unless kept'),
    },
  });
}

/** Where a fork's TTL came from: the call, the surface's default, or nowhere (none). */
export type TtlSource = 'explicit' | 'default' | 'none';

/**
 * The TTL a fork asks for: the call's (`"none"` for none), else the surface's default (`"none"` for none); undefined
 * when there is none, with where that came from.
 */
export function forkTtl(given: string | undefined, defaultTtl: string): { ttl: string | undefined; source: TtlSource } {
  const wanted = given ?? defaultTtl;
  if (wanted === 'none') return { ttl: undefined, source: 'none' };
  return { ttl: wanted, source: given === undefined ? 'default' : 'explicit' };
}
