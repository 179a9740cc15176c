/**
 * The deploy examples build and load: the four SAM functions bundled with the esbuild flags
 * template.yaml gives (as SAM CLI's builder passes them), then run from a plain Node process; the
 * Cloud Functions bundle built by the exact command in examples/gcp-functions/README.md, then
 * served by the real Functions Framework. Both load ioredis (CommonJS) from an ESM bundle.
 */
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signBody } from "../../adapters/shared/auth.js"
import { queueKeys } from "../../src/wire/keys.js"
import { startFunction } from "../gcp-functions/framework.js"
import { flushTestDb, rawClient, testRedisUrl } from "../support/redis.js"

const run = promisify(execFile)
const root = fileURLToPath(new URL("../../", import.meta.url))
const esbuildBin = join(root, "node_modules", ".bin", "esbuild")
const redis = rawClient()
let dir: string

beforeAll(async () => {
  await flushTestDb()
  // Inside the repository, so a bundle's external imports resolve from its node_modules.
  mkdirSync(join(root, ".tmp"), { recursive: true })
  dir = mkdtempSync(join(root, ".tmp", "bundles-"))
})
afterAll(() => {
  redis.disconnect()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

/** The BuildProperties of each function in template.yaml (block style; lists are JSON arrays). */
const samBuildProperties = (): Map<string, Record<string, string | boolean | Array<string>>> => {
  const lines = readFileSync(join(root, "examples/aws-sam/template.yaml"), "utf8").split("\n")
  const out = new Map<string, Record<string, string | boolean | Array<string>>>()
  let fn = ""
  for (let i = 0; i < lines.length; i++) {
    const resource = /^ {2}(\w+):\s*$/.exec(lines[i]!)
    if (resource) fn = resource[1]!
    if (!/^ {6}BuildProperties:\s*$/.test(lines[i]!)) continue
    const props: Record<string, string | boolean | Array<string>> = {}
    for (let j = i + 1; j < lines.length && /^ {8}/.test(lines[j]!); j++) {
      const m = /^ {8}(\w+): (.*)$/.exec(lines[j]!)
      if (!m) continue // a comment
      const v = m[2]!.trim()
      props[m[1]!] = v.startsWith("[")
        ? (JSON.parse(v) as Array<string>)
        : v === "true"
          ? true
          : v === "false"
            ? false
            : v
    }
    out.set(fn, props)
  }
  return out
}

/** esbuild's arguments as SAM CLI's builder (aws-lambda-builders, nodejs_npm_esbuild) makes them. */
const samEsbuildArgs = (props: Record<string, string | boolean | Array<string>>, outdir: string): Array<string> => {
  const args = ["--bundle", "--platform=node", `--outdir=${outdir}`, "--log-level=error"]
  if (props.Minify === true) args.push("--minify")
  for (const [key, flag] of [
    ["Target", "target"],
    ["Format", "format"]
  ] as const)
    if (typeof props[key] === "string") args.push(`--${flag}=${props[key]}`)
  for (const [key, flag] of [
    ["External", "external"],
    ["Loader", "loader"],
    ["OutExtension", "out-extension"],
    ["Banner", "banner"]
  ] as const)
    for (const v of (props[key] as Array<string> | undefined) ?? []) args.push(`--${flag}:${v}`)
  args.push(...(props.EntryPoints as Array<string>))
  return args
}

describe("example bundles", () => {
  it("the SAM functions, bundled as template.yaml says, load and run: enqueue, tick and processor against Redis", async () => {
    const props = samBuildProperties()
    expect([...props.keys()].sort()).toEqual([
      "DispatcherFunction",
      "EnqueueFunction",
      "ProcessorFunction",
      "TickFunction"
    ])
    const outdir = join(dir, "sam")
    for (const p of props.values()) await run(esbuildBin, samEsbuildArgs(p, outdir), { cwd: root })

    const body = JSON.stringify({
      type: "email:welcome",
      payload: { to: "a@example.com" },
      options: { queue: "email" }
    })
    const event = {
      version: "2.0",
      headers: {
        "content-type": "application/json",
        "x-asynq-signature": signBody("s3cret", { method: "POST", path: "/", body }, Date.now())
      },
      body,
      isBase64Encoded: false,
      requestContext: { http: { method: "POST" } }
    }
    // A Lambda runtime imports each .mjs as an ES module and calls its handler.
    const driver = `
const at = (f) => new URL(f, import.meta.url).href
const enqueue = await import(at("./enqueue.mjs"))
const enqueued = await enqueue.handler(${JSON.stringify(event)})
const tick = await (await import(at("./tick.mjs"))).handler({})
const dispatcher = await import(at("./dispatcher.mjs"))
const drained = await (await import(at("./processor.mjs"))).handler({}, { getRemainingTimeInMillis: () => 20000 })
console.log(JSON.stringify({ enqueued, tick: Object.keys(tick), dispatcher: typeof dispatcher.handler, drained }))
process.exit(0)
`
    writeFileSync(join(outdir, "driver.mjs"), driver)
    const { stdout } = await run(process.execPath, [join(outdir, "driver.mjs")], {
      cwd: outdir,
      env: {
        ...process.env,
        REDIS_URL: testRedisUrl(),
        ENQUEUE_SECRET: "s3cret",
        PROCESSOR_FUNCTION: "asynq-processor",
        AWS_REGION: "us-east-1"
      },
      timeout: 60_000
    })
    const result = JSON.parse(stdout.trim().split("\n").at(-1)!)
    expect(result.enqueued.statusCode).toBe(200)
    expect(JSON.parse(result.enqueued.body)).toMatchObject({ type: "email:welcome", queue: "email", state: "pending" })
    expect(result.tick).toEqual(expect.arrayContaining(["forwarded", "recovered", "janitor", "errors"]))
    expect(result.dispatcher).toBe("function")
    expect(result.drained).toMatchObject({ succeeded: 1, stoppedBecause: "empty" })
    expect(await redis.llen(queueKeys("email").pending)).toBe(0)
  }, 120_000)

  it("the Cloud Functions bundle, built by the deploy guide's command, is served by the Functions Framework", async () => {
    const guide = readFileSync(join(root, "examples/gcp-functions/README.md"), "utf8")
    const start = guide.indexOf("npx esbuild examples/gcp-functions/index.ts")
    expect(start).toBeGreaterThan(-1)
    const command = guide.slice(start, guide.indexOf("index.mjs", start) + "index.mjs".length)
    const outfile = join(dir, "gcf", "index.mjs")
    expect(command).toContain("--outfile=build/gcf/index.mjs")
    await run("bash", ["-c", command.replace("build/gcf/index.mjs", outfile)], { cwd: root })
    writeFileSync(join(dir, "gcf", "package.json"), JSON.stringify({ type: "module", main: "index.mjs" }))

    const fn = await startFunction("enqueue", { REDIS_URL: testRedisUrl(), ASYNQ_SECRET: "s3cret" }, join(dir, "gcf"))
    try {
      const body = JSON.stringify({ type: "report:daily", options: { queue: "default" } })
      const res = await fetch(fn.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-asynq-signature": signBody("s3cret", { method: "POST", path: "/", body }, Date.now())
        },
        body
      })
      expect(res.status).toBe(200)
      expect(await res.json()).toMatchObject({ type: "report:daily", queue: "default", state: "pending" })
      expect(await redis.llen(queueKeys("default").pending)).toBe(1)
    } finally {
      await fn.stop()
    }
  }, 180_000)
})
