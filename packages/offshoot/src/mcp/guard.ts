import { hasCode } from '../core/errors.js';

/**
 * True when err is the safety policy refusing the agent something its human may allow (by -allow-force, or under
 * -confirm-force by confirming this one call), rather than a refusal no permission lifts or a storage hiccup.
 */
export function isGuardRefusal(err: unknown): boolean {
  return hasCode(err, 'PROTECTED') && err.humanCanAllow;
}
