/**
 * A bench child as plain compiled JavaScript: an esbuild bundle of `entry` and the effect-asynq
 * sources it imports (packages stay external), not run through tsx, so the library is measured as
 * `npm run build` ships it, without a TypeScript loader hook, source-map translation or tsx's
 * `__name` wrappers in the process (bench/main.ts's child, bench/workflowCpuLoop.ts's).
 */
import type { Plugin } from "esbuild"

/** Bundles `entry` (a path) into `outfile` for Node 20 as ESM; returns `outfile`. */
export const bundleChild = async (entry: string, outfile: string, plugins: Array<Plugin> = []): Promise<string> => {
  const { build } = await import("esbuild")
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    packages: "external",
    outfile,
    logLevel: "warning",
    plugins
  })
  return outfile
}
