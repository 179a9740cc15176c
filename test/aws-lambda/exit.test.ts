import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { flushTestDb, testRedisUrl } from "../support/redis.js"

const root = fileURLToPath(new URL("../../", import.meta.url))
beforeAll(flushTestDb)

describe("Lambda handlers leave nothing holding the event loop", () => {
  it("a process that ran enqueue, tick and processor handlers (warm, connection reused, one reconnected while idle, one on its next call) exits on its own", {
    timeout: 120_000
  }, async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "test/aws-lambda/exit.fixture.ts"], {
      cwd: root,
      env: { ...process.env, REDIS_URL: testRedisUrl() },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    // Once the child has printed its result it has nothing left to do: if something kept the
    // event loop alive it would never exit, so kill it 10 s later and fail. (Startup itself may be
    // slow on a loaded machine; that is not what is tested.)
    let killer: NodeJS.Timeout | undefined = setTimeout(() => child.kill("SIGKILL"), 100_000)
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString()
      if (out.includes("}\n")) {
        clearTimeout(killer)
        killer = setTimeout(() => child.kill("SIGKILL"), 10_000)
      }
    })
    child.stderr.on("data", (d: Buffer) => (out += d.toString()))
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.on("exit", (c, s) => resolve([c, s]))
    )
    clearTimeout(killer)
    expect(signal, out).toBeNull()
    expect(code, out).toBe(0)
    const line = out.split("\n").find((l) => l.startsWith("{"))!
    expect(JSON.parse(line)).toEqual({
      statuses: [200, 200, 200],
      sameConnection: true,
      ticks: [0, 0],
      drained: [2, 0],
      reconnected: true,
      reopened: true
    })
  })
})
