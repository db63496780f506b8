import { blobHex } from './sql-value.js';

/** Quotes an identifier for SQLite: always double-quoted, embedded quotes doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Renders a stored value (null, bigint, number, string or BLOB bytes) as a SQL literal that reads back as the same type and value. */
export function sqlLiteral(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return realLiteral(v);
  if (typeof v === 'string') {
    // A NUL would end the statement text early in some clients, so each travels as char(0), which means NUL in every
    // text encoding (a blob cast to TEXT would be read as UTF-16 in a UTF-16 database).
    if (v.includes('\0')) return `(${v.split('\0').map(quoteText).join(' || char(0) || ')})`;
    return quoteText(v);
  }
  return `X'${blobHex(v as Uint8Array)}'`;
}

function quoteText(v: string): string {
  return `'${v.replaceAll("'", "''")}'`;
}

// Shortest round-trip decimal; a decimal point or exponent keeps an integral value a REAL.
function realLiteral(v: number): string {
  if (v === Infinity) return '1e999';
  if (v === -Infinity) return '-1e999';
  if (Object.is(v, -0)) return '-0.0';
  const s = String(v);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}
