import type { OpsContext } from '../../ops/context.js';

/**
 * The daemon's ops context for one request, whose warnings (writes kept in an undo branch, a malformed ref removed)
 * are logged as always and also answered to the caller in `warnings`, with a failed checkout refresh last.
 */
export function warningsOf(ops: OpsContext): {
  ops: OpsContext;
  field(refreshError?: Error): { warnings?: string[] };
} {
  const said: string[] = [];
  return {
    ops: {
      ...ops,
      warn: (m) => {
        said.push(m);
        ops.warn(m);
      },
    },
    field: (refreshError) => {
      const all = refreshError ? [...said, refreshError.message] : said;
      return all.length > 0 ? { warnings: all } : {};
    },
  };
}
