/**
 * The published package: what `npm pack` puts in the tarball, publint's and arethetypeswrong's
 * verdicts on it, and an empty app (outside the repository) that installs the tarball beside
 * `effect` and uses it: the Promise client and an Effect program enqueue into this file's Redis
 * database over ONE shared copy of `effect`, without the optional AWS SDK installed. No registry is
 * asked: the app's other packages are tarballs of this repository's installed ones (npm 11 wants full
 * registry metadata to resolve a name, which `npm install` of the project does not cache).
 * dist/ is deleted first and built by `npm pack` itself (the prepack script), so the tarball never
 * holds stale output.
 */
import { execFile, execFileSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"

const run = promisify(execFile)
const root = fileURLToPath(new URL("../../", import.meta.url))
const bin = (name: string) => join(root, "node_modules", ".bin", name)
/** Without the npm_* variables `npm test` sets, so a nested npm sees only its own directory and config. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith("npm_")))
const npm = (args: Array<string>, cwd: string) => run("npm", args, { cwd, env: cleanEnv, maxBuffer: 64 * 1024 * 1024 })

interface PackedFile {
  readonly path: string
}

const redis = rawClient()
let work: string
let tarball: string
let app: string
let packed: Array<string>
let publint: Promise<{ stdout: string }>
let attw: Promise<{ stdout: string }>

/** The subpaths of `exports` that are entry points (./client, ./aws-lambda/enqueueHandler, …; not ./package.json). */
const exportedSubpaths = (): Array<string> => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, unknown> }
  return Object.keys(pkg.exports).filter((subpath) => subpath !== "./package.json")
}

/**
 * The packages the app needs besides effect-asynq (its dependencies, `effect`, and theirs, read from
 * this repository's node_modules), each as a tarball of its installed folder: npm then installs the
 * app without asking the registry anything.
 */
const localTarballs = (dependencies: ReadonlyArray<string>, into: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const queue = [...dependencies]
  for (let name = queue.pop(); name !== undefined; name = queue.pop()) {
    if (name in out) continue
    const folder = join(root, "node_modules", name)
    const manifest = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>
    }
    const file = join(into, `${name.replace("/", "__")}.tar`)
    execFileSync("tar", ["-cf", file, "-C", dirname(folder), basename(folder)])
    out[name] = `file:${file}`
    queue.push(...Object.keys(manifest.dependencies ?? {}))
  }
  return out
}

beforeAll(async () => {
  await flushTestDb()
  // No dist/ to start from: `npm pack` must build it itself (the prepack script).
  rmSync(join(root, "dist"), { recursive: true, force: true })
  work = mkdtempSync(join(tmpdir(), "effect-asynq-pack-"))
  const { stdout } = await npm(["pack", "--json", "--pack-destination", work], root)
  // The build's own output (if any) comes before npm's JSON report.
  const report = (
    JSON.parse(stdout.slice(stdout.indexOf("[\n"))) as Array<{ filename: string; files: Array<PackedFile> }>
  )[0]!
  packed = report.files.map((f) => f.path).sort()
  tarball = join(work, report.filename)

  // The linters read the tarball while the app installs; their tests await them.
  publint = run(bin("publint"), ["run", tarball, "--strict"], { env: cleanEnv })
  attw = run(bin("attw"), [tarball, "--profile", "esm-only", "--format", "json"], {
    env: cleanEnv,
    maxBuffer: 64 * 1024 * 1024
  })
  for (const linter of [publint, attw]) linter.catch(() => undefined) // a failure is reported by its test

  // An empty app in the temp directory (so nothing resolves from this repository's node_modules).
  app = join(work, "app")
  mkdirSync(join(work, "deps"))
  mkdirSync(app)
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    dependencies: Record<string, string>
  }
  const dependencies = {
    "effect-asynq": `file:${tarball}`,
    ...localTarballs(["effect", ...Object.keys(manifest.dependencies)], join(work, "deps"))
  }
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "packed-app", private: true, type: "module", dependencies })
  )
  await npm(["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts"], app)
}, 480_000) // pack (with its build) + install took ~65 s alone, ~190 s inside the full suite and up to ~300 s with other suites running beside it on a loaded 2-core machine

afterAll(() => {
  redis.disconnect()
  if (work) rmSync(work, { recursive: true, force: true })
})

