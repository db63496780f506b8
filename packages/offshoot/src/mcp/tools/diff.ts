import { diffOutput, diffRows, type diffTool } from '@offshoot/tools';
import { DIFF_SERVER_BYTES, diff } from '../../ops/diff.js';
import { renderDiffSummary, renderDiffText } from '../../sqlite/diff/diff-format.js';
import { diffToJson } from '../../sqlite/diff/diff-json.js';
import { firstRows } from '../../sqlite/diff/row-window.js';
import { branchOr, nameArg, pointArg } from '../args.js';
import { holdingEphemeral, withDaemon } from '../daemon/daemon-link.js';
import type { ToolRun } from '../tool.js';

const MAX_TEXT = 20_000;

/** `offshoot_diff`: the native row-level diff of two durable states, structured and as text. */
export const diffRun: ToolRun<typeof diffTool> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const source = branchOr('source', args.source);
    const target = nameArg('target', args.target);
    const limit = diffRows(args.limit);
    const left = {
      db,
      branch: source,
      ...(args.source_at ? { checkpoint: pointArg('source_at', args.source_at) } : {}),
    };
    const right = {
      db,
      branch: target,
      ...(args.target_at ? { checkpoint: pointArg('target_at', args.target_at) } : {}),
    };
    const label = (t: { branch: string; checkpoint?: string }) =>
      `${db}@${t.branch}${t.checkpoint ? `@${t.checkpoint}` : ''}`;
    // A side that is an ephemeral branch is read by the daemon holding it, the only one that has it.
    const through = await withDaemon(deps, async (d) => {
      const held = holdingEphemeral(d, db, source) ?? holdingEphemeral(d, db, target);
      if (held === undefined) return undefined;
      return held.client.diff(label(left), label(right), { ...(args.summary ? { summary: true } : {}), limit });
    });
    if (through !== undefined) {
      const structured = diffOutput(label(left), label(right), through);
      return {
        structured,
        text: [
          `${label(left)} -> ${label(right)}`,
          ...structured.schema.map((c) => `schema: ${c.type} ${c.name} ${c.change}`),
          ...structured.tables.map((t) => `${t.table}: ${t.status} (+${t.added} -${t.removed} ~${t.changed})`),
        ].join('\n'),
        touched: [
          { db, branch: source },
          { db, branch: target },
        ],
      };
    }
    const ctx = await deps.ops();
    deps.control.step(`comparing ${label(left)} with ${label(right)}`);
    // Only `limit` row changes of each kind are kept while every one is counted: the cap bounds the answer.
    const result = await diff(ctx, left, right, {
      summaryOnly: args.summary ?? false,
      rows: firstRows(limit),
      maxBytes: DIFF_SERVER_BYTES,
    });
    deps.control.step('rendering the diff');
    const rendered = result.summaryOnly
      ? renderDiffSummary(result, label(left), label(right))
      : renderDiffText(result, label(left), label(right));
    const text =
      rendered.length > MAX_TEXT ? `${rendered.slice(0, MAX_TEXT)}\n… (cut; see structuredContent)` : rendered;
    return {
      structured: diffOutput(label(left), label(right), diffToJson(result)),
      text,
      touched: [
        { db, branch: source },
        { db, branch: target },
      ],
    };
  },
};
