function value(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return /^[^\s"=]*$/.test(s) && s !== '' ? s : JSON.stringify(s);
}

/** `offshoot: session: db@b: <event> k=v …`, values quoted only when they hold spaces, quotes or `=`. */
export function sessionLogLine(
  db: string,
  branch: string,
  event: string,
  detail: Record<string, unknown> = {},
): string {
  const kv = Object.entries(detail)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}=${value(v)}`)
    .join('');
  return `offshoot: session: ${db}@${branch}: ${event}${kv}`;
}

/** `offshoot: janitor: <message>`. */
export function janitorLogLine(message: string): string {
  return `offshoot: janitor: ${message}`;
}
