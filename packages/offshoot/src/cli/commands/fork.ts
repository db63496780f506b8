import { parseTtl } from '../../core/duration.js';
import { fail } from '../../core/errors.js';
import { parseMetaPairs } from '../../core/meta.js';
import { validateName } from '../../core/names.js';
import { parseTarget, validatePointName } from '../../core/target.js';
import type { ForkOptions } from '../../ops/fork.js';
import type { Command } from '../command.js';
import { RO_CACHE_BUDGET_FLAG } from '../ro-cache-budget.js';
import { SOCKET_FLAG } from '../socket-flag.js';
import { forkManyOutcome, forkOutcome } from '../output.js';

/**
 * `offshoot fork <db>[@src[@point]] <new>... [--at cp] [--ttl d] [--meta k=v]... [--ephemeral]`: a copy-on-write child
 * branch, or many at one fork point, all or nothing; `--ephemeral` asks the store's daemon for forks it holds.
 */
export const forkCommand: Command = {
  name: 'fork',
  summary: 'fork a branch at its head or a checkpoint (copy-on-write)',
  usage: '<db>[@src[@point]] <new>... [--at CP] [--ttl DURATION] [--meta K=V]... [--ephemeral [-socket PATH]]',
  help: [
    "Creates branch <new> sharing the source's durable storage through a base pointer (a few hundred bytes at any",
    'size). A dirty source checkout is checkpointed first, so the fork holds everything committed before the call.',
    'The child gets checkpoint "fork", is unprotected, and is reaped once --ttl passes without activity.',
    'The TTL must be positive; omit --ttl for a branch that never expires. Names ending in -pre-rollback, -pre-promote',
    'or -pre-reopen (optionally -N) are the undo points offshoot keeps, and no fork may take one, nor the name a long',
    'branch\'s undo points are cut to (ending in "_" and 8 hex digits, 109-117 characters). Meta keys starting with',
    '"offshoot." are offshoot\'s own. With --actor agent, the checkpoint of a dirty source checkout is decided like',
    "an agent's checkpoint: refused into the undo point of a protected branch.",
    'Several names fork them all at one fork point, all or nothing: every name is checked before any fork is',
    'written, and a failure withdraws the forks already made. --at takes a checkpoint or a moment: tx:42 (that',
    'durable txid) or at:2026-12-07T10:00:00Z (the last durable state at or before it), inside the history window;',
    'the source may name it instead (app@main@tx:42), as every other target does.',
    '--ephemeral asks the daemon serving the store (-socket) for ephemeral forks: held by that daemon and never',
    'written to the store until kept (a named checkpoint or session flush, or a promote of it), they are gone with',
    'the daemon: one that stops or dies loses them and their checkouts, and no other daemon or CLI ever sees them.',
    'Refused when no daemon serves the store.',
  ].join('\n'),
  examples: [
    'offshoot fork app attempt-1 --ttl 1h',
    'offshoot fork app@main retry --at seeded --meta task=123',
    'offshoot fork app ep-1 ep-2 ep-3 --at seeded --ttl 1h',
    'offshoot fork app episode-7 --at seeded --ephemeral',
  ],
  flags: {
    at: { type: 'string', value: 'CP', description: 'fork at this checkpoint instead of the head' },
    ttl: {
      type: 'string',
      value: 'DURATION',
      description: 'reap the fork after this long without activity (e.g. 24h)',
    },
    meta: { type: 'string', multiple: true, value: 'K=V', description: 'tag the new branch' },
    ephemeral: {
      type: 'boolean',
      description: "held by the store's daemon until kept; gone with that daemon (needs one)",
    },
    socket: SOCKET_FLAG,
    'ro-cache-budget': RO_CACHE_BUDGET_FLAG,
  },
  fillsRoCache: true,

  args: { min: 2, max: Number.POSITIVE_INFINITY },
  async run(inv) {
    const { checkpoint: point, ...src } = parseTarget(inv.arg(0), { allowCheckpoint: true });
    const names = inv.args.slice(1).map((n) => validateName('branch', n));
    const opts: ForkOptions = { actor: inv.actor };
    const flagAt = inv.flags.string('at');
    if (flagAt !== undefined && point !== undefined)
      throw fail('INVALID_ARGUMENT', `the fork point twice: ${inv.arg(0)} and --at ${flagAt}`, {
        hint: 'name the fork point once: as db@branch@point or with --at',
      });
    const at = flagAt !== undefined ? validatePointName(flagAt) : point;
    if (at !== undefined) opts.at = at;
    const ttl = inv.flags.string('ttl');
    if (ttl !== undefined) opts.ttl = parseTtl(ttl, { fork: true });
    const meta = parseMetaPairs(inv.flags.list('meta'));
    if (meta) opts.meta = meta;
    if (inv.flags.boolean('ephemeral')) {
      const { forkThroughDaemon } = await import('../ephemeral-fork.js');
      return forkThroughDaemon(inv, src, names, { ...(at !== undefined ? { at } : {}), ttl, meta });
    }
    const ctx = await inv.context();
    const { fork, forkMany } = await import('../../ops/fork.js');
    if (names.length > 1) return forkManyOutcome(await forkMany(ctx, src, names, opts));
    return forkOutcome(await fork(ctx, src, names[0] as string, opts));
  },
};
