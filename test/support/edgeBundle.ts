/**
 * Bundles an edge entry with esbuild the way the edge platforms' builders do: platform neutral
 * (no Node built-ins: a `node:` import fails the build), minified, with the runtime's export
 * conditions. Cloudflare (wrangler): ESM, conditions workerd/worker/browser. Vercel Edge: the
 * edge-light condition; `iife` with a global name for @edge-runtime/vm, which evaluates scripts.
 */
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

export interface EdgeBundle {
  readonly code: string
  /** Minified size, bytes. */
  readonly bytes: number
  /** Input files and how many bytes each put into the output. */
  readonly inputs: Readonly<Record<string, number>>
  /** Every file the bundler read, tree-shaken away or not (the whole import graph). */
  readonly scanned: ReadonlyArray<string>
}

/**
 * `resolveBrowserField`: resolve as esbuild's browser platform does (honouring package.json
 * "browser" maps), for cron-parser, whose "browser" field maps its `fs` imports to nothing.
 */
export type EdgeTarget = (
  | { readonly runtime: "workerd" }
  | { readonly runtime: "edge-light"; readonly globalName: string }
) & { readonly resolveBrowserField?: boolean }

const root = fileURLToPath(new URL("../../", import.meta.url))

export const bundleEdge = async (entry: string, target: EdgeTarget): Promise<EdgeBundle> => {
  const result = await build({
    entryPoints: [fileURLToPath(new URL(entry, `file://${root}`))],
    bundle: true,
    minify: true,
    write: false,
    platform: target.resolveBrowserField ? "browser" : "neutral",
    mainFields: ["browser", "module", "main"],
    conditions: target.runtime === "workerd" ? ["workerd", "worker", "browser"] : ["edge-light", "worker", "browser"],
    ...(target.runtime === "workerd"
      ? { format: "esm" as const }
      : { format: "iife" as const, globalName: target.globalName }),
    metafile: true,
    logLevel: "silent"
  })
  const out = result.outputFiles[0]!
  const meta = Object.values(result.metafile.outputs)[0]!
  return {
    code: out.text,
    bytes: out.contents.byteLength,
    inputs: Object.fromEntries(Object.entries(meta.inputs).map(([f, v]) => [f, v.bytesInOutput])),
    scanned: Object.keys(result.metafile.inputs)
  }
}
