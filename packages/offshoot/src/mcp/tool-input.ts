import type { StandardSchemaV1, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { keysAsSent } from '../core/name-map.js';
import type { Shape } from '@offshoot/tools';

type Args = Record<string, unknown>;
type Result = StandardSchemaV1.Result<Args>;

/** True when the argument is a record (`meta`), optional or not. */
function isRecord(schema: z.ZodType): boolean {
  const inner = schema instanceof z.ZodOptional ? schema.unwrap() : schema;
  return inner instanceof z.ZodRecord;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The accepted arguments with each record's keys as sent (see keysAsSent). */
function keptKeys(result: Result, sent: unknown, records: readonly string[]): Result {
  if (result.issues !== undefined || !isPlainObject(sent) || !isPlainObject(result.value)) return result;
  const args = result.value;
  for (const k of records) {
    const parsed = args[k];
    if (isPlainObject(parsed)) args[k] = keysAsSent(parsed, sent[k]);
  }
  return result;
}

/**
 * A tool's input schema: zod's object of the tool's arguments, except that a record argument (`meta`) comes out with
 * every key that was sent. zod builds a record anew on a plain object, where the key `__proto__` is dropped without a
 * word (and its value never checked); the CLI keeps it. So that key is put back, in a prototype-free map, with the
 * value as sent: the tool checks it as it checks every other (validateMeta).
 */
export function toolInput(shape: Shape): StandardSchemaWithJSON<Args, Args> {
  const schema = z.object(shape);
  const std = schema['~standard'];
  const records = Object.keys(shape).filter((k) => {
    const s = shape[k];
    return s !== undefined && isRecord(s);
  });
  return {
    '~standard': {
      version: std.version,
      vendor: std.vendor,
      jsonSchema: std.jsonSchema,
      validate: (value, options) => {
        const out = std.validate(value, options);
        return out instanceof Promise ? out.then((r) => keptKeys(r, value, records)) : keptKeys(out, value, records);
      },
    },
  };
}
