import { fail } from '../../core/errors.js';
import { parseTarget } from '../../core/target.js';
import type { Command } from '../command.js';

/** `offshoot log <db>[@branch] [--since T] [--actor human|agent] [--limit N]`: the history of a branch. */
export const logCommand: Command = {
  name: 'log',
  summary: 'show the history of a branch: every change, who asked for it and through what',
  usage: '<db>[@branch] [--since TIME|DURATION] [--actor human|agent] [--limit N]',
  help: [
    'Every verb that changes a branch appends a record to its log, in the same compare-and-swap as the change:',
    'create, flush, checkpoint, fork, rollback, promote, compact, touch, protect, unprotect, destroy, reap, merge.',
    'Each says when, the txids before and after, who asked (human or agent), through what (cli, daemon,',
    "mcp:<tool>, sdk:<adapter>/<framework>, janitor), the actor's tags, and for a flush the pages and bytes written.",
    'Lines are oldest first: time, #sequence, op, txids, actor and surface, then the details.',
    '--since keeps records at or after a time (RFC 3339) or within a duration of now (2h); --actor human|agent (the',
    "global flag, which on log filters) keeps one actor's; --limit N the newest N that pass (default 100, 0 for all).",
    'A destroyed branch shows its last incarnation, ending with who destroyed it, until GC collects it.',
  ].join('\n'),
  examples: ['offshoot log app', 'offshoot log app@attempt-1 --actor agent --json', 'offshoot log app --since 2h'],
  flags: {
    since: { type: 'string', value: 'TIME|DURATION', description: 'records at or after this time, or this long ago' },
    limit: { type: 'string', value: 'N', description: 'the newest N records (default 100, 0 for all)' },
  },
  args: { min: 1, max: 1 },
  async run(inv) {
    const t = parseTarget(inv.arg(0));
    // The global --actor (checked as human or agent when parsed) is, on a read, which actor's records to keep.
    const by = inv.flags.string('actor') as 'human' | 'agent' | undefined;
    const rawLimit = inv.flags.string('limit');
    if (rawLimit !== undefined && !/^[0-9]+$/.test(rawLimit))
      throw fail('USAGE', `--limit ${JSON.stringify(rawLimit)} is not a whole number of records`, {
        hint: 'pass --limit N (0 for every record)',
      });
    const ctx = await inv.context();
    const [{ readLog, logDocument, logRecordLine }, { parseSince }] = await Promise.all([
      import('../../ops/log.js'),
      import('../../core/moment.js'),
    ]);
    const since = inv.flags.string('since');
    const r = await readLog(ctx, t, {
      ...(since !== undefined ? { since: parseSince(since, ctx.now()) } : {}),
      ...(by !== undefined ? { actor: by } : {}),
      ...(rawLimit !== undefined ? { limit: Number(rawLimit) } : {}),
    });
    const notes: string[] = [];
    if (!r.live) notes.push(`${t.db}@${t.branch} no longer exists; this is the log of its last incarnation`);
    if (r.logId === undefined)
      notes.push(`${t.db}@${t.branch} has no log yet: it predates the log, or an earlier offshoot rewrote it`);
    if (r.truncated) notes.push(`older records left out; pass --limit 0 for all`);
    return {
      data: logDocument(r),
      text: r.records.map((x) => `${logRecordLine(x)}\n`).join(''),
      notes,
    };
  },
};
