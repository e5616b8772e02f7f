/** Calls to the review server. The session cookie the page load set carries the token. */
import type { ApiErrorBody, Confirmation, PageState, ReviewPreview, ReviewResult, Target } from "../wire";

export class ApiError extends Error {
  constructor(readonly body: ApiErrorBody) {
    super(body.message);
  }
}

async function call<T>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, body === undefined ? { cache: "no-store" } : { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ApiError({ code: `HTTP_${res.status}`, message: text.trim() || res.statusText, details: {} });
  }
  const err = (parsed as { error?: ApiErrorBody }).error;
  if (!res.ok || err) throw new ApiError(err ?? { code: `HTTP_${res.status}`, message: res.statusText, details: {} });
  return parsed as T;
}

export const api = {
  state: () => call<PageState>("/api/state"),
  edit: (id: string) => call<{ diff: string }>(`/api/edits/${encodeURIComponent(id)}`),
  preview: (action: "accept" | "reject", target: Target) => call<ReviewPreview>("/api/preview", { action, ...target }),
  review: (action: "accept" | "reject", target: Target, confirmed: Confirmation = {}) => call<ReviewResult>("/api/review", { action, ...target, ...confirmed }),
  recover: (confirmed: Confirmation = {}) => call<{ recovered: string[] }>("/api/recover", confirmed),
};
