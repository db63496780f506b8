import { fail } from './errors.js';

/** What a name is used for; appears in error messages. */
export type NameKind = 'database' | 'branch' | 'checkpoint' | 'name';

const NAME_RE = /^[a-z0-9_.-]{1,128}$/;

/** Returns the problem with a name, or undefined when it is valid ([a-z0-9-_.], 1–128 chars, not . or .., no ..). */
export function nameProblem(value: string): string | undefined {
  if (value.length === 0) return 'must not be empty';
  if (value.length > 128) return 'must be at most 128 characters';
  if (!NAME_RE.test(value)) return 'may only contain a-z, 0-9, "-", "_" and "."';
  if (value === '.' || value === '..' || value.includes('..')) return 'may not be "." or ".." or contain ".."';
  return undefined;
}

/**
 * A valid name close to value: lower-cased, every run of other characters (and of dots) made one "-" (one "."),
 * trimmed of them at both ends and cut to 128 characters; undefined when nothing is left.
 */
export function nameLike(value: string): string | undefined {
  const near = value
    .toLowerCase()
    .replace(/[^a-z0-9_.-]+/g, '-')
    .replace(/\.{2,}/g, '.')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 128)
    .replace(/[-.]+$/, '');
  return near !== '' && nameProblem(near) === undefined ? near : undefined;
}

/** The fix for an invalid name: the rule, and a valid name close to the one given when there is one. */
export function nameHint(value: string): string {
  const near = nameLike(value);
  return `use 1-128 characters of a-z, 0-9, "-", "_" and "."${near === undefined ? '' : `, e.g. ${JSON.stringify(near)}`}`;
}

/** Throws INVALID_NAME unless value is a valid database, branch or checkpoint name. */
export function validateName(kind: NameKind, value: string): string {
  const problem = nameProblem(value);
  if (problem) {
    throw fail('INVALID_NAME', `store: invalid ${kind} name ${JSON.stringify(value)}: ${problem}`, {
      hint: nameHint(value),
    });
  }
  return value;
}
