// The platforms worksnap is released for, and how each is built. The native module is C for Linux only: macOS
// would need Apple's SDK, which Debian does not ship, so darwin executables run the TypeScript paths.
export const TARGETS = {
  "linux-x64": { os: "linux", cpu: "x64", bun: "bun-linux-x64", runtime: "bun-linux-x64", triple: "x86_64-linux-gnu", elfMachine: 62 },
  "linux-arm64": { os: "linux", cpu: "arm64", bun: "bun-linux-arm64", runtime: "bun-linux-aarch64", triple: "aarch64-linux-gnu", elfMachine: 183 },
  "darwin-x64": { os: "darwin", cpu: "x64", bun: "bun-darwin-x64", runtime: "bun-darwin-x64", triple: null, elfMachine: null },
  "darwin-arm64": { os: "darwin", cpu: "arm64", bun: "bun-darwin-arm64", runtime: "bun-darwin-aarch64", triple: null, elfMachine: null },
} as const;

export type Target = keyof typeof TARGETS;

export const TARGET_NAMES = Object.keys(TARGETS) as Target[];

/** This machine as a target name (linux-x64, ...), whether or not it is one worksnap is released for. */
export const HOST_TARGET = `${process.platform}-${process.arch}`;

export function isTarget(name: string): name is Target {
  return Object.hasOwn(TARGETS, name);
}
