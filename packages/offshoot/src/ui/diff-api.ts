import { fail, hasCode } from '../core/errors.js';
import { formatTarget, parseTarget, type Target } from '../core/target.js';
import { DIFF_SERVER_BYTES, type DiffOpOptions, diff } from '../ops/diff.js';
import { diffToJson, type JsonTableDiff } from '../sqlite/diff/diff-json.js';
import { renderDiffSql } from '../sqlite/diff/diff-sql.js';
import type { DiffResult } from '../sqlite/diff/diff-types.js';
import { firstRows, type RowCounts, type RowWindows, rowCounts, rowsLeftOut } from '../sqlite/diff/row-window.js';
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

/** Every table's counts and no row: the overview costs no memory however large the diff. */
const NO_ROWS = firstRows(0);

/**
 * The windows of one table's row changes that make rows [offset, offset + limit) of its page, which lists the
 * removed rows, then the changed, then the added, each in key order.
 */
function pageWindows(n: RowCounts, offset: number, limit: number): RowWindows {
  const windows: RowWindows = {};
  let start = 0;
  for (const kind of ['removed', 'changed', 'added'] as const) {
    const from = Math.max(offset, start);
    const to = Math.min(offset + limit, start + n[kind]);
    windows[kind] = { offset: Math.max(0, from - start), limit: Math.max(0, to - from) };
    start += n[kind];
  }
  return windows;
}

/** A TOO_LARGE as the dashboard says it: what happened, and the fix in the page's own terms. */
function tooLarge(err: unknown, hint: string): unknown {
  return hasCode(err, 'TOO_LARGE') ? fail('TOO_LARGE', err.message, { hint, cause: err }) : err;
}

/**
 * Diffs through ops.diff, caching the last few results by both sides' ref versions and what was asked. A page reads
 * every table's counts (keeping no row), then only the rows of its one page: the cap bounds what is sent, so a diff
 * of any size pages; a moved head computes afresh.
 */
export class DiffPages {
  readonly #cache = new Map<string, Promise<DiffResult>>();

  constructor(private readonly src: UiSource) {}

  async #result(left: Target, right: Target, what: string, opts: DiffOpOptions): Promise<DiffResult> {
    const version = async (t: Target): Promise<string> =>
      (await this.src.ctx.store.tryGetRef(t.db, t.branch))?.etag ?? 'missing';
    const key = `${formatTarget(left)}|${formatTarget(right)}|${await version(left)}|${await version(right)}|${what}`;
    let p = this.#cache.get(key);
    if (p === undefined) {
      p = diff(this.src.ctx, left, right, { maxBytes: DIFF_SERVER_BYTES, ...opts });
      this.#cache.set(key, p);
      p.catch(() => this.#cache.delete(key));
      while (this.#cache.size > CACHED_DIFFS) this.#cache.delete(this.#cache.keys().next().value as string);
    }
    return p;
  }

  /**
   * GET /api/diff: schema changes, per-table counts, and one page of one table's changed rows. A page whose rows
   * alone pass the cap comes back empty with `page_error` saying so and how to narrow it; the counts stand.
   */
  async page(q: DiffQuery): Promise<ApiDiff> {
    const overview = await this.#result(q.left, q.right, 'counts', { rows: NO_ROWS });
    const json = diffToJson(overview);
    const out: ApiDiff = {
      server: serverInfo(this.src),
      left: formatTarget(q.left),
      right: formatTarget(q.right),
      schema: json.schema,
      tables: json.tables.map((t) => {
        const n = rowCounts(t);
        return {
          table: t.table,
          key: t.key,
          status: t.status,
          ...(t.left_count !== undefined ? { left_count: t.left_count } : {}),
          ...(t.right_count !== undefined ? { right_count: t.right_count } : {}),
          added: n.added,
          removed: n.removed,
          changed: n.changed,
        };
      }),
    };
    const t =
      q.table !== undefined
        ? overview.tables.find((x) => x.table === q.table)
        : overview.tables.find((x) => rowsLeftOut(x) > 0);
    if (q.table !== undefined && t === undefined)
      throw fail('NOT_FOUND', `table ${q.table} is on neither side`, { hint: 'pick a table from the tables list' });
    if (t === undefined) return out;
    const n = rowCounts(t);
    const total = n.removed + n.changed + n.added;
    out.page = { table: t.table, offset: q.offset, limit: q.limit, total, rows: [] };
    if (total === 0 || q.offset >= total) return out;
    try {
      const rows = await this.#result(q.left, q.right, `page|${t.table}|${q.offset}|${q.limit}`, {
        tables: [t.table],
        rows: pageWindows(n, q.offset, q.limit),
      });
      const shown = diffToJson(rows).tables.find((x) => x.table === t.table);
      out.page.rows = shown === undefined ? [] : rowsOf(shown);
    } catch (err) {
      if (!hasCode(err, 'TOO_LARGE')) throw err;
      const fewer = Math.max(1, Math.floor(q.limit / 10));
      out.page_error = {
        ok: false,
        error: `the rows of ${t.table} from ${q.offset + 1} are too large to send: ${err.message}`,
        code: err.code,
        hint: `list fewer rows at a time (limit=${fewer}), or download the SQL patch of a narrower diff with the CLI`,
      };
    }
    return out;
  }

  /** GET /api/diff.sql: the SQL that turns the left side into the right, as `offshoot diff --sql` prints it. */
  async sql(q: DiffQuery): Promise<string> {
    const whole = await this.#result(q.left, q.right, 'sql', { forSql: true }).catch((err: unknown) => {
      throw tooLarge(
        err,
        `the SQL patch needs every row change: write it with the CLI, which holds up to 256 MiB (offshoot diff ${formatTarget(q.left)} ${formatTarget(q.right)} --sql > patch.sql, one --table at a time if need be), or compare two checkpoints closer together`,
      );
    });
    return renderDiffSql(whole);
  }
}
