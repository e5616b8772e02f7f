import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { internal, invalidArgument } from "../core/errors";
import type { PublicError } from "../core/public-error";
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
  /** The name served under `--tool-names dotted`; default: the first underscore becomes a dot. */
  dottedName?: string;
  description: string;
  args: v.GenericSchema<unknown, A>;
  /**
   * The output schema clients see; null for a tool that answers in text only:
   * no outputSchema, no structuredContent, content[0].text is the whole answer.
   */
  output: JsonSchema | null;
  annotations: ToolAnnotations;
  /** Which success branch an answer to these arguments must be (checked at runtime). */
  branch: (args: A) => Branch;
  run: (args: A, ctx: ToolContext) => Promise<O>;
  /**
   * The answer as the model reads it (content[0].text; src/mcp/render/). The
   * full answer is structuredContent either way; without a renderer, or
   * under `serve --text json`, the text is the canonical JSON of it. A
   * text-only tool (`output: null`) answers this text in every text mode.
   */
  text?: (out: O, args: A) => string;
  /**
   * The text of an error answer, for a text-only tool (its own error format);
   * `args` are the raw arguments (they may not have parsed).
   */
  errorText?: (err: PublicError, args: unknown) => string;
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

/**
 * Parses arguments; a failure tells the model exactly which argument is
 * wrong and how, in plain sentences ("unknown argument extra", "path is
 * required", "limit must be at most 2000, not 5000"), not the validator's
 * wording.
 */
export function parseArgs<A>(def: ToolDef<A>, raw: unknown): A {
  const result = v.safeParse(def.args, raw ?? {});
  if (result.success) return result.output;
  const known = Object.keys((def.args as unknown as { entries?: Record<string, unknown> }).entries ?? {});
  const problems = result.issues.map((issue) => sentence(issue, known));
  const first = result.issues[0]?.path?.[0]?.key;
  // the arguments whose value is not one of the allowed ones (a mode, an action): callers tell those apart
  const notOneOf = result.issues.filter((i) => i.type === "picklist" && typeof i.path?.[0]?.key === "string").map((i) => i.path![0]!.key as string);
  throw invalidArgument(`${def.name}: ${problems.join("; ")}`, {
    problems,
    ...(typeof first === "string" ? { arg: first } : {}),
    ...(notOneOf.length > 0 ? { not_one_of: notOneOf } : {}),
  });
}

/** One valibot issue as a sentence naming the argument (`paths[1]` for an array item). */
function sentence(issue: v.BaseIssue<unknown>, known: string[]): string {
  const path = issue.path ?? [];
  const where = path.map((p, i) => (typeof p.key === "number" ? `[${p.key}]` : i === 0 ? String(p.key) : `.${String(p.key)}`)).join("");
  const got = issue.received;
  const requirement = (issue as { requirement?: unknown }).requirement;
  switch (issue.type) {
    case "strict_object":
    case "object":
      if (path.length === 0) return `the arguments must be an object, not ${got}`;
      if (issue.expected === "never") return `unknown argument ${where} (the arguments are ${known.join(", ")})`;
      if (got === "undefined") return `${where} is required`;
      return `${where} must be an object, not ${got}`;
    case "string":
    case "number":
    case "boolean":
    case "array":
      return `${where} must be ${issue.type === "array" ? "an array" : `a ${issue.type}`}, not ${got}`;
    case "picklist":
      return `${where} must be one of ${String(issue.expected).replace(/^\(|\)$/g, "").split(" | ").join(", ")}, not ${got}`;
    case "integer":
      return `${where} must be a whole number, not ${got}`;
    case "min_value":
      return `${where} must be at least ${String(requirement)}, not ${got}`;
    case "max_value":
      return `${where} must be at most ${String(requirement)}, not ${got}`;
    case "min_length":
      return requirement === 1 ? `${where} must not be empty` : `${where} must have at least ${String(requirement)} items or characters`;
    case "max_length":
      return `${where} must have at most ${String(requirement)} items or characters`;
    default:
      return `${where || "the arguments"}: ${issue.message}`;
  }
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
