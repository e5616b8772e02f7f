// A read-only npm registry on loopback that serves exactly the packed tarballs of a release, so the npm
// install tests resolve `worksnap` and its optional dependencies as npm does from the public registry (by
// "os", "cpu" and "libc"), with no network beyond these tarballs. Every request is logged.
import { readFileSync } from "node:fs";
import { basename } from "node:path";

export interface LocalRegistry {
  url: string;
  /** Request paths, in order (decoded). */
  requests: string[];
  stop(): void;
}

interface Entry {
  name: string;
  version: string;
  manifest: Record<string, unknown>;
  file: string;
  bytes: Uint8Array;
}

/** The package.json inside a tarball (package/package.json). */
function manifestOf(tarball: string): Record<string, unknown> {
  const r = Bun.spawnSync(["tar", "-xzOf", tarball, "package/package.json"], { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`cannot read package.json from ${tarball}: ${r.stderr.toString()}`);
  return JSON.parse(r.stdout.toString());
}

export function startRegistry(tarballs: string[]): LocalRegistry {
  const entries = new Map<string, Entry>();
  for (const file of tarballs) {
    const manifest = manifestOf(file);
    const name = manifest.name as string;
    entries.set(name, { name, version: manifest.version as string, manifest, file: basename(file), bytes: new Uint8Array(readFileSync(file)) });
  }
  const requests: string[] = [];
  let origin = "";
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req): Response {
      const path = decodeURIComponent(new URL(req.url).pathname);
      requests.push(path);
      const tarball = /^\/-\/tarballs\/(.+)$/.exec(path);
      if (tarball) {
        const e = [...entries.values()].find((x) => x.file === tarball[1]);
        return e ? new Response(e.bytes, { headers: { "content-type": "application/octet-stream" } }) : new Response("not found", { status: 404 });
      }
      const e = entries.get(path.slice(1));
      if (!e) return Response.json({ error: "not found" }, { status: 404 });
      const dist = {
        tarball: `${origin}/-/tarballs/${e.file}`,
        integrity: `sha512-${new Bun.CryptoHasher("sha512").update(e.bytes).digest("base64")}`,
        shasum: new Bun.CryptoHasher("sha1").update(e.bytes).digest("hex"),
      };
      return Response.json({
        name: e.name,
        "dist-tags": { latest: e.version },
        versions: { [e.version]: { ...e.manifest, _id: `${e.name}@${e.version}`, dist } },
      });
    },
  });
  origin = server.url.origin;
  return { url: origin, requests, stop: () => server.stop(true) };
}
