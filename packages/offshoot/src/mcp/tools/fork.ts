import { z } from 'zod';
import { formatDuration } from '../../core/duration.js';
import { fail } from '../../core/errors.js';
import { validateMeta } from '../../core/meta.js';
import { fork, forkMany } from '../../ops/fork.js';
import { branchView } from '../../ops/status.js';
import { branchArg, branchOr, databaseArg, metaArg, nameArg, nameString, ttlArg } from '../args.js';
import { withLinkedDaemon } from '../daemon-link.js';
import { defineTool, HINTS } from '../tool.js';

// One call forks at most a thousand branches: an agent's request must not run (and hold the server) unbounded.
const MAX_MORE_BRANCHES = 999;

/** `offshoot_fork`: a copy-on-write branch for one attempt, with the server's default TTL unless the call names one. */
export const forkTool = defineTool({
  name: 'offshoot_fork',
  title: 'Fork a branch for an attempt',
  description: [
    'Fork a branch (default main) into a new copy-on-write branch: a real, private database for one attempt, made',
    'in milliseconds at any size. Fork BEFORE any schema migration, bulk delete, backfill or data experiment, then',
    "work in the fork's checkout (offshoot_checkout), never in main's. The fork expires after its TTL (the server",
    'default when ttl is omitted; "none" for never); the result echoes the TTL and expiry. `at` forks from a',
    'checkpoint instead of the head; `meta` tags the fork (run id, git SHA, agent name). `more_branches` forks',
    'those too, at the same fork point in one call, all or nothing (one fork per parallel attempt).',
  ].join(' '),
  annotations: HINTS.additive,
  input: {
    database: databaseArg,
    new_branch: nameString().describe('name of the new branch (a-z, 0-9, "-", "_", ".")'),
    branch: branchArg('source branch'),
    at: nameString().optional().describe('fork from this checkpoint of the source instead of its head'),
    ttl: z
      .string()
      .optional()
      .describe(
        'reap the fork after this long without activity ("2h", "30m"); "none" for no TTL; default: the server\'s -default-ttl',
      ),
    meta: metaArg,
    more_branches: z
      .array(nameString())
      .max(MAX_MORE_BRANCHES)
      .optional()
      .describe(
        `more new branches to fork at the same point in the same call (at most ${MAX_MORE_BRANCHES}); all are made or none`,
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
  },
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const branch = nameArg('new_branch', args.new_branch);
    const more = (args.more_branches ?? []).map((b) => nameArg('more_branches', b));
    const all = more.length > 0 ? [branch, ...more] : undefined;
    const source = branchOr('branch', args.branch);
    const at = args.at === undefined ? undefined : nameArg('at', args.at);
    const meta = validateMeta(args.meta);
    const given = ttlArg(args.ttl, 'fork');
    const ttl = given.kind === 'keep' ? deps.options.defaultTtl : given;
    const ttlSource: 'explicit' | 'default' | 'none' =
      ttl.kind === 'none' ? 'none' : given.kind === 'keep' ? 'default' : 'explicit';
    const canonical = ttl.kind === 'set' ? formatDuration(ttl.ttl) : null;
    const { txid, via, expiry } = await withLinkedDaemon(deps, async (d) => {
      if (d !== undefined) {
        const res = await d.client.request({
          op: 'fork',
          db,
          branch: source,
          ...(all ? { names: all } : { name: branch }),
          ...(at !== undefined ? { from: at } : {}),
          ...(canonical !== null ? { ttl: canonical } : {}),
          ...(meta ? { meta } : {}),
        });
        if (typeof res.txid !== 'number')
          throw fail('INTERNAL', `the daemon on ${d.socket} forked ${db}@${branch} but reported no txid`, {
            hint: "look at the branch (offshoot_list); restart 'offshoot serve' with this version of offshoot",
          });
        // A daemon too old to say when the fork expires: the branch's own view says it, by the same rule.
        const expiry =
          res.expires_at ??
          (canonical === null ? undefined : (await branchView(await deps.ops(), db, branch))?.status.expiresAt);
        return { txid: res.txid, via: 'daemon' as const, expiry };
      }
      const ctx = await deps.ops();
      const opts = {
        actor: deps.actor,
        ...(at !== undefined ? { at } : {}),
        ...(ttl.kind === 'set' ? { ttl } : {}),
        ...(meta ? { meta } : {}),
      };
      const r = all
        ? await forkMany(ctx, { db, branch: source }, all, opts)
        : await fork(ctx, { db, branch: source }, branch, opts);
      return { txid: r.txid, via: 'at-rest' as const, expiry: r.expiresAt };
    });
    const expiresAt = expiry ?? null;
    const ttlLine =
      canonical === null
        ? 'ttl=none (never expires; destroy it when done)'
        : `ttl=${canonical} expires_at=${expiresAt} (reaped after that long without activity; offshoot_touch extends it)`;
    return {
      structured: {
        db,
        source,
        branch,
        txid,
        at: at ?? null,
        ttl: canonical,
        ttl_source: ttlSource,
        expires_at: expiresAt,
        via,
        ...(meta ? { meta } : {}),
        ...(all ? { branches: all } : {}),
      },
      touched: [...(all ?? [branch]).map((b) => ({ db, branch: b })), { db, branch: source }],
      text: `forked ${db}@${source}${at ? `@${at}` : ''} -> ${(all ?? [branch]).map((b) => `${db}@${b}`).join(', ')} at txid ${txid}${via === 'daemon' ? ' (through the daemon)' : ''}\n${ttlLine}\nnext: offshoot_checkout database=${db} branch=${branch}, and work there`,
    };
  },
});
