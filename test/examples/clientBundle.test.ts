/**
 * The Promise client loads ioredis only when its options need it (issue 29, point 7): a handler
 * that only calls `createClient(...).enqueue(...)` bundles (esbuild: platform node, ESM, minified,
 * no banner) without ioredis, to at most 150 KB, and that bundle loads as plain ESM and enqueues in
 * a fresh Node process; unbundled (the sources compiled file by file, as the package ships them),
 * the same handler never resolves ioredis. Options that need ioredis still work from a bundle:
 * with ioredis passed (`createClient({ ..., ioredis })`), and without it a typed error says how.
 */
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { build, type Metafile } from "esbuild"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { queueKeys } from "../../src/wire/keys.js"
import { flushTestDb, rawClient, testDb, testRedisUrl } from "../support/redis.js"

const run = promisify(execFile)
const root = fileURLToPath(new URL("../../", import.meta.url))
const redis = rawClient()
/** Inside the repository: packages resolve from its node_modules. */
let inRepo: string
/** Outside it: nothing resolves at run time but what the bundle carries. */
let outside: string

beforeAll(async () => {
  await flushTestDb()
  mkdirSync(join(root, ".tmp"), { recursive: true })
  inRepo = mkdtempSync(join(root, ".tmp", "client-bundle-"))
  outside = mkdtempSync(join(tmpdir(), "client-bundle-"))
})
afterAll(() => {
  redis.disconnect()
  for (const d of [inRepo, outside]) if (d) rmSync(d, { recursive: true, force: true })
})

const src = (p: string) => JSON.stringify(join(root, p))

/** Bundles `source` as a deploy would (no banner), into `dir`/`name`.mjs; its bytes and the package inputs it carries. */
const bundle = async (
  dir: string,
  name: string,
  source: string
): Promise<{ file: string; bytes: number; inputs: ReadonlyArray<string> }> => {
  const entry = join(dir, `${name}.ts`)
  writeFileSync(entry, source)
  const file = join(dir, `${name}.mjs`)
  const out = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    platform: "node",
    format: "esm",
    target: "node20",
    outfile: file,
    metafile: true,
    logLevel: "error"
  })
  const output = Object.values((out.metafile as Metafile).outputs)[0]!
  return {
    file,
    bytes: output.bytes,
    inputs: Object.entries(output.inputs)
      .filter(([, v]) => v.bytesInOutput > 0)
      .map(([f]) => f)
  }
}

/** Runs `file` with node (a fresh process), REDIS_URL set; its last stdout line, parsed. */
const runNode = async (file: string, args: ReadonlyArray<string> = []): Promise<any> => {
  const { stdout } = await run(process.execPath, [...args, file], {
    env: { ...process.env, REDIS_URL: testRedisUrl() },
    timeout: 60_000
  })
  return JSON.parse(stdout.trim().split("\n").at(-1)!)
}

const handler = (from: string, queue: string) => `import { createClient } from ${from}
const client = createClient()
const info = await client.enqueue("email:welcome", { to: "a@example.com" }, { queue: ${JSON.stringify(queue)} })
await client.close()
console.log(JSON.stringify({ id: info.id, state: info.state }))
`

