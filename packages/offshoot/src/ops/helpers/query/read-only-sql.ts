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

/**
 * True when text follows the first statement: a `;` outside quotes, brackets and comments with anything but
 * whitespace and comments after it. SQLite compiles only the first statement of a text and leaves the rest unread.
 */
function hasSecondStatement(sql: string): boolean {
  const closers: Record<string, string> = { "'": "'", '"': '"', '`': '`', '[': ']' };
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i] ?? '';
    const close = closers[c];
    if (close !== undefined) {
      const end = sql.indexOf(close, i + 1);
      if (end < 0) return false;
      i = end;
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      if (end < 0) return false;
      i = end;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) return false;
      i = end + 1;
    } else if (c === ';') {
      return (
        keywordsOf(sql.slice(i + 1))
          .replace(/;/g, '')
          .trim() !== ''
      );
    }
  }
  return false;
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
  if (hasSecondStatement(sql)) refuse('one statement at a time: text follows the first ";"');
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
