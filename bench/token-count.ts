/**
 * How the token benchmark counts what a model pays for, with an o200k
 * tokenizer (gpt-tokenizer): the visible part of a tool list (name,
 * description, input schema, as a host hands them to the model; output
 * schemas and annotations are not shown by most hosts), and the text of a
 * call (the arguments the model writes, the answer text it reads).
 */
import { encode } from "gpt-tokenizer/encoding/o200k_base";

export function tokens(text: string): number {
  return encode(text).length;
}

export interface VisibleTool {
  name: string;
  description?: string;
  inputSchema: unknown;
}

/** One tool as a host shows it: its name, its description and its input schema as JSON. */
export function visibleToolTokens(tool: VisibleTool): number {
  return tokens(JSON.stringify({ name: tool.name, description: tool.description ?? "", input_schema: tool.inputSchema }));
}

/** A call as the model writes it: the tool's name and its arguments as JSON. */
export function requestTokens(name: string, args: Record<string, unknown>): number {
  return tokens(JSON.stringify({ name, arguments: args }));
}