describe("createClient loads ioredis only when asked for", () => {
  it("a createClient-only bundle: no ioredis, <= 150 KB, loads as ESM without a banner and enqueues", async () => {
    const { file, bytes, inputs } = await bundle(outside, "handler", handler(src("src/client.ts"), "cb-bundled"))
    for (const f of inputs)
      expect(f).not.toMatch(
        /node_modules\/(ioredis|@ioredis|denque|debug|redis-errors|standard-as-callback|cluster-key-slot)\//
      )
    expect(bytes).toBeLessThanOrEqual(150 * 1024)
    const out = await runNode(file)
    expect(out.state).toBe("pending")
    expect(await redis.lrange(queueKeys("cb-bundled").pending, 0, -1)).toEqual([out.id])
  }, 120_000)

  it("unbundled (sources compiled file by file): enqueueing to a single node never resolves ioredis", async () => {
    const tsFiles = (dir: string): Array<string> =>
      readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
        d.isDirectory()
          ? tsFiles(join(dir, d.name))
          : d.name.endsWith(".ts") && !d.name.endsWith(".d.ts")
            ? [join(dir, d.name)]
            : []
      )
    const dist = join(inRepo, "dist")
    await build({
      entryPoints: tsFiles(join(root, "src")),
      outdir: join(dist, "src"),
      outbase: join(root, "src"),
      bundle: false,
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "error"
    })
    // A resolve hook (module.register) that writes down every module the process resolves.
    writeFileSync(
      join(inRepo, "hooks.mjs"),
      `export async function resolve(specifier, context, next) {
  const r = await next(specifier, context)
  process.stderr.write("resolved " + r.url + "\\n")
  return r
}\n`
    )
    writeFileSync(
      join(inRepo, "register.mjs"),
      `import { register } from "node:module"\nregister("./hooks.mjs", import.meta.url)\n`
    )
    writeFileSync(join(inRepo, "handler.mjs"), handler(JSON.stringify("./dist/src/client.js"), "cb-unbundled"))
    const { stdout, stderr } = await run(
      process.execPath,
      ["--import", join(inRepo, "register.mjs"), join(inRepo, "handler.mjs")],
      { env: { ...process.env, REDIS_URL: testRedisUrl() }, timeout: 60_000 }
    )
    const resolved = stderr.split("\n").filter((l) => l.startsWith("resolved "))
    expect(resolved.some((l) => l.endsWith("/dist/src/client.js"))).toBe(true)
    expect(resolved.filter((l) => /node_modules\/(ioredis|@ioredis)\//.test(l))).toEqual([])
    const out = JSON.parse(stdout.trim().split("\n").at(-1)!)
    expect(await redis.lrange(queueKeys("cb-unbundled").pending, 0, -1)).toEqual([out.id])
  }, 120_000)

  it("options that need ioredis, from a bundle without node_modules: a RedisConnectionError saying to pass ioredis; with ioredis passed, the enqueue goes through ioredis", async () => {
    const address = `127.0.0.1:${new URL(testRedisUrl()).port}`
    const without = await bundle(
      outside,
      "without",
      `import { createClient } from ${src("src/client.ts")}
const client = createClient({ url: ${JSON.stringify(address)}, db: ${testDb()} })
const e = await client.enqueue("t", 1, { queue: "cb-ioredis" }).catch((x) => x)
await client.close()
console.log(JSON.stringify({ tag: e._tag, message: e.message }))
`
    )
    const refused = await runNode(without.file)
    expect(refused.tag).toBe("RedisConnectionError")
    expect(refused.message).toContain(`cannot connect to Redis at ${address}: these options need ioredis`)
    expect(refused.message).toContain(`import * as ioredis from "ioredis"; createClient({ ...options, ioredis })`)
    // ioredis is CommonJS: its bundle needs the usual createRequire banner (esbuild's --banner).
    const banner = "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);"
    const withSource = `import * as ioredis from "ioredis"
import { createClient } from ${src("src/client.ts")}
const client = createClient({ url: ${JSON.stringify(address)}, db: ${testDb()}, ioredis })
const info = await client.enqueue("t", 2, { queue: "cb-ioredis" })
await client.close()
console.log(JSON.stringify({ id: info.id }))
`
    // Written inside the repository (so the bundler finds ioredis), bundled to outside it.
    const entry = join(inRepo, "with.ts")
    writeFileSync(entry, withSource)
    await build({
      entryPoints: [entry],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile: join(outside, "with.mjs"),
      banner: { js: banner },
      logLevel: "error"
    })
    const { id } = await runNode(join(outside, "with.mjs"))
    expect(await redis.lrange(queueKeys("cb-ioredis").pending, 0, -1)).toEqual([id])
  }, 120_000)
})
