import type { mergeTool } from '@offshoot/tools';
import { undoPointName } from '../../ops/policy.js';
import { merge, mergeToJson } from '../../ops/merge.js';
import { nameArg, pointArg } from '../args.js';
import { refuseIfSession, withDaemon } from '../daemon/daemon-link.js';
import type { ToolRun } from '../tool.js';
import { readHead, wayBackNote } from './branch-facts.js';

/** `offshoot_merge`: the source's row changes since the common state, merged into the target. */
export const mergeRun: ToolRun<typeof mergeTool> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const source = nameArg('source', args.source);
    const target = nameArg('target', args.target);
    const at = args.at === undefined ? undefined : pointArg('at', args.at);
    const name = args.name === undefined ? undefined : nameArg('name', args.name);
    const opts = {
      force: args.force ?? false,
      ...(args.prefer !== undefined ? { prefer: args.prefer } : {}),
      ...(args.resolved !== undefined ? { resolved: args.resolved } : {}),
      ...(name !== undefined ? { name } : {}),
    };
    // Through the daemon serving the store when one answers (it flushes a source session of its own first and
    // applies the agent rules itself), else at rest.
    const r = await withDaemon(deps, async (d) => {
      refuseIfSession(d, db, target, 'merge into');
      if (d !== undefined)
        return d.client.merge(db, source, target, { ...opts, ...(at !== undefined ? { from: at } : {}) });
      const src = { db, branch: source, ...(at !== undefined ? { checkpoint: at } : {}) };
      return mergeToJson(await merge(await deps.ops(), src, target, { ...opts, actor: deps.actor }));
    });
    const lines = r.applied
      ? [
          `merged ${db}@${source} -> ${db}@${target} at txid ${r.txid} (checkpoint "${r.checkpoint}"); the previous ${target} is kept as ${db}@${r.backup}`,
          ...r.tables.map((t) => `${t.table}: ${t.inserted} inserted, ${t.updated} updated, ${t.deleted} deleted`),
          ...(r.resolved !== undefined ? [`${r.resolved} conflicting row(s) resolved with your rows`] : []),
          ...(r.prefer !== undefined
            ? [`${r.conflicts.length - (r.resolved ?? 0)} conflicting row(s) resolved: ${r.prefer} kept`]
            : []),
        ]
      : r.conflicts.length > 0
        ? [
            `${r.conflicts.length} conflicting row(s); nothing was merged. Show them to the human, then merge again with your rows for them in resolved, or prefer: "source" or "target", or change the rows on one side first.`,
            ...r.conflicts.map((c) => `${c.table} ${JSON.stringify(c.key)}: ${c.kind}`),
          ]
        : [`${db}@${target} already has every change of ${db}@${source}: nothing to merge`];
    return {
      structured: r,
      text: lines.join('\n'),
      touched: [
        { db, branch: target },
        ...(r.backup !== undefined ? [{ db, branch: r.backup }] : []),
        { db, branch: source },
      ],
    };
  },
  async confirm(args, deps) {
    const ctx = await deps.ops();
    const db = args.database;
    const [src, tgt, wayBack] = await Promise.all([
      readHead(ctx, db, args.source),
      readHead(ctx, db, args.target),
      wayBackNote(ctx, db, args.target),
    ]);
    if (src === undefined || tgt === undefined) return undefined;
    return {
      message:
        `The agent asks to merge the changes of ${db}@${args.source} (head txid ${src.txid}) into ` +
        `${tgt.protected ? 'protected ' : ''}${db}@${args.target} (head txid ${tgt.txid})` +
        `${args.resolved !== undefined ? `, ${args.resolved.length} conflicting row(s) written as the agent resolved them` : ''}` +
        `${args.prefer !== undefined ? `, conflicting rows taking the ${args.prefer}` : ''}.${wayBack} ` +
        `Its current head is kept as the undo point ${db}@${undoPointName(args.target, 'pre-merge')}.`,
      fingerprint: `${src.txid}/${src.etag}>${tgt.txid}/${tgt.etag}`,
    };
  },
};
