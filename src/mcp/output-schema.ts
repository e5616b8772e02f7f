import { ERROR_CODES } from "../core/errors";

/**
 * Output schemas that real MCP clients accept (DESIGN decision 11): root
 * `type:"object"`, with spec section 5's `oneOf` beside it. The error branch
 * sits in the same `oneOf` because clients validate the structured content of
 * error results too.
 */
export type JsonSchema = Record<string, unknown>;
export type Props = Record<string, JsonSchema>;

export const fingerprintSchema: JsonSchema = {
  type: "object",
  properties: {
    head_oid: { type: "string" },
    index_oid: { type: "string" },
    status_hash: { type: "string" },
  },
  required: ["head_oid", "index_oid", "status_hash"],
};

export const errorBranch: JsonSchema = {
  type: "object",
  properties: {
    error: {
      type: "object",
      properties: {
        code: { type: "string", enum: [...ERROR_CODES] },
        message: { type: "string" },
        details: { type: "object" },
      },
      required: ["code", "message", "details"],
    },
  },
  required: ["error"],
};

const snapshotIdSchema: JsonSchema = { type: "string", pattern: "^sha256:[0-9a-f]{64}$" };

export function immutableBranch(props: Props, required: string[]): JsonSchema {
  return {
    type: "object",
    properties: { cache_hint: { type: "string", const: "immutable" }, ...props },
    required: ["cache_hint", ...required],
  };
}

export function worktreeBranch(props: Props, required: string[]): JsonSchema {
  return {
    type: "object",
    properties: {
      cache_hint: { type: "string", const: "until_dirty" },
      lease_id: { type: "string" },
      fingerprint: fingerprintSchema,
      ...props,
    },
    required: ["cache_hint", "lease_id", "fingerprint", ...required],
  };
}

/** A tool that answers from both modes: immutable | worktree | error. */
export function hybridOutput(props: Props, required: string[]): JsonSchema {
  return {
    type: "object",
    oneOf: [immutableBranch({ snapshot_id: snapshotIdSchema, ...props }, ["snapshot_id", ...required]), worktreeBranch(props, required), errorBranch],
  };
}

/** A snapshot-only tool: immutable success | error. */
export function immutableOutput(props: Props, required: string[]): JsonSchema {
  return { type: "object", oneOf: [immutableBranch(props, required), errorBranch] };
}

/** A tool whose answer is neither branch (e.g. a write in worktree mode only): success | error. */
export function plainOutput(props: Props, required: string[]): JsonSchema {
  return { type: "object", oneOf: [{ type: "object", properties: props, required }, errorBranch] };
}

export { snapshotIdSchema };
