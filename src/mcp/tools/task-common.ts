import * as v from "valibot";
import { renderError } from "../../ops/task/render";
import { type WireResponse, renderWire } from "../../ops/task/wire";
import { type ToolAnnotations, type ToolContext, type ToolDef, defineTool } from "../define-tool";

/**
 * What the seven task tools share: their answer is a wire response (spec
 * 003), rendered once into content[0].text, with no structuredContent and no
 * output schema (docs/decisions.md: the wire line already is the structured
 * form; a host forwarding both would pay for it twice). Errors are wire
 * errors (`🧢|!|code:...`) with isError set.
 */
export const compactArg = v.optional(
  v.pipe(v.boolean(), v.description("If true, return positional-only wire fields. Default returns labeled fields.")),
  false,
);

interface WireToolDef<A> {
  name: string;
  description: string;
  args: v.GenericSchema<unknown, A>;
  annotations: ToolAnnotations;
  run: (args: A, ctx: ToolContext) => Promise<WireResponse>;
}

function compactOf(args: unknown): boolean {
  return typeof args === "object" && args !== null && (args as { compact?: unknown }).compact === true;
}

export function wireTool<A>(def: WireToolDef<A>): ToolDef<A, { wire: WireResponse }> {
  return defineTool<A, { wire: WireResponse }>({
    name: def.name,
    // The spec's names already use underscores; --tool-names dotted serves them unchanged.
    dottedName: def.name,
    description: def.description,
    args: def.args,
    output: null,
    annotations: def.annotations,
    branch: () => "none",
    run: async (args, ctx) => ({ wire: await def.run(args, ctx) }),
    text: (out, args) => renderWire(out.wire, compactOf(args)),
    errorText: (err, raw) => renderWire(renderError(err), compactOf(raw)),
  });
}

/** A progress callback for long task operations (check runs, captures). */
export function progressOf(ctx: ToolContext, what: string): (done: number, total: number, message?: string) => void {
  return (done, total, message) => ctx.progress(done, total, message ?? what);
}
