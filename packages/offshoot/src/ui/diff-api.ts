import { fail } from '../core/errors.js';
import { formatTarget, parseTarget, type Target } from '../core/target.js';
import { DIFF_SERVER_BYTES, diff } from '../ops/diff.js';
import { diffToJson, type JsonTableDiff } from '../sqlite/diff/diff-json.js';
import { renderDiffSql } from '../sqlite/diff/diff-sql.js';
import type { DiffResult } from '../sqlite/diff/diff-types.js';
import type { ApiDiff, ApiDiffRow } from './api-types.js';
import { serverInfo } from './tree-api.js';
import type { UiSource } from './ui-source.js';

const DEFAULT_LIMIT = 100;
const MAX_LIMIT = 1000;
const CACHED_DIFFS = 4;

/** The diff query a page asks for: two targets, and which table's rows from where. */
export interface DiffQuery {
  left: Target;
  right: Target;
  table?: string;
  offset: number;
  limit: number;
}

function intParam(q: URLSearchParams, name: string, fallback: number, max: number): number {
  const text = q.get(name);
  if (text === null || text === '') return fallback;
  const n = Number(text);
  if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n > max)
    throw fail('INVALID_ARGUMENT', `${name}=${text}: must be an integer from 0 to ${max}`, {
      hint: `e.g. ${name}=${fallback}`,
    });
  return n;
}

/** Parses `left`, `right` (db[@branch[@checkpoint]]), `table`, `offset` and `limit` from a query string. */
export function parseDiffQuery(q: URLSearchParams): DiffQuery {
  const side = (name: string): Target => {
    const v = q.get(name);
    if (v === null || v === '')
      throw fail('INVALID_ARGUMENT', `the ${name} parameter is missing`, {
        hint: 'pass left= and right= as db[@branch[@checkpoint]], e.g. /api/diff?left=app@main&right=app@attempt',
      });
    return parseTarget(v, { allowCheckpoint: true });
  };
  const out: DiffQuery = {
    left: side('left'),
    right: side('right'),
    offset: intParam(q, 'offset', 0, Number.MAX_SAFE_INTEGER),
    limit: Math.max(1, intParam(q, 'limit', DEFAULT_LIMIT, MAX_LIMIT)),
  };
  const table = q.get('table');
  if (table !== null && table !== '') out.table = table;
  return out;
}

function rowsOf(t: JsonTableDiff): ApiDiffRow[] {
  return [
    ...t.removed.map(
      (row): ApiDiffRow => ({ op: '-', key: Object.fromEntries(t.key.map((k) => [k, row[k] ?? null])), row }),
    ),
    ...t.changed.map((c): ApiDiffRow => ({ op: '~', key: c.key, before: c.before, after: c.after })),
    ...t.added.map(
      (row): ApiDiffRow => ({ op: '+', key: Object.fromEntries(t.key.map((k) => [k, row[k] ?? null])), row }),
    ),
  ];
}

/**
 * Diffs through ops.diff, caching the last few results by both sides' ref versions, so paging through one diff
 * computes it once and a moved head computes it afresh.
 */
export class DiffPages {
  readonly #cache = new Map<string, Promise<DiffResult>>();

  constructor(private readonly src: UiSource) {}

  async #result(left: Target, right: Target): Promise<DiffResult> {
    const version = async (t: Target): Promise<string> =>
      (await this.src.ctx.store.tryGetRef(t.db, t.branch))?.etag ?? 'missing';
    const key = `${formatTarget(left)}|${formatTarget(right)}|${await version(left)}|${await version(right)}`;
    let p = this.#cache.get(key);
    if (p === undefined) {
      p = diff(this.src.ctx, left, right, { maxBytes: DIFF_SERVER_BYTES });
      this.#cache.set(key, p);
      p.catch(() => this.#cache.delete(key));
      while (this.#cache.size > CACHED_DIFFS) this.#cache.delete(this.#cache.keys().next().value as string);
    }
    return p;
  }

  /** GET /api/diff: schema changes, per-table counts, and one page of one table's changed rows. */
  async page(q: DiffQuery): Promise<ApiDiff> {
    const json = diffToJson(await this.#result(q.left, q.right));
    const out: ApiDiff = {
      server: serverInfo(this.src),
      left: formatTarget(q.left),
      right: formatTarget(q.right),
      schema: json.schema,
      tables: json.tables.map((t) => ({
        table: t.table,
        key: t.key,
        status: t.status,
        ...(t.left_count !== undefined ? { left_count: t.left_count } : {}),
        ...(t.right_count !== undefined ? { right_count: t.right_count } : {}),
        added: t.added.length,
        removed: t.removed.length,
        changed: t.changed.length,
      })),
    };
    const t =
      q.table !== undefined
        ? json.tables.find((x) => x.table === q.table)
        : json.tables.find((x) => x.added.length + x.removed.length + x.changed.length > 0);
    if (q.table !== undefined && t === undefined)
      throw fail('NOT_FOUND', `table ${q.table} is on neither side`, { hint: 'pick a table from the tables list' });
    if (t !== undefined) {
      const rows = rowsOf(t);
      out.page = {
        table: t.table,
        offset: q.offset,
        limit: q.limit,
        total: rows.length,
        rows: rows.slice(q.offset, q.offset + q.limit),
      };
    }
    return out;
  }

  /** GET /api/diff.sql: the SQL that turns the left side into the right, as `offshoot diff --sql` prints it. */
  async sql(q: DiffQuery): Promise<string> {
    return renderDiffSql(await this.#result(q.left, q.right));
  }
}
