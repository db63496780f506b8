import { parseTtl } from '../../core/duration.js';
import { validatePointName } from '../../core/target.js';
import { fail } from '../../core/errors.js';
import { fork, forkMany, type ForkOptions } from '../../ops/fork.js';
import { requestActor, requestTarget, requiredName } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { flushSourceSession } from './source-flush.js';

/**
 * `fork` db, branch=src, name=new | names=[new…], from?, ttl?, meta?, ephemeral? → txid (and `forks`, for names), and
 * additively `result` {ttl, expires_at}: the TTL applied (canonical) and when the forks may be reaped, and
 * `ephemeral: true` (echoed). The TTL must be positive (no `none`); a head fork of a branch with a session here
 * flushes that session first, so the child holds everything written before the call. `names` forks them all at one
 * fork point, all or nothing. An ephemeral fork is held by this daemon until kept, and gone with it.
 */
export const forkOp: OpHandler = async (req, d) => {
  const src = requestTarget(req);
  if (req.names !== undefined && req.name !== undefined && req.name !== '')
    throw fail('INVALID_ARGUMENT', 'fork: give either name or names, not both', {
      hint: 'put every new branch name in "names"',
    });
  const actor = requestActor(req);
  const opts: ForkOptions = { actor };
  if (req.from !== undefined && req.from !== '') opts.at = validatePointName(req.from);
  const ttl = parseTtl(req.ttl, { fork: true });
  if (ttl.kind !== 'keep') opts.ttl = ttl;
  if (req.meta !== undefined) opts.meta = req.meta;
  if (req.ephemeral === true) opts.ephemeral = true;
  const echo = opts.ephemeral ? { ephemeral: true } : {};
  await flushSourceSession(d, src, actor, 'fork', opts.at === undefined);
  if (req.names !== undefined) {
    const started = performance.now();
    const r = await forkMany(d.ops, src, req.names, opts);
    const each = (performance.now() - started) / 1000 / r.branches.length;
    for (let i = 0; i < r.branches.length; i++) d.metrics.forked(r.path ?? 'fast', r.mode, each);
    return { ok: true, txid: r.txid, forks: r.branches, result: applied(r), ...echo };
  }
  const name = requiredName(req, 'branch', 'new branch name');
  const started = performance.now();
  const r = await fork(d.ops, src, name, opts);
  d.metrics.forked(r.path ?? 'fast', r.mode, (performance.now() - started) / 1000);
  return { ok: true, txid: r.txid, result: applied(r), ...echo };
};

/** The TTL each new branch got (canonical) and when it may be reaped unless touched; null for none. */
function applied(r: { ttl: string | undefined; expiresAt: string | undefined }) {
  return { ttl: r.ttl ?? null, expires_at: r.expiresAt ?? null };
}
