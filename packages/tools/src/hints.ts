/** The four behaviour hints every tool sets explicitly (the MCP tool annotations). */
export interface ToolHints {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** The behaviour hints of the tool classes. */
export const HINTS = {
  readOnly: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  additive: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  additiveIdempotent: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  destructive: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  destructiveIdempotent: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
} as const satisfies Record<string, ToolHints>;
