/**
 * Who may talk to the review page (DESIGN decision 17). The server listens on
 * 127.0.0.1 only, and every request must carry the random token it printed:
 * in the URL to open the page (`/?token=`), then in a cookie the page load
 * sets (HttpOnly, SameSite=Strict, named for the port) or an
 * `X-Worksnap-Token` header. Tokens are compared in constant time.
 *
 * Against DNS rebinding and cross-site requests (core/local-guard.ts): the
 * Host header must name the loopback at our port; an Origin header, when
 * present, must be such an origin; `Sec-Fetch-Site` must say same-origin (or none: a typed URL);
 * requests that change anything are POSTs with a JSON body, which a form on
 * another site cannot send. No CORS headers are ever sent.
 */
import { isLoopbackHost, isLoopbackOrigin, sameToken } from "../core/local-guard";

export const TOKEN_HEADER = "x-worksnap-token";

export interface Guard {
  token: string;
  port: number;
}

export type Verdict = { ok: true; via: "query" | "cookie" | "header" } | { ok: false; status: number; reason: string };

export function cookieName(port: number): string {
  return `worksnap_review_${port}`;
}

export function checkRequest(g: Guard, req: Request, url: URL): Verdict {
  const host = req.headers.get("host");
  if (!isLoopbackHost(host, g.port)) return { ok: false, status: 421, reason: "this page answers only at 127.0.0.1 or localhost" };
  const origin = req.headers.get("origin");
  if (origin !== null && !isLoopbackOrigin(origin, g.port)) return { ok: false, status: 403, reason: "cross-origin requests are refused" };
  const site = req.headers.get("sec-fetch-site");
  if (site !== null && site !== "same-origin" && site !== "none") return { ok: false, status: 403, reason: "cross-site requests are refused" };
  if (req.method === "POST" && !(req.headers.get("content-type") ?? "").startsWith("application/json")) return { ok: false, status: 415, reason: "POST bodies must be application/json" };
  if (req.method !== "GET" && req.method !== "POST") return { ok: false, status: 405, reason: "only GET and POST" };

  const header = req.headers.get(TOKEN_HEADER);
  if (header !== null) return sameToken(header, g.token) ? { ok: true, via: "header" } : denied();
  const query = url.searchParams.get("token");
  if (query !== null) return req.method === "GET" && url.pathname === "/" && sameToken(query, g.token) ? { ok: true, via: "query" } : denied();
  const cookie = readCookie(req.headers.get("cookie"), cookieName(g.port));
  if (cookie !== null) return sameToken(cookie, g.token) ? { ok: true, via: "cookie" } : denied();
  return denied();
}

function denied(): Verdict {
  return { ok: false, status: 403, reason: "this page needs the token from the URL worksnap printed" };
}

function readCookie(header: string | null, name: string): string | null {
  if (!header) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return null;
}

/** Headers on every answer: nothing loads from elsewhere, nothing is cached, no referrer carries the URL on. */
export const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

export function sessionCookie(g: Guard): string {
  return `${cookieName(g.port)}=${g.token}; Path=/; HttpOnly; SameSite=Strict`;
}
