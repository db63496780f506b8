import type { logTool } from '@offshoot/tools';
import { parseTime } from '../../core/moment.js';
import { logDocument, logRecordLine, readLog } from '../../ops/log.js';
import { branchOr, nameArg } from '../args.js';
import type { ToolOutcome, ToolRun } from '../tool.js';

/** `offshoot_log`: the history of a branch, read from the store (a daemon riding it would read the same). */
export const logRun: ToolRun<typeof logTool> = {
  async run(args, deps) {
    const db = nameArg('database', args.database);
    const branch = branchOr('branch', args.branch);
    const ctx = await deps.ops();
    const r = await readLog(
      ctx,
      { db, branch },
      {
        ...(args.actor !== undefined ? { actor: args.actor } : {}),
        ...(args.since !== undefined ? { since: parseTime(args.since, 'since') } : {}),
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
      },
    );
    const doc = logDocument(r);
    const head = r.live
      ? `${db}@${branch}: ${r.records.length} record(s)${r.truncated ? ' (older ones left out; raise limit)' : ''}`
      : `${db}@${branch} no longer exists; its last log has ${r.records.length} record(s)`;
    type Out = ToolOutcome<(typeof logTool)['output']>['structured'];
    return {
      structured: {
        db,
        branch,
        log_id: r.logId ?? null,
        live: r.live,
        truncated: r.truncated,
        records: doc.records as Out['records'],
        ...(doc.destroyed !== undefined ? { destroyed: doc.destroyed as Out['records'][number] } : {}),
      },
      text: [head, ...r.records.map(logRecordLine)].join('\n'),
      touched: r.live ? [{ db, branch }] : [],
    };
  },
};
