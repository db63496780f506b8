import { parseTtl } from '../../core/duration.js';
import { validateName } from '../../core/names.js';
import { fork, type ForkOptions } from '../../ops/fork.js';
import { requestTarget, requiredName } from '../request-fields.js';
import type { OpHandler } from './op-handler.js';
import { flushSourceSession } from './source-flush.js';

/**
 * `fork` db, branch=src, name=new, from?, ttl?, meta? → txid. The TTL must be positive (no `none`); a head fork of
 * a branch with a session here flushes that session first, so the child holds everything written before the call.
 */
export const forkOp: OpHandler = async (req, d) => {
  const src = requestTarget(req);
  const name = requiredName(req, 'branch', 'new branch name');
  const opts: ForkOptions = {};
  if (req.from !== undefined && req.from !== '') opts.at = validateName('checkpoint', req.from);
  const ttl = parseTtl(req.ttl, { fork: true });
  if (ttl.kind !== 'keep') opts.ttl = ttl;
  if (req.meta !== undefined) opts.meta = req.meta;
  await flushSourceSession(d, src, 'fork', opts.at === undefined);
  const started = performance.now();
  const r = await fork(d.ops, src, name, opts);
  d.metrics.forked(r.path ?? 'fast', r.mode, (performance.now() - started) / 1000);
  return { ok: true, txid: r.txid };
};
