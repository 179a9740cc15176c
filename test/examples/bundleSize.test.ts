/**
 * What the serverless bundles carry (issue 18 / issue 15): the documented enqueue-only Lambda
 * handler and a custom pipeline importing the root, bundled with esbuild as a deploy would
 * (platform node, ESM, minified). No effect/Schema or effect/Config, no AWS SDK, only the Lua
 * scripts the code runs, and sizes held under bounds. The enqueue handler speaks RESP itself
 * (src/redis/lightRedis.ts): no ioredis in its bundle, which meets issue 15's 300 KB goal.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build, type Metafile } from "esbuild"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { luaSources } from "../../src/redis/lua.generated.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
let dir: string
beforeAll(() => {
  mkdirSync(join(root, ".tmp"), { recursive: true })
  dir = mkdtempSync(join(root, ".tmp", "size-"))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const bundle = async (
  name: string,
  source: string
): Promise<{ bytes: number; text: string; inputs: ReadonlyArray<string> }> => {
  const entry = join(dir, `${name}.ts`)
  writeFileSync(entry, source)
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    metafile: true,
    outfile: join(dir, `${name}.mjs`),
    logLevel: "error"
  })
  const text = out.outputFiles[0]!.text
  const meta = out.metafile as Metafile
  const inputs = Object.entries(Object.values(meta.outputs)[0]!.inputs)
    .filter(([, v]) => v.bytesInOutput > 0)
    .map(([f]) => f)
  return { bytes: out.outputFiles[0]!.contents.byteLength, text, inputs }
}

/** The first line of a script as sent to Redis (it names the script): present in a bundle iff the script is. */
const scriptMark = (name: keyof typeof luaSources) => luaSources[name].split("\n")[0]!

const src = (p: string) => JSON.stringify(join(root, p))

describe("serverless bundle contents and sizes", () => {
  it("the README's enqueue-only handler: no ioredis, no Schema, no Config, no AWS SDK, only its own Lua scripts, <= 300 KB", async () => {
    const { bytes, text, inputs } = await bundle(
      "enqueue",
      `import { createEnqueueHandler } from ${src("adapters/aws-lambda/enqueueHandler.ts")}
export const handler = createEnqueueHandler({ auth: { kind: "hmac", secret: process.env.ENQUEUE_SECRET! }, allowedQueues: ["default", "email"] })`
    )
    for (const f of inputs)
      expect(f).not.toMatch(
        /node_modules\/ioredis|node_modules\/@ioredis|src\/redis\/Redis\.ts|effect\/dist\/(Schema|Config\.js)|@aws-sdk|src\/processor\/|src\/inspector\//
      )
    expect(inputs.some((f) => f.endsWith("src/redis/lightRedis.ts"))).toBe(true)
    for (const name of ["enqueue", "schedule", "addToGroup", "registerQueue"] as const)
      expect(text).toContain(scriptMark(name))
    for (const name of [
      "dequeueLease",
      "complete",
      "retry",
      "forward",
      "janitor",
      "inspector_queueStats",
      "scheduler_claim"
    ] as const)
      expect(text).not.toContain(scriptMark(name))
    expect(bytes).toBeLessThanOrEqual(300 * 1024)
  }, 60_000)

  it("a pipeline importing the root (Broker, Redis, Steps.enqueue): sideEffects false keeps it to what it uses, <= 440 KB", async () => {
    const { bytes, text, inputs } = await bundle(
      "root",
      `import { Effect, Layer } from "effect"
import { Broker, Redis, Steps } from ${src("src/index.ts")}
export const run = () => Effect.runPromise(Steps.enqueue("x", {}).pipe(Effect.provide(Broker.layer.pipe(Layer.provideMerge(Redis.layer({}))))))`
    )
    for (const f of inputs) expect(f).not.toMatch(/effect\/dist\/Schema|src\/inspector\//)
    expect(text).not.toContain(scriptMark("inspector_queueStats"))
    // 440 KB: 425 KB measured once the lease scripts enforce flow limits (lua/includes/flowLimit.lua) and
    // the Steps namespace gained the queue-limit, throttle and debounce steps; it was 396 KB before.
    expect(bytes).toBeLessThanOrEqual(440 * 1024)
  }, 60_000)
})
