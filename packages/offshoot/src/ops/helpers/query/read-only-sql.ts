import { fail } from '../../../core/errors.js';

/** The statements a query may start with; everything else (ATTACH, VACUUM, REINDEX, BEGIN, …) is refused. */
const READING_STATEMENTS = new Set(['select', 'with', 'values', 'explain', 'pragma']);

/**
 * Pragmas that only report: allowed bare or with a parenthesised argument, never with `=`. With an argument, the
 * ones that can also set (`user_version(7)`) are still refused by SQLite's own read-only check of the statement.
 */
const READING_PRAGMAS = new Set([
  'application_id',
  'collation_list',
  'compile_options',
  'database_list',
  'encoding',
  'foreign_key_check',
  'foreign_key_list',
  'freelist_count',
  'function_list',
  'index_info',
  'index_list',
  'index_xinfo',
  'integrity_check',
  'journal_mode',
  'module_list',
  'page_count',
  'page_size',
  'pragma_list',
  'quick_check',
  'schema_version',
  'table_info',
  'table_list',
  'table_xinfo',
  'user_version',
]);

function refuse(why: string): never {
  throw fail('INVALID_ARGUMENT', `query refused: ${why}`, {
    hint: "offshoot_query runs one read-only statement (SELECT, WITH, EXPLAIN or a reporting PRAGMA); write in a fork's checkout instead",
  });
}

/** The statement with comments removed and whitespace collapsed, for keyword checks (string literals kept). */
function keywordsOf(sql: string): string {
  return sql
    .replace(/--[^\n]*/g, ' ')
    .replace(/\/\*[\s\S]*?(\*\/|$)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Checks the text of one statement before it is prepared: only SELECT, WITH, VALUES, EXPLAIN and reporting
 * PRAGMAs pass, since SQLite counts ATTACH, DETACH and VACUUM INTO as read-only. What passes must still prepare as
 * a read-only statement on a read-only, query_only connection.
 */
export function checkReadOnlySql(sql: string): void {
  const text = keywordsOf(sql);
  if (text === '') refuse('the statement is empty');
  const first = /^\(*\s*([a-z]+)/i.exec(text)?.[1]?.toLowerCase() ?? '';
  if (!READING_STATEMENTS.has(first))
    refuse(
      `${first === '' ? 'this statement' : first.toUpperCase()} is not allowed (ATTACH, VACUUM INTO and writes never are)`,
    );
  if (first === 'pragma') {
    const m = /^pragma\s+(?:[a-z_][a-z0-9_]*\.)?([a-z_][a-z0-9_]*)\s*(\(\s*[^)]*\)\s*)?;?$/i.exec(text);
    const name = m?.[1]?.toLowerCase();
    if (m === null || name === undefined || !READING_PRAGMAS.has(name))
      refuse('only reporting PRAGMAs are allowed, without "="');
  }
}
