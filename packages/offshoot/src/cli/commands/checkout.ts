import { fail } from '../../core/errors.js';
import { parseTarget, validatePointName } from '../../core/target.js';
import type { Command } from '../command.js';
import { RO_CACHE_BUDGET_FLAG } from '../ro-cache-budget.js';
import { checkoutOutcome, pathOutcome } from '../output.js';

/** `offshoot checkout <db>[@b] [--at cp --read-only [--force]]`: a writable checkout, or a read-only checkpoint. */
export const checkoutCommand: Command = {
  name: 'checkout',
  summary: 'materialize a working copy (or, with --at --read-only, a checkpoint) and print its path',
  usage: '<db>[@branch] [--discard | --force] [--at CP --read-only [--force]]',
  help: [
    "Prints the path of the branch's writable checkout (checkouts/<db>/<branch>.db), materializing the head unless the",
    'existing file is current. A current checkout holding writes no checkpoint recorded is returned as it is, writes',
    'kept (a note says so; --json has "dirty": true): checkpoint to keep them, or pass --discard to drop them and',
    're-materialize the head. Earlier versions discarded them with a warning; now only --discard does.',
    '',
    'If the branch moved under the checkout (a rollback or promote that could not refresh it, a checkpoint from another',
    'machine), its uncheckpointed writes are kept as the undo point <branch>-pre-reopen (named on stderr and as "kept"',
    'in --json) and the new head is materialized in its place; --discard drops them instead.',
    '',
    'With --at CP --read-only, materializes the named checkpoint as an immutable file under checkouts-ro/ instead;',
    'repeat calls reuse it after one read of the branch ref (while it is untouched and still holds the checkpoint of',
    'that name), and --force re-materializes it. --at takes a moment too: tx:42, or at:2026-12-07T10:00:00Z (the',
    'last durable state at or before it), inside the history window.',
    '',
    'A writable checkout that is not a sound SQLite database fails with exit 7 (corrupt). --force moves the existing',
    'file (and its -wal/-shm) aside as <branch>.db.aside-<time>, never deleting it, and materializes the head in its place.',
  ].join('\n'),
  examples: [
    'offshoot checkout app',
    'sqlite3 "$(offshoot checkout app@attempt-1)" "SELECT count(*) FROM t"',
    'offshoot checkout app --at seeded --read-only',
    'offshoot checkout app@attempt-1 --discard',
  ],
  flags: {
    at: { type: 'string', value: 'CP', description: 'a named checkpoint (needs --read-only)' },
    'read-only': { type: 'boolean', description: 'the read-only checkpoint checkout (needs --at)' },
    discard: {
      type: 'boolean',
      description: 're-materialize the head over uncheckpointed writes, dropping them',
    },
    force: {
      type: 'boolean',
      description: 're-materialize: a writable checkout is moved aside first; a read-only one even if cached',
    },
    'ro-cache-budget': RO_CACHE_BUDGET_FLAG,
  },
  fillsRoCache: true,

  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    const at = inv.flags.string('at');
    const readOnly = inv.flags.boolean('read-only');
    const force = inv.flags.boolean('force');
    if ((at !== undefined) !== readOnly) {
      throw fail('USAGE', '--at and --read-only must be given together', {
        hint: `write 'offshoot checkout ${inv.arg(0)} --at CP --read-only'`,
      });
    }
    if (at !== undefined) {
      validatePointName(at);
      const ctx = await inv.context();
      const { checkoutAt } = await import('../../ops/checkout-at.js');
      return pathOutcome(await checkoutAt(ctx, t, at, { force }));
    }
    const ctx = await inv.context();
    const { checkout } = await import('../../ops/checkout.js');
    return checkoutOutcome(await checkout(ctx, t, { force, discard: inv.flags.boolean('discard'), actor: inv.actor }));
  },
};
