import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { internal, invalidArgument } from "../core/errors";
import type { Workspace } from "../ops/workspace";
import type { JsonSchema } from "./output-schema";
import type { McpSession } from "./session";

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export interface ToolContext {
  ws: Workspace;
  signal: AbortSignal;
  /** Sends notifications/progress when the request carried a progressToken. */
  progress: (done: number, total: number, message?: string) => void;
  /** What the server remembers for the calling MCP session. */
  session: McpSession;
}

export type Branch = "immutable" | "worktree" | "none";

/** `O` defaults to any: the erased form a list of tools holds (each tool is checked where it is defined). */
export interface ToolDef<A = unknown, O extends object = any> {
  name: string;
  description: string;
  args: v.GenericSchema<unknown, A>;
  output: JsonSchema;
  annotations: ToolAnnotations;
  /** Which success branch an answer to these arguments must be (checked at runtime). */
  branch: (args: A) => Branch;
  run: (args: A, ctx: ToolContext) => Promise<O>;
  /**
   * The answer as the model reads it (content[0].text; src/mcp/render/). The
   * full answer is structuredContent either way; without a renderer, or
   * under `serve --text json`, the text is the canonical JSON of it.
   */
  text?: (out: O, args: A) => string;
}

export function defineTool<A, O extends object>(def: ToolDef<A, O>): ToolDef<A, O> {
  if (def.description.length >= 2000) throw new Error(`${def.name}: description must stay under 2000 characters`);
  return def;
}

/** The input schema clients see, generated from the valibot schema (no $schema, root object with properties). */
export function inputJsonSchema(def: ToolDef<unknown>): JsonSchema {
  const schema = toJsonSchema(def.args as never, { errorMode: "throw" }) as JsonSchema;
  delete schema.$schema;
  if (!schema.properties) schema.properties = {};
  return schema;
}

/** Parses arguments; a failure tells the model exactly which argument is wrong and how. */
export function parseArgs<A>(def: ToolDef<A>, raw: unknown): A {
  const result = v.safeParse(def.args, raw ?? {});
  if (result.success) return result.output;
  const problems = result.issues.map((issue) => {
    const where = issue.path?.map((p) => String(p.key)).join(".") || "(arguments)";
    return `${where}: ${issue.message}`;
  });
  throw invalidArgument(`invalid arguments for ${def.name}: ${problems.join("; ")}`, { problems });
}

/** Spec section 5 runtime enforcement: the answer's cache_hint must match the active branch. */
export function checkBranch(def: ToolDef<unknown>, branch: Branch, out: Record<string, unknown>): void {
  const fail = (why: string) => internal(`${def.name} produced an answer outside its schema branch: ${why}`);
  if (branch === "immutable" && out.cache_hint !== "immutable") throw fail(`cache_hint ${String(out.cache_hint)} != immutable`);
  if (branch === "worktree") {
    if (out.cache_hint !== "until_dirty") throw fail(`cache_hint ${String(out.cache_hint)} != until_dirty`);
    if (typeof out.lease_id !== "string" || typeof out.fingerprint !== "object") throw fail("worktree answer without lease_id and fingerprint");
  }
  if (branch === "none" && "cache_hint" in out) throw fail("unexpected cache_hint");
}
