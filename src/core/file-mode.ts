/**
 * Git's file modes, the only three worksnap records: a regular file, an
 * executable and a symbolic link (whose content is the link text). Manifests,
 * patches, the write path and the edit history all speak these.
 */
export type FileMode = "100644" | "100755" | "120000";

/** A regular or executable file: the modes whose content is read from the file itself. */
export type RegularMode = Exclude<FileMode, "120000">;

export const FILE_MODES: readonly FileMode[] = ["100644", "100755", "120000"];

export function isFileMode(value: string): value is FileMode {
  return (FILE_MODES as readonly string[]).includes(value);
}

/** The mode git records for a regular file with these permission bits. */
export function modeOfPermissions(perm: number): RegularMode {
  return perm & 0o111 ? "100755" : "100644";
}

interface StatLike {
  mode: number;
  isFile(): boolean;
  isSymbolicLink(): boolean;
}

/** The mode git records for what an lstat saw; null for anything git does not record (a directory, a FIFO, a socket). */
export function modeOfStat(st: StatLike): FileMode | null {
  if (st.isSymbolicLink()) return "120000";
  return st.isFile() ? modeOfPermissions(st.mode) : null;
}
