/**
 * A bundled application (esbuild, everything inlined: the client, ioredis and the OpenTelemetry
 * API and SDK) run from a folder with no node_modules: effect-asynq cannot require
 * `@opentelemetry/api` there, and still stores the active span's traceparent on every enqueue,
 * read from the SDK the application registered.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { build } from "esbuild"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { repoRoot } from "../support/cliBundle.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"

const run = promisify(execFile)
let dir: string

beforeAll(async () => {
  await flushTestDb()
  // Outside the repository: no node_modules on the way up.
  dir = mkdtempSync(join(tmpdir(), "obs-otel-bundle-"))
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("Promise client in a bundle with the OpenTelemetry SDK inlined", () => {
  it("stores the active span's traceparent", async () => {
    const entry = join(repoRoot, ".tmp", `otel-bundle-entry-${process.pid}.ts`)
    writeFileSync(
      entry,
      `import { context, propagation, trace } from "@opentelemetry/api"
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks"
import { W3CTraceContextPropagator } from "@opentelemetry/core"
import { BasicTracerProvider } from "@opentelemetry/sdk-trace-base"
import { createClient } from "../src/client.js"
const provider = new BasicTracerProvider()
trace.setGlobalTracerProvider(provider)
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
propagation.setGlobalPropagator(new W3CTraceContextPropagator())
const client = createClient({ url: process.env.REDIS_URL })
const inSpan = () => provider.getTracer("t").startActiveSpan("op", async (span) => {
  const info = await client.enqueue("bundled", undefined, { queue: "ob" })
  span.end()
  return { headers: info.headers, traceId: span.spanContext().traceId, spanId: span.spanContext().spanId }
})
// Twice: the SDK is read from the global on every enqueue, not only on the first.
const out = [await inSpan(), await inSpan()]
await client.close()
console.log(JSON.stringify(out))
`
    )
    const outfile = join(dir, "app.mjs")
    try {
      await build({
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: "node",
        format: "esm",
        // ioredis is CommonJS: give the ESM bundle a require.
        banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
        logLevel: "silent"
      })
    } finally {
      rmSync(entry, { force: true })
    }
    const { stdout } = await run(process.execPath, [outfile], {
      cwd: dir,
      env: { ...process.env, REDIS_URL: testRedisUrl() }
    })
    const out = JSON.parse(stdout.trim().split("\n").pop()!) as Array<{
      headers: Record<string, string>
      traceId: string
      spanId: string
    }>
    expect(out).toHaveLength(2)
    for (const o of out) expect(o.headers).toEqual({ traceparent: `00-${o.traceId}-${o.spanId}-01` })
    expect(out[0]!.traceId).not.toBe(out[1]!.traceId)
  })
})
