/**
 * Loading ioredis 6 leaves String.prototype in dictionary mode (its `class VerbatimString extends
 * String`), which makes every string method lookup in optimized code a generic one for the whole
 * process; opening a connection turns it back (src/redis/fastStringPrototype.ts). Checked in a
 * child process with V8's natives syntax, the only way to see an object's property mode.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { testRedisUrl } from "../support/redis.js"

const child = fileURLToPath(new URL("../support/string-prototype-child.ts", import.meta.url))

const runChild = () =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const p = spawn(process.execPath, ["--allow-natives-syntax", "--import", "tsx", child], {
      env: { ...process.env, REDIS_URL: testRedisUrl() },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    let err = ""
    p.stdout.on("data", (d: Buffer) => (out += d.toString()))
    p.stderr.on("data", (d: Buffer) => (err += d.toString()))
    p.once("exit", (code) => resolve({ code, out, err }))
  })

describe("String.prototype after ioredis is loaded", () => {
  it("is slow once ioredis 6 is loaded, and fast again once a connection is open", async () => {
    const r = await runChild()
    expect({ code: r.code, err: r.err }).toEqual({ code: 0, err: "" })
    // The first figure shows the ioredis behaviour this works around (ioredis is pinned by the lockfile).
    expect(JSON.parse(r.out.trim())).toEqual({ afterIoredis: false, afterConnect: true })
  }, 60_000)
})
