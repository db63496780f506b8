/**
 * A map keyed by names users choose (checkpoints, meta keys): an object without a prototype, so `constructor` or
 * `__proto__` is a name like any other instead of a lookup that falls through to Object.prototype (or a write that
 * is silently dropped). Copies from, when given.
 */
export function nameMap<T>(from?: Readonly<Record<string, T>>): Record<string, T> {
  const m = Object.create(null) as Record<string, T>;
  if (from !== undefined) for (const k of Object.keys(from)) m[k] = from[k] as T;
  return m;
}

/** The entry named `name`, only when the map has it as its own key. */
export function named<T>(map: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(map, name) ? map[name] : undefined;
}

/**
 * The map a validator rebuilt from `sent` (a record it accepted), with every key as sent and in its order: a validator
 * that builds a plain object (zod's record) drops the key `__proto__` without a word. That key comes back with its
 * value as sent, unchecked: the caller checks it as it checks every other (validateMeta). `parsed` itself when
 * nothing was dropped.
 */
export function keysAsSent<T>(parsed: Record<string, T>, sent: unknown): Record<string, T> {
  if (typeof sent !== 'object' || sent === null || Array.isArray(sent) || !Object.hasOwn(sent, '__proto__'))
    return parsed;
  const raw = sent as Record<string, T>;
  const m = nameMap<T>();
  for (const k of Object.keys(raw)) m[k] = (Object.hasOwn(parsed, k) ? parsed[k] : raw[k]) as T;
  return m;
}
