/**
 * The library bundles: esbuild (platform node, ESM, minified) turns an entry that uses the Redis
 * service into one .mjs file in a folder with no lua/ next to it; run with node, it still runs
 * its Lua scripts, because their sources are embedded (src/redis/lua.generated.ts).
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { build } from "esbuild"
import { Redis as IORedis } from "ioredis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RedisServerHandle, startRedisServer } from "../support/redis-server.js"

const run = promisify(execFile)
const repoRoot = fileURLToPath(new URL("../../", import.meta.url))
const redisModule = fileURLToPath(new URL("../../src/redis/Redis.ts", import.meta.url))
const scriptsModule = fileURLToPath(new URL("../../src/redis/scripts.ts", import.meta.url))
const luaModule = fileURLToPath(new URL("../../src/redis/lua.generated.ts", import.meta.url))

// The bundled program: flush the server's script cache (so the script must be sent from the
// embedded source, not found by SHA), then pause and unpause a queue through `script` and `scriptBatch`.
const entrySource = `
import { Effect } from "effect"
import { Redis } from ${JSON.stringify(redisModule)}
import { registerLua } from ${JSON.stringify(scriptsModule)}
import { pauseQueueLua, unpauseQueueLua } from ${JSON.stringify(luaModule)}
registerLua("pauseQueue", pauseQueueLua)
registerLua("unpauseQueue", unpauseQueueLua)
const program = Effect.gen(function* () {
  const r = yield* Redis
  yield* r.use("script flush", (c) => c.script("FLUSH"))
  const single = yield* r.script("pauseQueue", ["asynq:{bundled}:paused"], [1700000000])
  const batch = yield* r.scriptBatch([{ script: "unpauseQueue", keys: ["asynq:{bundled}:paused"], args: [] },
    { script: "unpauseQueue", keys: ["asynq:{bundled}:paused"], args: [] }])
  const again = yield* r.script("pauseQueue", ["asynq:{bundled}:paused"], [1700000042])
  console.log(JSON.stringify({ single, batch, again }))
})
await Effect.runPromise(program.pipe(Effect.provide(Redis.layer({ url: process.env.REDIS_URL }))))
`

let server: RedisServerHandle
let dir: string
beforeAll(async () => {
  server = await startRedisServer()
  dir = mkdtempSync(join(tmpdir(), "effect-asynq-bundle-"))
})
afterAll(async () => {
  await server?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe("bundling with esbuild", () => {
  it("runs Lua scripts from a single minified ESM file with no lua/ folder beside it", async () => {
    const outDir = join(dir, "out")
    const result = await build({
      // The entry resolves packages from the repository; only the output goes to the temp folder.
      stdin: { contents: entrySource, loader: "ts", resolveDir: repoRoot, sourcefile: "entry.ts" },
      outfile: join(outDir, "main.mjs"),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      minify: true,
      logLevel: "silent",
      // ioredis is CommonJS and requires Node built-ins; an ESM bundle needs a `require` for that.
      banner: { js: 'import { createRequire as __cr } from "node:module"; const require = __cr(import.meta.url);' }
    })
    expect(result.errors).toEqual([])
    expect(readdirSync(outDir)).toEqual(["main.mjs"])
    expect(existsSync(join(outDir, "lua"))).toBe(false)

    const { stdout } = await run(process.execPath, [join(outDir, "main.mjs")], {
      cwd: outDir,
      env: { ...process.env, REDIS_URL: server.url },
      timeout: 20_000
    })
    expect(JSON.parse(stdout.trim())).toEqual({
      single: 1,
      batch: [
        { ok: true, value: 1 },
        { ok: true, value: 0 }
      ],
      again: 1
    })

    const c = new IORedis(server.url)
    try {
      expect(await c.get("asynq:{bundled}:paused")).toBe("1700000042")
    } finally {
      c.disconnect()
    }
  }, 60_000)
})
