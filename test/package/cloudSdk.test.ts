/**
 * Cloud SDKs are optional peer dependencies: only the entry points that call Lambda may reach
 * `@aws-sdk/*` (or its `@smithy/*` tree), and none may reach `@google-cloud/*`. Every entry point
 * the package exports is bundled by esbuild from source (static and dynamic imports followed, the
 * SDKs installed here as dev dependencies), and the bundle's inputs tell which packages it reaches.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build, type Metafile } from "esbuild"
import { beforeAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../", import.meta.url))

/** package.json `exports` as subpath -> source file (dist/x.js -> x.ts); plus the bin. */
const exportedSources = (): Record<string, string> => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    exports: Record<string, string | { default: string }>
    bin: Record<string, string>
  }
  const toSource = (target: string) => target.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts")
  const out: Record<string, string> = {}
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    if (typeof target === "string") continue // ./package.json
    out[subpath] = toSource(target.default)
  }
  for (const [name, target] of Object.entries(pkg.bin)) out[`bin:${name}`] = toSource(target)
  return out
}

const cloudSdk = /(^|\/)node_modules\/(@aws-sdk|@smithy|@google-cloud)\//

/** Entry point -> the cloud SDK scopes its bundle contains. */
let reached: Map<string, Array<string>>

beforeAll(async () => {
  const entries = exportedSources()
  const result = await build({
    entryPoints: Object.entries(entries).map(([subpath, source]) => ({
      in: join(root, source),
      out: subpath.replace(/[^\w-]+/g, "_")
    })),
    absWorkingDir: root,
    bundle: true,
    platform: "node",
    format: "esm",
    write: false,
    metafile: true,
    outdir: join(root, ".tmp", "cloud-sdk-check"),
    logLevel: "silent"
  })
  const metafile: Metafile = result.metafile
  reached = new Map()
  for (const output of Object.values(metafile.outputs)) {
    const subpath = Object.entries(entries).find(([, source]) => output.entryPoint === source)?.[0]
    if (subpath === undefined) continue
    const packages = new Set(Object.keys(output.inputs).flatMap((input) => cloudSdk.exec(input)?.[2] ?? []))
    reached.set(subpath, [...packages].sort())
  }
  expect([...reached.keys()].sort()).toEqual(Object.keys(entries).sort())
}, 120_000)

describe("cloud SDKs in the entry points", () => {
  it("the enqueue-only and worker entry points reach no cloud SDK", () => {
    for (const subpath of ["./client", "./aws-lambda/enqueueHandler", "./worker", "."])
      expect(reached.get(subpath), subpath).toEqual([])
  })

  it("only the Lambda-invoking entry points reach the AWS SDK, and nothing reaches Google Cloud's", () => {
    const withSdk = [...reached].filter(([, packages]) => packages.length > 0)
    expect(Object.fromEntries(withSdk)).toEqual({
      "./aws-lambda/dispatch": ["@aws-sdk", "@smithy"],
      "./aws-lambda/dispatcherHandler": ["@aws-sdk", "@smithy"],
      "./aws-lambda/dispatchTrigger": ["@aws-sdk", "@smithy"],
      "./aws-lambda/lambdaTask": ["@aws-sdk", "@smithy"]
    })
  })
})