describe("npm pack", () => {
  it("packs dist (JavaScript and declarations), README, LICENSE and package.json: no sources, tests, benches, examples, Lua files or source maps", () => {
    const outsideDist = packed.filter((p) => !p.startsWith("dist/"))
    expect(outsideDist).toEqual(["LICENSE", "README.md", "package.json"])
    expect(packed.filter((p) => p.startsWith("dist/") && !p.endsWith(".js") && !p.endsWith(".d.ts"))).toEqual([])
    expect(packed.filter((p) => /^dist\/(test|bench|examples|lua)\//.test(p))).toEqual([])
    expect(packed).toEqual(
      expect.arrayContaining([
        "dist/src/index.js",
        "dist/src/index.d.ts",
        "dist/src/client.js",
        "dist/src/redis/lua.generated.js", // the Lua scripts, embedded
        "dist/adapters/worker/index.js",
        "dist/adapters/cli/main.js",
        "dist/adapters/aws-lambda/enqueueHandler.js"
      ])
    )
    // every concrete export target and the bin are in the tarball
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      exports: Record<string, string | { types: string; default: string }>
      bin: Record<string, string>
    }
    for (const target of Object.values(pkg.exports)) {
      if (typeof target === "string" || target.default.includes("*")) continue
      expect(packed).toContain(target.default.slice(2))
      expect(packed).toContain(target.types.slice(2))
    }
    for (const target of Object.values(pkg.bin)) expect(packed).toContain(target.slice(2))
  })

  it("publint (strict) finds nothing to report on the tarball", async () => {
    const { stdout } = await publint
    expect(stdout).toContain("All good!")
  }, 60_000)

  it("exports each public entry point by name: no wildcard subpath publishing the adapters' internal modules", () => {
    const entryPoints = exportedSubpaths()
    expect(entryPoints.filter((subpath) => subpath.includes("*"))).toEqual([])
    expect(entryPoints).toEqual(
      expect.arrayContaining([
        "./aws-lambda/enqueueHandler",
        "./aws-lambda/dispatcherHandler",
        "./gcp-functions/drainFunction"
      ])
    )
    for (const internal of ["./aws-lambda/lambdaSdk", "./aws-lambda/types", "./gcp-functions/types"])
      expect(entryPoints).not.toContain(internal)
  })

  it("arethetypeswrong (esm-only profile) passes for every entry point", async () => {
    const entryPoints = exportedSubpaths()
    // exits non-zero (the await throws) on any problem the profile does not ignore
    const { stdout } = await attw
    const report = JSON.parse(stdout) as {
      analysis: {
        entrypoints: Record<string, unknown>
        problems: Array<{ entrypoint: string; resolutionKind?: string }>
      }
    }
    expect(Object.keys(report.analysis.entrypoints)).toEqual(
      expect.arrayContaining([".", "./client", "./worker", ...entryPoints])
    )
    // what remains is CommonJS and node10 resolution: an ESM-only package does not serve them
    expect(
      report.analysis.problems.filter((p) => p.resolutionKind !== "node10" && p.resolutionKind !== "node16-cjs")
    ).toEqual([])
  }, 60_000)
})

describe("an app installing the tarball", () => {
  it("runs no script of the package on install (it builds on prepack, not prepare: npm warns about install scripts)", () => {
    const installed = JSON.parse(readFileSync(join(app, "node_modules", "effect-asynq", "package.json"), "utf8")) as {
      scripts?: Record<string, string>
    }
    const onInstall = ["preinstall", "install", "postinstall", "prepare"].filter(
      (name) => installed.scripts?.[name] !== undefined
    )
    expect(onInstall).toEqual([])
  })

  it("gets a manifest declaring effect as a peer (a caret range the tested version satisfies), the AWS SDK and @opentelemetry/api as optional peers", () => {
    const installed = JSON.parse(readFileSync(join(app, "node_modules", "effect-asynq", "package.json"), "utf8")) as {
      dependencies: Record<string, string>
      peerDependencies: Record<string, string>
      peerDependenciesMeta: Record<string, { optional?: boolean }>
      engines: { node: string }
    }
    expect(Object.keys(installed.dependencies).sort()).toEqual(["@bufbuild/protobuf", "cron-parser", "ioredis"])
    const tested = (
      JSON.parse(readFileSync(join(root, "node_modules", "effect", "package.json"), "utf8")) as { version: string }
    ).version
    const range = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(installed.peerDependencies.effect!)
    expect(range, installed.peerDependencies.effect).not.toBeNull()
    const [major, minor, patch] = tested.split(".").map(Number) as [number, number, number]
    const [lowMajor, lowMinor, lowPatch] = range!.slice(1).map(Number) as [number, number, number]
    expect(major).toBe(lowMajor)
    expect(minor * 1e6 + patch).toBeGreaterThanOrEqual(lowMinor * 1e6 + lowPatch)
    expect(installed.peerDependencies["@aws-sdk/client-lambda"]).toBeDefined()
    expect(installed.peerDependencies["@opentelemetry/api"]).toBe("^1.0.0")
    expect(installed.peerDependenciesMeta).toEqual({
      "@aws-sdk/client-lambda": { optional: true },
      "@opentelemetry/api": { optional: true }
    })
    expect(existsSync(join(app, "node_modules", "@opentelemetry"))).toBe(false)
    expect(installed.engines.node).toBe(">=20")
  })

  it("has exactly one copy of effect, shared with effect-asynq, and no AWS SDK", async () => {
    expect(existsSync(join(app, "node_modules", "effect", "package.json"))).toBe(true)
    expect(existsSync(join(app, "node_modules", "effect-asynq", "node_modules", "effect"))).toBe(false)
    const { stdout } = await npm(["ls", "effect", "--all", "--parseable"], app)
    expect(stdout.trim().split("\n")).toEqual([join(app, "node_modules", "effect")])
    expect(existsSync(join(app, "node_modules", "@aws-sdk"))).toBe(false)
  })

  it("enqueues with the Promise client and with an Effect program; the worker, enqueue-handler and observability entry points load; the dispatcher names the missing AWS SDK; the adapters' internal modules do not resolve", async () => {
    const main = `
import { Effect, Layer } from "effect"
import { Broker, Redis, Steps } from "effect-asynq"
import { createClient } from "effect-asynq/client"

const url = process.env.REDIS_URL
const client = createClient({ url })
const viaPromise = await client.enqueue("packed:promise", { n: 1 }, { queue: "packed" })
await client.close()

const layer = Broker.layer.pipe(Layer.provide(Redis.layer({ url })))
const viaEffect = await Effect.runPromise(Steps.enqueue("packed:effect", { n: 2 }, { queue: "packed" }).pipe(Effect.provide(layer)))

const { runWorker } = await import("effect-asynq/worker")
const { createEnqueueHandler } = await import("effect-asynq/aws-lambda/enqueueHandler")
const { otlpLayer, metricsText } = await import("effect-asynq/observability")
const { createDispatcherHandler } = await import("effect-asynq/aws-lambda/dispatcherHandler")
const dispatcher = createDispatcherHandler({ queues: ["packed"], processorFunctionName: "processor", redis: { url } })
const dispatched = await dispatcher({}).then(() => "dispatched", (e) => ({ tag: e._tag, message: e.message }))
await dispatcher.runtime.dispose()
const internals = await Promise.all(
  ["effect-asynq/aws-lambda/lambdaSdk", "effect-asynq/aws-lambda/types", "effect-asynq/gcp-functions/types"].map((s) => import(s).then(() => "loaded", (e) => e.code))
)

console.log(JSON.stringify({
  viaPromise: viaPromise.state,
  viaEffect: viaEffect.state,
  runWorker: typeof runWorker,
  createEnqueueHandler: typeof createEnqueueHandler,
  observability: [typeof otlpLayer, typeof metricsText],
  dispatched,
  internals
}))
`
    writeFileSync(join(app, "main.js"), main)
    const { stdout } = await run(process.execPath, [join(app, "main.js")], {
      cwd: app,
      env: { ...cleanEnv, REDIS_URL: testRedisUrl() },
      timeout: 30_000
    })
    expect(JSON.parse(stdout.trim().split("\n").at(-1)!)).toEqual({
      viaPromise: "pending",
      viaEffect: "pending",
      runWorker: "function",
      createEnqueueHandler: "function",
      observability: ["function", "function"],
      dispatched: {
        tag: "MissingPeerDependency",
        message:
          "effect-asynq/aws-lambda/dispatcherHandler needs @aws-sdk/client-lambda: npm install @aws-sdk/client-lambda"
      },
      internals: ["ERR_PACKAGE_PATH_NOT_EXPORTED", "ERR_PACKAGE_PATH_NOT_EXPORTED", "ERR_PACKAGE_PATH_NOT_EXPORTED"]
    })
    const pending = await redis.lrange(queueKeys("packed").pending, 0, -1)
    expect(pending).toHaveLength(2)
  }, 60_000)
})
