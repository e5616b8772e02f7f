/**
 * The groups of tools a server can offer (`serve --tools`): every tool a
 * server lists costs its name, description and input schema in the model's
 * context on every turn, so a host that never uses a group can leave it out.
 */
export const TOOL_GROUPS = ["snapshot", "workspace", "history", "task"] as const;
export type ToolGroup = (typeof TOOL_GROUPS)[number];

/** A tool's group, by its (underscore) name: snapshot_*, workspace_*, history_*, and the task tools of spec 003. */
export function groupOf(name: string): ToolGroup {
  if (name.startsWith("snapshot_")) return "snapshot";
  if (name.startsWith("workspace_")) return "workspace";
  if (name.startsWith("history_")) return "history";
  return "task";
}
