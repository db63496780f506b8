import { fail } from './errors.js';
import { nameMap } from './name-map.js';

/** Free-form string tags on a branch or checkpoint (run id, git SHA, agent name). */
export type Meta = Record<string, string>;

/** The caps the store enforces on meta before anything is written. */
export const META_LIMITS = { maxKeys: 32, maxKeyBytes: 64, maxValueBytes: 512 } as const;

/**
 * The prefix of the meta keys that are offshoot's own (`offshoot.safety` and `offshoot.of` mark an undo point): no
 * caller may set one, so a branch reads as an undo point only when offshoot made it one.
 */
export const OFFSHOOT_META_PREFIX = 'offshoot.';

/**
 * Throws INVALID_ARGUMENT when caller-given meta breaks a cap (≤ 32 keys, keys ≤ 64 B, values ≤ 512 B, non-empty
 * keys) or uses a key of offshoot's own (`offshoot.*`).
 */
export function validateMeta(meta: Meta | undefined): Meta | undefined {
  if (meta === undefined) return undefined;
  const keys = Object.keys(meta);
  if (keys.length > META_LIMITS.maxKeys) {
    throw fail('INVALID_ARGUMENT', `meta has ${keys.length} keys; at most ${META_LIMITS.maxKeys} are allowed`, {
      hint: 'drop some --meta entries',
      hints: { agent: 'drop some meta entries', sdk: 'drop some meta entries' },
    });
  }
  for (const k of keys) {
    const v = meta[k];
    if (k.length === 0)
      throw fail('INVALID_ARGUMENT', 'meta key must not be empty', {
        hint: 'write --meta key=value',
        hints: { agent: 'give every meta entry a non-empty key', sdk: 'give every meta entry a non-empty key' },
      });
    if (k.startsWith(OFFSHOOT_META_PREFIX))
      throw fail(
        'INVALID_ARGUMENT',
        `meta key ${JSON.stringify(k)} is offshoot's own: keys starting with "${OFFSHOOT_META_PREFIX}" mark the undo points offshoot keeps`,
        {
          hint: `rename the --meta key so it does not start with "${OFFSHOOT_META_PREFIX}"`,
          hints: {
            agent: `rename the meta key so it does not start with "${OFFSHOOT_META_PREFIX}"`,
            sdk: `rename the meta key so it does not start with "${OFFSHOOT_META_PREFIX}"`,
          },
        },
      );
    if (Buffer.byteLength(k) > META_LIMITS.maxKeyBytes) {
      throw fail(
        'INVALID_ARGUMENT',
        `meta key ${JSON.stringify(k.slice(0, 20))}… is longer than ${META_LIMITS.maxKeyBytes} bytes`,
        { hint: 'shorten the meta key' },
      );
    }
    if (typeof v !== 'string') throw fail('INVALID_ARGUMENT', `meta value for ${JSON.stringify(k)} must be a string`);
    if (Buffer.byteLength(v) > META_LIMITS.maxValueBytes) {
      throw fail(
        'INVALID_ARGUMENT',
        `meta value for ${JSON.stringify(k)} is longer than ${META_LIMITS.maxValueBytes} bytes`,
        { hint: 'shorten the meta value' },
      );
    }
  }
  return keys.length === 0 ? undefined : meta;
}

/** Parses repeated `k=v` flag values into meta, validating the caps. */
export function parseMetaPairs(pairs: readonly string[]): Meta | undefined {
  if (pairs.length === 0) return undefined;
  const meta: Meta = nameMap();
  for (const p of pairs) {
    const i = p.indexOf('=');
    if (i <= 0)
      throw fail('USAGE', `invalid --meta ${JSON.stringify(p)}: expected key=value`, {
        hint: 'write --meta key=value',
      });
    meta[p.slice(0, i)] = p.slice(i + 1);
  }
  return validateMeta(meta);
}
