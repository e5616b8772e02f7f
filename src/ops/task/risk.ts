import { compareUtf8 } from "../../core/byte-order";

/**
 * Task risk, L/M/H, from fixed rules (deterministic: the same task, files and
 * dirty count always give the same answer):
 *
 * - +2 for each sensitive area the task touches, once per area. An area is
 *   touched when a file path or the task's title or keywords holds one of its
 *   words (paths are split into words at `/ . - _`, digits and camelCase), or
 *   a path matches one of its path rules:
 *     auth        auth, login, session, jwt, oauth, token, password, permission, rbac, acl, ...
 *     security    security, crypto, secret, cert, tls, csrf, xss, sanitize, ...
 *     payment     payment, billing, invoice, checkout, stripe, subscription, refund, ...
 *     migrations  migration(s), migrate; schema.sql, schema.prisma
 *     lockfiles   package-lock.json, yarn.lock, pnpm-lock.yaml, bun.lock(b), Cargo.lock, go.sum,
 *                 poetry.lock, Pipfile.lock, uv.lock, composer.lock, Gemfile.lock
 *     ci          .github/workflows/, .gitlab-ci.yml, .circleci/, Jenkinsfile, .travis.yml,
 *                 azure-pipelines.yml, bitbucket-pipelines.yml, .buildkite/, .drone.yml, .ci/; "ci", "pipeline"
 * - files: +1 for 5-14 files, +2 for 15 or more;
 * - dirty files (uncommitted changes that predate the task): +1 for 1-9, +2 for 10 or more.
 *
 * Level: 0-1 is L, 2-3 is M, 4 or more is H.
 */
export type RiskLevel = "L" | "M" | "H";

export interface RiskReason {
  rule: string;
  points: number;
  /** What triggered it: a file, a word, a count. */
  because: string;
}

export interface RiskAssessment {
  level: RiskLevel;
  score: number;
  reasons: RiskReason[];
}

interface Area {
  name: string;
  words: string[];
  paths?: (path: string, base: string) => boolean;
}

const LOCKFILES = new Set([
  "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "bun.lock", "bun.lockb", "Cargo.lock", "go.sum",
  "poetry.lock", "Pipfile.lock", "uv.lock", "composer.lock", "Gemfile.lock", "mix.lock", "pubspec.lock", "flake.lock",
]);

const CI_FILES = new Set([".gitlab-ci.yml", "Jenkinsfile", ".travis.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml", ".drone.yml", "appveyor.yml"]);
const CI_DIRS = [".github/workflows/", ".circleci/", ".buildkite/", ".ci/"];

export const AREAS: readonly Area[] = [
  {
    name: "auth",
    words: [
      "auth", "authn", "authz", "authentication", "authorization", "authorize", "login", "logout", "signin", "signup", "session",
      "sessions", "jwt", "oauth", "oidc", "saml", "sso", "token", "tokens", "password", "passwords", "credential", "credentials",
      "permission", "permissions", "rbac", "acl", "acls", "mfa", "totp",
    ],
  },
  {
    name: "security",
    words: [
      "security", "secure", "crypto", "cryptography", "encrypt", "encryption", "decrypt", "secret", "secrets", "cert", "certs",
      "certificate", "certificates", "tls", "ssl", "csrf", "xss", "sanitize", "sanitizer", "cors", "vault", "keystore",
    ],
  },
  {
    name: "payment",
    words: [
      "payment", "payments", "pay", "billing", "invoice", "invoices", "checkout", "stripe", "paypal", "subscription",
      "subscriptions", "refund", "refunds", "wallet", "pricing", "ledger",
    ],
  },
  {
    name: "migrations",
    words: ["migration", "migrations", "migrate"],
    paths: (_p, base) => base === "schema.sql" || base === "schema.prisma",
  },
  { name: "lockfiles", words: ["lockfile", "lockfiles"], paths: (_p, base) => LOCKFILES.has(base) },
  {
    name: "ci",
    words: ["ci", "pipeline", "pipelines"],
    paths: (p, base) => CI_FILES.has(base) || CI_DIRS.some((d) => p.startsWith(d)),
  },
];

/** Words of a path or a phrase: split at separators, digits and camelCase humps; lowercase. */
export function wordsOf(text: string): string[] {
  return text
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z]+/)
    .filter((w) => w.length > 0);
}

export interface RiskInput {
  title: string;
  keywords: readonly string[];
  files: readonly string[];
  dirty: number;
}

export function assessRisk(input: RiskInput): RiskAssessment {
  const reasons: RiskReason[] = [];
  const textWords = new Set([...wordsOf(input.title), ...input.keywords.flatMap(wordsOf)]);
  const files = [...input.files].sort(compareUtf8);
  for (const area of AREAS) {
    const words = new Set(area.words);
    const file = files.find((p) => {
      const base = p.slice(p.lastIndexOf("/") + 1);
      return area.paths?.(p, base) === true || wordsOf(p).some((w) => words.has(w));
    });
    const word = file === undefined ? area.words.find((w) => textWords.has(w)) : undefined;
    if (file !== undefined) reasons.push({ rule: area.name, points: 2, because: file });
    else if (word !== undefined) reasons.push({ rule: area.name, points: 2, because: `"${word}"` });
  }
  const n = input.files.length;
  if (n >= 5) reasons.push({ rule: "files", points: n >= 15 ? 2 : 1, because: `${n} files` });
  if (input.dirty >= 1) reasons.push({ rule: "dirty", points: input.dirty >= 10 ? 2 : 1, because: `${input.dirty} dirty file${input.dirty === 1 ? "" : "s"}` });
  const score = reasons.reduce((s, r) => s + r.points, 0);
  return { level: score >= 4 ? "H" : score >= 2 ? "M" : "L", score, reasons };
}
