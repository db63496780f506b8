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
