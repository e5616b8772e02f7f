import { type ToolDef, inputJsonSchema } from "./define-tool";
import type { JsonSchema } from "./output-schema";

export interface ToolSchemas {
  inputSchema: JsonSchema;
  /** Absent for a text-only tool. */
  outputSchema?: JsonSchema;
}

/** What schemas/<tool>.json must contain for a tool definition. */
export function toolSchemas(def: ToolDef<unknown>): ToolSchemas {
  return def.output === null ? { inputSchema: inputJsonSchema(def) } : { inputSchema: inputJsonSchema(def), outputSchema: def.output };
}

export function schemaFileText(def: ToolDef<unknown>): string {
  return `${JSON.stringify(toolSchemas(def), null, 2)}\n`;
}
