/**
 * The JSON between the review server and its page, as types both sides
 * import. No imports here, so the page's browser build takes it as it is;
 * the server's answers are checked against these types where api.ts sends
 * them (the ops' own types must fit them).
 */
export type EditStatus = "pending" | "accepted" | "rejected";
export type Operation = "create" | "replace" | "edit" | "delete" | "move";

export interface PageEdit {
  edit_id: string;
  conversation_id: string;
  tool_call_index: number;
  timestamp: string;
  operation: Operation;
  file_path: string;
  source_path: string | null;
  tool_name: string;
  status: EditStatus;
  added: number;
  removed: number;
}

export interface PageConversation {
  id: string;
  first: string;
  last: string;
  counts: Record<EditStatus, number>;
  edits: PageEdit[];
}

export interface InterruptedReview {
  review_id: string;
  action: string;
  timestamp: string;
  paths: string[];
}

export interface PageState {
  root: string;
  stamp: string;
  conversations: PageConversation[];
  interrupted: InterruptedReview[];
}

export interface StatusChange {
  edit_id: string;
  conversation_id: string;
  operation: Operation;
  file_path: string;
  source_path: string | null;
  from: EditStatus;
  to: EditStatus;
}

export interface ExternalChange {
  path: string;
  expected_hash: string | null;
  current_hash: string | null;
  current_kind: "file" | "missing" | "dir" | "other";
  diff: string;
  diff_truncated: boolean;
}

export interface Conflict {
  edit_id: string;
  conversation_id: string;
  path: string;
  reason: string;
  message: string;
  cascadable: boolean;
}

export interface FileWrite {
  path: string;
  action: "written" | "deleted";
  hash: string | null;
}

export interface ApiErrorBody {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

export interface ReviewPreview {
  action: "accept" | "reject";
  changed: StatusChange[];
  dependents: StatusChange[];
  unchanged: string[];
  conflicts: Conflict[];
  external: ExternalChange[];
  files: FileWrite[];
  refusal: ApiErrorBody | null;
  interrupted: string[];
}

export interface ReviewResult {
  action: "accept" | "reject";
  review_id: string | null;
  changed: StatusChange[];
  cascaded: string[];
  unchanged: string[];
  /** Accepting a conversation: its rejected edits, which stay rejected. */
  still_rejected: string[];
  files: FileWrite[];
  discarded: string[];
  recovered: string[];
}

export interface Target {
  edit_ids?: string[];
  conversation_id?: string;
}

export interface Confirmation {
  cascade_ids?: string[];
  discard?: { path: string; current_hash: string | null; current_kind: string }[];
}
