import { type ToolDef, inputJsonSchema } from "./define-tool";
import type { JsonSchema } from "./output-schema";

export interface ToolSchemas {
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
}

/** What schemas/<tool>.json must contain for a tool definition. */
export function toolSchemas(def: ToolDef<unknown>): ToolSchemas {
  return { inputSchema: inputJsonSchema(def), outputSchema: def.output };
}

export function schemaFileText(def: ToolDef<unknown>): string {
  return `${JSON.stringify(toolSchemas(def), null, 2)}\n`;
}
