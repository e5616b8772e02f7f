/**
 * What every local HTTP surface of worksnap checks before it answers (DESIGN
 * decision 17; the review page in src/web and `serve --http` in src/mcp): a
 * secret token compared in constant time, and, against DNS rebinding and
 * pages on other sites, the Host and Origin a browser would send.
 */
import { sha256Hex } from "./hash";

/**
 * Constant time whatever the lengths: both sides are hashed to 32 bytes first, and every byte of the two digests
 * is compared (no node:crypto: loading it cost every command's start-up 5 ms).
 */
export function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(sha256Hex(given), "hex");
  const b = Buffer.from(sha256Hex(token), "hex");
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

/** The names of this machine a Host header may give for a server on a loopback address. */
const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];

/** A Host header that names this machine's loopback at `port` (a rebound DNS name never does). */
export function isLoopbackHost(host: string | null, port: number): boolean {
  return host !== null && LOOPBACK_NAMES.some((name) => host === `${name}:${port}`);
}

/** An Origin of a page served from this machine's loopback at `port` (http, the port exact). */
export function isLoopbackOrigin(origin: string, port: number): boolean {
  return LOOPBACK_NAMES.some((name) => origin === `http://${name}:${port}`);
}

/** An address that only this machine can reach (127.0.0.0/8, ::1, localhost). */
export function isLoopbackAddress(hostname: string): boolean {
  const h = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return h === "localhost" || h === "::1" || /^127(\.\d{1,3}){3}$/.test(h);
}
