import type { ForceOptions } from './client.js';
import type { BranchInfo } from './types.js';

/** The earlier client's name for a `branches` entry. */
export type Branch = BranchInfo;

/** The earlier client's name for the options of `destroy`. */
export type DestroyOptions = ForceOptions;

/** The earlier client's name for the options of `checkoutAt`. */
export type CheckoutAtOptions = ForceOptions;
