import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { compileWorksnap } from "../../scripts/compile";
import { versionFields } from "../../scripts/release/smoke-lib";
import { HOST_TARGET } from "../../scripts/targets";
import { STATE_FORMAT } from "../../src/repo/state-format";
import { cli } from "../helpers/binary";
import { runGit, tmpDir, tmpRepo } from "../helpers/tmp-repo";
import pkg from "../../package.json" with { type: "json" };

const REPO = join(import.meta.dir, "..", "..");

describe("worksnap --version", () => {
  test("names the version, the commit built, the target, the native module and the state format", () => {
    const r = cli(["--version"]);
    expect(r.code).toBe(0);
    const v = versionFields(r.stdout);
    expect(Object.keys(v)).toEqual(["version", "commit", "target", "native", "state format"]);
    expect(v.version).toBe(pkg.version);
    // built by `npm test` from this checkout: its HEAD (or "unknown" in a copy without git)
    let head = "unknown";
    try {
      head = runGit(REPO, ["rev-parse", "--short=12", "HEAD"]).trim();
    } catch {}
    expect(v.commit).toMatch(new RegExp(`^${head}(-dirty)?$`));
    expect(v.target).toBe(HOST_TARGET);
    expect(v["state format"]).toBe(String(STATE_FORMAT));
    if (process.env.WORKSNAP_NATIVE === "0") expect(v.native).toBe("off (disabled by WORKSNAP_NATIVE=0)");
    else if (process.env.WORKSNAP_BUILD_NATIVE !== "0") expect(v.native).toMatch(/^on \(sha256 (sha-ni|portable), \d+ threads\)$/);
  });

  test("an executable built without the native module says why, and gives the same snapshot ids", async () => {
    await using dir = tmpDir("ws-nonative-");
    const outfile = join(dir.path, "worksnap");
    const note = "not built for darwin-arm64: macOS executables use the TypeScript paths";
    await compileWorksnap({ target: HOST_TARGET, outfile, nativeNote: note, commit: "0123456789ab" });
    const v = versionFields(Bun.spawnSync([outfile, "--version"]).stdout.toString());
    // (WORKSNAP_NATIVE=0, which runs the suite over the TypeScript paths, is the reason given first)
    expect(v.native).toBe(process.env.WORKSNAP_NATIVE === "0" ? "off (disabled by WORKSNAP_NATIVE=0)" : `off (${note})`);
    expect(v.commit).toBe("0123456789ab");
    await using repo = await tmpRepo();
    repo.write("a.txt", "alpha\n");
    repo.write("bin/run", "#!/bin/sh\n", 0o755);
    repo.commit();
    repo.write("b.txt", "untracked\n");
    const withNative = cli(["snapshot", "create", "--root", repo.root]).stdout;
    const without = Bun.spawnSync([outfile, "snapshot", "create", "--root", repo.root]).stdout.toString();
    expect(without).toMatch(/^sha256:[0-9a-f]{64}\n$/);
    expect(without).toBe(withNative);
  });
});
