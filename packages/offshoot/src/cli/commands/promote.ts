import { fail } from '../../core/errors.js';
import { validateName } from '../../core/names.js';
import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';
import { TARGET_VERB_FLAGS, targetVerbOptions } from '../target-verb-flags.js';
import { checkOutcome, promoteOutcome } from '../output.js';

/** The --if-head value: a txid (a non-negative integer), or undefined when the flag is absent. */
function txidFlag(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n))
    throw fail('USAGE', `--if-head takes a txid (a whole number), not ${JSON.stringify(text)}`, {
      hint: "pass the target's head txid as status shows it (txid=N), e.g. --if-head 12",
    });
  return n;
}

/** `offshoot promote <db>@<src> --onto <tgt> [--force] [--materialize]`: repoints a branch at another's head. */
export const promoteCommand: Command = {
  name: 'promote',
  summary: "repoint an existing branch at another branch's head",
  usage: '<db>@<src> --onto TARGET [--force] [--materialize] [--if-head TXID] [--check]',
  help: [
    "Repoints TARGET (which must exist) at a fresh lineage reading through the source's head (or a full copy with",
    '--materialize). The source is unchanged; TARGET keeps its TTL and protection, its checkpoints reset to',
    '"promote", and its previous head is kept as <target>-pre-promote. A protected TARGET (main) needs --force.',
    'As with rollback, an existing <target>-pre-promote that is not an unused undo point is never replaced (refused), and',
    'a TARGET checkout too busy to refresh makes the command exit 6 (busy) after the target moved. An unused one that',
    'holds the only copy of its state is kept first as <target>-pre-promote-2 (or the next free number; named on',
    'stderr and as "earlier_backup").',
    '',
    'With --if-head TXID the promote is a compare-and-swap: it goes ahead only while TARGET is still at head TXID (say,',
    'the head a run forked from) with nothing uncheckpointed in its checkout, and otherwise exits 4 (BASE_MOVED),',
    'changing nothing.',
    '',
    'A source with a live session is flushed through the daemon serving this store first (-socket, else the default),',
    'so its writes so far are promoted; with no daemon to reach, its last flushed head is promoted and a warning says so.',
    '--check only asks: whether this promote, by whoever asks (--actor), would go ahead now (no daemon is reached).',
  ].join('\n'),
  examples: [
    'offshoot promote app@attempt-1 --onto main --force',
    'offshoot promote app@main --onto staging',
    'offshoot promote app@attempt-1 --onto main --force --if-head 12',
  ],
  flags: {
    onto: { type: 'string', value: 'TARGET', description: 'the branch to repoint (required)' },
    force: { type: 'boolean', description: 'promote onto a protected branch' },
    materialize: { type: 'boolean', description: "copy the source's state instead of sharing it" },
    'if-head': {
      type: 'string',
      value: 'TXID',
      description: 'promote only while TARGET is still at this head txid (else exit 4, BASE_MOVED)',
    },
    ...TARGET_VERB_FLAGS,
  },
  fillsRoCache: true,

  args: { min: 1, max: 1 },
  async run(inv) {
    const src = parseTarget(inv.arg(0));
    const onto = inv.flags.string('onto');
    if (onto === undefined)
      throw fail('USAGE', 'promote needs --onto TARGET', {
        hint: `write 'offshoot promote ${inv.arg(0)} --onto main'`,
      });
    validateName('branch', onto);
    const ifHead = txidFlag(inv.flags.string('if-head'));
    const ctx = await inv.context();
    if (inv.flags.boolean('check')) {
      const { checkPromote } = await import('../../ops/promote.js');
      await checkPromote(ctx, src, onto, {
        ...targetVerbOptions(inv),
        ...(ifHead !== undefined ? { ifHead } : {}),
      });
      return checkOutcome('promote', src);
    }
    const { flushLiveSource } = await import('../live-source.js');
    await flushLiveSource(inv, ctx, src);
    const { promote } = await import('../../ops/promote.js');
    return promoteOutcome(
      await promote(ctx, src, onto, {
        ...targetVerbOptions(inv),
        materialize: inv.flags.boolean('materialize'),
        ...(ifHead !== undefined ? { ifHead } : {}),
      }),
    );
  },
};
