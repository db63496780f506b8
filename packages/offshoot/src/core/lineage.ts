import { randomBytes } from 'node:crypto';

/** A fresh lineage id: 32 hex characters from 16 random bytes; new lineages start at epoch 1. */
export function newLineageId(): string {
  return randomBytes(16).toString('hex');
}
