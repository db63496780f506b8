import { z } from 'zod/v4';
import type { ToolHints } from './hints.js';

/** A zod object shape, as tools declare their input and output. */
export type Shape = Record<string, z.ZodType>;

/** The arguments of a tool whose input is `I`, as validated. */
export type ArgsOf<I extends Shape> = z.infer<z.ZodObject<I>>;

/** The structured result of a tool whose output is `O`. */
export type OutputOf<O extends Shape> = z.infer<z.ZodObject<O>>;

/**
 * One tool as every surface offers it: its name, the prose that teaches the model when to reach for it, its hints,
 * its schemas, and which of its calls the human may confirm. A surface adds only how a call runs.
 */
export interface ToolSpec<I extends Shape = Shape, O extends Shape = Shape> {
  name: string;
  title: string;
  description: string;
  annotations: ToolHints;
  input: I;
  output: O;
  /**
   * Whether the human may confirm this call when offshoot refuses it with a refusal the human may lift (see
   * needsHuman); absent for a tool whose calls the human is never asked about.
   */
  confirmable?(args: ArgsOf<I>): boolean;
}

/** Declares a tool with its types checked end to end. */
export function defineTool<I extends Shape, O extends Shape>(spec: ToolSpec<I, O>): ToolSpec<I, O> {
  return spec;
}

/** A tool's input and output as zod objects, built with the catalogue's own zod (a surface's may be another copy). */
export function toolSchemas<I extends Shape, O extends Shape>(
  spec: ToolSpec<I, O>,
): { input: z.ZodObject<I>; output: z.ZodObject<O> } {
  return { input: z.object(spec.input), output: z.object(spec.output) };
}
