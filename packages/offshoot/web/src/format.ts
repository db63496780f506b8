// Formatting shared by the views.

/** Bytes in 1024-based units, as the CLI prints them. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** A count and its noun, singular for one: `1 branch`, `2 branches` (`many` defaults to the noun plus s). */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A countdown such as `1h02m` or `42s` to an RFC 3339 time, or `expired`. */
export function countdown(until: string, now = Date.now()): string {
  const ms = Date.parse(until) - now;
  if (!(ms > 0)) return 'expired';
  const s = Math.ceil(ms / 1000);
  const d = Math.floor(s / 86400);
  const hh = Math.floor((s % 86400) / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = s % 60;
  if (d > 0) return `${d}d${String(hh).padStart(2, '0')}h`;
  if (hh > 0) return `${hh}h${String(mm).padStart(2, '0')}m`;
  if (mm > 0) return `${mm}m${String(ss).padStart(2, '0')}s`;
  return `${ss}s`;
}

/** A stored value as the diff encodes it, for a table cell. */
export function value(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'object') {
    const o = v as Record<string, string>;
    if (o.$blob !== undefined) return `x'${o.$blob}'`;
    if (o.$int !== undefined) return o.$int;
    if (o.$real !== undefined) return o.$real;
  }
  return String(v);
}

/** A short local time for an RFC 3339 string. */
export function when(iso: string | undefined): string {
  if (iso === undefined) return '';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}
