import { fail } from '../../core/errors.js';
import { parseDuration } from '../../core/duration.js';
import type { Command } from '../command.js';
import { gcOutcome } from '../output.js';

/** `offshoot gc [--grace d]`: reap expired branches, clear stale claims, collect unreachable objects. */
export const gcCommand: Command = {
  name: 'gc',
  summary: 'reap expired branches and garbage-collect unreachable objects',
  usage: '[--grace DURATION]',
  help: [
    'Reaps branches whose TTL ran out (per-branch failures go to stderr; the run continues), except those whose',
    'checkout holds writes no checkpoint has or is held open by a connection (postponed, named on stderr and in',
    '"postponed" of --json: checkpoint the writes, or destroy the branch to discard them), clears destroy claims',
    'older than 30s, then tombstones objects no branch reaches and deletes those tombstoned longer than --grace',
    '(default 1h; --grace 0 deletes them on the next run). Fails closed: an error before deleting deletes nothing.',
    'A malformed ref is named on stderr (exit 7) without stopping the run: every lineage it mentions is kept whole,',
    'and if it names none, nothing is deleted. Temp files and incomplete S3 multipart uploads that writers which',
    'died left behind are removed once older than --grace and at least 1h old (no live writer holds one that long).',
  ].join('\n'),
  examples: ['offshoot gc', 'offshoot gc --grace 0s'],
  flags: {
    grace: {
      type: 'string',
      value: 'DURATION',
      description: 'how long an unreachable object waits before deletion (default 1h)',
    },
  },
  args: { min: 0, max: 0 },
  async run(inv) {
    const grace = parseDuration(inv.flags.string('grace') ?? '1h');
    if (grace < 0n)
      throw fail('INVALID_ARGUMENT', '--grace must not be negative', {
        hint: 'use 0 or a positive duration such as 1h',
      });
    const ctx = await inv.context();
    const { runGc } = await import('../../ops/gc.js');
    return gcOutcome(await runGc(ctx, { grace }));
  },
};
