import { DaemonPlace } from '@offshoot/client';
import { type forkTool, forkTtl } from '@offshoot/tools';
import { fail } from '../../core/errors.js';
import { validateMeta } from '../../core/meta.js';
import { fork, forkMany } from '../../ops/fork.js';
import { branchOr, nameArg, ttlArg, ttlText, pointArg } from '../args.js';
import { withLinkedDaemon } from '../daemon/daemon-link.js';
import type { ToolRun } from '../tool.js';

/** What an ephemeral fork's answer tells the agent: where it lives, and how to keep it. */
const EPHEMERAL_LINE =
  'ephemeral: held by the daemon and gone with it; offshoot_checkpoint with a name (or offshoot_promote) keeps it';

/** An ephemeral fork lives in a daemon: the refusal names the server flag that rides one. */
function noDaemonForEphemeral(): Error {
  return fail('UNSUPPORTED', 'ephemeral forks live in a daemon, and this server rides none', {
    hint: "ask the human to start 'offshoot serve' on this store and run 'offshoot mcp -socket <its socket>', or fork without ephemeral",
  });
}

/** `offshoot_fork`: a copy-on-write branch for one attempt, with the server's default TTL unless the call names one. */
export const forkRun: ToolRun<ReturnType<typeof forkTool>> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const branch = nameArg('new_branch', args.new_branch);
    const more = (args.more_branches ?? []).map((b) => nameArg('more_branches', b));
    const all = more.length > 0 ? [branch, ...more] : undefined;
    const source = branchOr('branch', args.branch);
    const at = args.at === undefined ? undefined : pointArg('at', args.at);
    const meta = validateMeta(args.meta);
    const chosen = forkTtl(args.ttl, ttlText(deps.options.defaultTtl) ?? 'none');
    const ttl = ttlArg(chosen.ttl ?? 'none', 'fork');
    const canonical = ttlText(ttl);
    const ephemeral = args.ephemeral === true;
    const { txid, via, expiresAt } = await withLinkedDaemon(deps, async (d) => {
      if (d !== undefined) {
        const r = await new DaemonPlace(d.client).fork({
          db,
          source,
          branch,
          more,
          at,
          ...(canonical !== null ? { ttl: canonical } : {}),
          meta,
          ...(ephemeral ? { ephemeral } : {}),
        });
        return { txid: r.txid, via: 'daemon' as const, expiresAt: r.expires_at };
      }
      if (ephemeral) throw noDaemonForEphemeral();
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
      return { txid: r.txid, via: 'at-rest' as const, expiresAt: r.expiresAt ?? null };
    });
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
        ttl_source: chosen.source,
        expires_at: expiresAt,
        via,
        ...(meta ? { meta } : {}),
        ...(all ? { branches: all } : {}),
        ...(ephemeral ? { ephemeral } : {}),
      },
      touched: [...(all ?? [branch]).map((b) => ({ db, branch: b })), { db, branch: source }],
      text: `forked ${db}@${source}${at ? `@${at}` : ''} -> ${(all ?? [branch]).map((b) => `${db}@${b}`).join(', ')} at txid ${txid}${via === 'daemon' ? ' (through the daemon)' : ''}\n${ttlLine}${ephemeral ? `\n${EPHEMERAL_LINE}` : ''}\nnext: offshoot_checkout database=${db} branch=${branch}, and work there`,
    };
  },
};
