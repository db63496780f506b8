import { readFileSync } from 'node:fs';
import { fail, hasCode } from '../../core/errors.js';
import { validateName } from '../../core/names.js';
import { parseTarget } from '../../core/target.js';
import type { ResolvedRow } from '../../ops/merge.js';
import type { Command } from '../command.js';
import { checkOutcome, mergeOutcome } from '../output.js';
import { TARGET_VERB_FLAGS, targetVerbOptions } from '../target-verb-flags.js';

/** The --prefer value: `source` or `target`, or undefined when the flag is absent. */
function preferFlag(text: string | undefined): 'source' | 'target' | undefined {
  if (text === undefined || text === 'source' || text === 'target') return text;
  throw fail('USAGE', `--prefer takes source or target, not ${JSON.stringify(text)}`, {
    hint: 'write --prefer source (conflicting rows take the source) or --prefer target (they stay as they are)',
  });
}

/**
 * The rows of `--resolve FILE` (`-`: standard input): a JSON array of {"table", "key", "row"}, or an object holding
 * one as "resolved"; undefined when the flag is absent.
 */
async function resolveFlag(path: string | undefined): Promise<ResolvedRow[] | undefined> {
  if (path === undefined) return undefined;
  const where = path === '-' ? 'standard input' : path;
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (err) {
    throw fail('USAGE', `--resolve: cannot read ${where} (${(err as Error).message})`, {
      hint: 'name a JSON file of resolved rows, or - to read them from standard input',
    });
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw fail('USAGE', `--resolve: ${where} is not JSON (${(err as Error).message})`, {
      hint: 'write the resolved rows as JSON: [{"table": "t", "key": {"id": 1}, "row": {"id": 1, "v": "kept"}}]',
    });
  }
  const { readResolved } = await import('../../ops/merge.js');
  try {
    return readResolved(doc);
  } catch (err) {
    if (hasCode(err, 'INVALID_ARGUMENT')) throw fail('USAGE', `--resolve: ${err.message}`, { hint: err.hint });
    throw err;
  }
}

/** `offshoot merge <db>@<src>[@point] --into <tgt> [--prefer source|target]`: a three-way merge, row by row. */
export const mergeCommand: Command = {
  name: 'merge',
  summary: "merge a branch's row changes into another, three-way",
  usage:
    '<db>@<src>[@CP|@tx:N|@at:T] --into TARGET [--prefer source|target] [--resolve FILE|-] [--name CP] [--force] [--check]',
  help: [
    'Applies the row changes the source made since its common state with TARGET to TARGET: the state the last merge',
    'of it into TARGET took, else the fork point (one a fork of the other, or both forks of one branch at one head).',
    'The source is its head, or the checkpoint or moment it names (app@a@tx:42, app@a@at:T); TARGET is a branch head.',
    'A row only the source changed is taken; a row both changed to different values is a conflict (update/update,',
    'update/delete, delete/update, insert/insert on one key): the conflicts are listed, nothing is changed and the',
    'command exits 9, unless each is resolved: by a row of --resolve FILE (- reads standard input), else by --prefer',
    'source (those rows take the source) or --prefer target (they stay as they are). FILE is a JSON array of',
    '{"table", "key", "row"} (or an object holding one as "resolved"): table and key as the conflict report (--json)',
    'gives them, row the full row to write there (column -> value, values encoded as the report encodes them, a BLOB',
    'as {"$blob": "<hex>"}), or null to delete it. Some conflicts resolved and others not, with no --prefer, is',
    'refused (MERGE_CONFLICT, exit 9); a row naming no conflict, an unknown table or column, or a key column that',
    'differs from the key is refused (exit 2). Nothing is changed by a refusal. Schema changes on both sides refuse the merge (MERGE_CONFLICT, exit 9), so does a merge',
    'whose rows break a UNIQUE or foreign-key constraint; rows of a table without a primary key are refused',
    '(UNSUPPORTED). The merge lands as a new checkpoint on TARGET (--name, else "merge", "merge-2", ...) and its',
    'previous head is kept as <target>-pre-merge (the undo point: promote it back to undo the merge). A protected',
    'TARGET (main) needs --force. The source is unchanged; dirty checkouts of both heads are checkpointed first, and',
    'a source head with a live session is flushed through the daemon serving this store first (-socket, else the',
    "default). TARGET's log records the merge (op merge, the source state and the common state). --check only asks:",
    'whether this merge, by whoever asks (--actor), would go ahead now (conflicts are not refusals; no daemon is',
    'reached).',
  ].join('\n'),
  examples: [
    'offshoot merge app@agent-a --into main --force',
    'offshoot merge app@agent-b --into main --force --prefer source',
    'offshoot merge app@agent-a --into agent-b --json',
    `echo '[{"table": "t", "key": {"id": 1}, "row": {"id": 1, "v": "both"}}]' | offshoot merge app@agent-b --into main --force --resolve -`,
  ],
  flags: {
    into: { type: 'string', value: 'TARGET', description: 'the branch to merge into (required)' },
    prefer: {
      type: 'string',
      value: 'SIDE',
      description: 'resolve conflicting rows: source takes the source, target keeps the target',
    },
    resolve: {
      type: 'string',
      value: 'FILE',
      description: 'resolve conflicting rows with the rows of this JSON file (- reads standard input)',
    },
    name: { type: 'string', value: 'CP', description: 'the name of the checkpoint the merge makes on TARGET' },
    force: { type: 'boolean', description: 'merge into a protected branch' },
    ...TARGET_VERB_FLAGS,
  },
  fillsRoCache: true,

  args: { min: 1, max: 1 },
  async run(inv) {
    const src = parseTarget(inv.arg(0), { allowCheckpoint: true });
    const into = inv.flags.string('into');
    if (into === undefined)
      throw fail('USAGE', 'merge needs --into TARGET', { hint: `write 'offshoot merge ${inv.arg(0)} --into main'` });
    validateName('branch', into);
    const prefer = preferFlag(inv.flags.string('prefer'));
    const resolved = await resolveFlag(inv.flags.string('resolve'));
    const name = inv.flags.string('name');
    const ctx = await inv.context();
    if (inv.flags.boolean('check')) {
      const { checkMerge } = await import('../../ops/merge.js');
      await checkMerge(ctx, src, into, {
        ...targetVerbOptions(inv),
        ...(resolved !== undefined ? { resolved } : {}),
        ...(name !== undefined ? { name } : {}),
      });
      return checkOutcome('merge', src);
    }
    const { flushLiveSource } = await import('../live-source.js');
    if (src.checkpoint === undefined) await flushLiveSource(inv, ctx, src);
    const { merge, mergeToJson } = await import('../../ops/merge.js');
    const r = await merge(ctx, src, into, {
      ...targetVerbOptions(inv),
      ...(prefer !== undefined ? { prefer } : {}),
      ...(resolved !== undefined ? { resolved } : {}),
      ...(name !== undefined ? { name } : {}),
    });
    return mergeOutcome(r, mergeToJson(r));
  },
};
