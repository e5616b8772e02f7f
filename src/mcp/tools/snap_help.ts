import * as v from "valibot";
import { HELP_TOPICS, helpText } from "../../ops/task/help-text";
import { renderError } from "../../ops/task/render";
import { renderWire } from "../../ops/task/wire";
import { defineTool } from "../define-tool";
import { readOnly } from "./common";
import description from "./snap_help.txt" with { type: "text" };

export const snapHelpTool = defineTool({
  name: "snap_help",
  dottedName: "snap_help",
  description,
  args: v.strictObject({
    topic: v.pipe(v.picklist(HELP_TOPICS), v.description("Help topic: wire format, check modes, promotion thresholds, tool list, or everything.")),
  }),
  output: null,
  annotations: readOnly("Wire format help"),
  branch: () => "none",
  run: async (args) => ({ text: helpText(args.topic) }),
  // Plain text, no wire line: this is the way out when the wire format is unclear.
  text: (out) => out.text as string,
  errorText: (err) => renderWire(renderError(err), false),
});
