import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { z } from 'zod';
import type { Confirmation } from './confirm.js';
import type { McpDeps } from './deps.js';

/** A zod object shape, as tools declare their input and output. */
export type Shape = Record<string, z.ZodType>;

/** What a tool produced: the structured result (validated against its outputSchema) and a short prose summary. */
export interface ToolOutcome<O extends Shape> {
  structured: z.infer<z.ZodObject<O>>;
  text: string;
  /** The branches the call read or changed, linked in the result as resources (`db@branch`). */
  touched?: Array<{ db: string; branch: string }>;
}

/** One MCP tool: its name, the prose that teaches the model when to reach for it, its hints, schemas and run. */
export interface ToolSpec<I extends Shape, O extends Shape> {
  name: string;
  title: string;
  description: string;
  annotations: Required<Pick<ToolAnnotations, 'readOnlyHint' | 'destructiveHint' | 'idempotentHint' | 'openWorldHint'>>;
  input: I;
  output: O;
  run(args: z.infer<z.ZodObject<I>>, deps: McpDeps): Promise<ToolOutcome<O>>;
  /**
   * For a call the safety policy refused: what it would do, to ask the host's human under -confirm-force; undefined
   * when the call is not one a human may confirm (say, promote without force: true).
   */
  confirm?(args: z.infer<z.ZodObject<I>>, deps: McpDeps): Promise<Confirmation | undefined>;
}

/** Declares a tool with its types checked end to end. */
export function defineTool<I extends Shape, O extends Shape>(spec: ToolSpec<I, O>): ToolSpec<I, O> {
  return spec;
}

/** The behaviour hints of the three tool classes; every tool sets all four explicitly. */
export const HINTS = {
  readOnly: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  additive: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  additiveIdempotent: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  destructive: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  destructiveIdempotent: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
} as const;
