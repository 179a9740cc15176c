import { execFileSync, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { freePort } from "../support/redis-server.js"

const root = fileURLToPath(new URL("../../", import.meta.url))

describe("npm start demo", () => {
  it("with no Redis at REDIS_URL, starts a private redis-server, processes the example tasks (one after a retry), exits 0 and stops the server", async () => {
    const deadPort = await freePort()
    const child = spawn(process.execPath, ["--import", "tsx", "examples/demo/main.ts"], {
      cwd: root,
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${deadPort}` },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    child.stdout.on("data", (d: Buffer) => (out += d.toString()))
    child.stderr.on("data", (d: Buffer) => (out += d.toString()))
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
    expect(code, out).toBe(0)
    const port = /started a private redis-server at redis:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]
    expect(port, out).toBeDefined()
    for (const line of ["✓ email:welcome", "✓ image:resize", "✗ payment:capture   attempt 1 failed", "✓ payment:capture   succeeded on attempt 2", "✓ report:daily", "All 4 tasks done."]) {
      expect(out).toContain(line)
    }
    expect(out.indexOf("attempt 1 failed")).toBeLessThan(out.indexOf("succeeded on attempt 2"))
    const running = execFileSync("sh", ["-c", `pgrep -f "[r]edis-server .*:${port}\$" || true`], { encoding: "utf8" }).trim()
    expect(running).toBe("")
  }, 60_000)

  it("stops cleanly on SIGTERM before its tasks are done: the worker shuts down, the private redis-server is stopped, exit 0", async () => {
    const deadPort = await freePort()
    const child = spawn(process.execPath, ["--import", "tsx", "examples/demo/main.ts"], {
      cwd: root,
      env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${deadPort}` },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
    await new Promise<void>((resolve) => {
      const onData = (d: Buffer) => {
        out += d.toString()
        // The delayed task is due 3 s after this line: the demo is still waiting for it.
        if (out.includes("enqueueing example tasks")) resolve()
      }
      child.stdout.on("data", onData)
      child.stderr.on("data", (d: Buffer) => (out += d.toString()))
      void exited.then(() => resolve())
    })
    const port = /started a private redis-server at redis:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]
    expect(port, out).toBeDefined()
    child.kill("SIGTERM")
    expect(await exited, out).toBe(0)
    expect(out).toContain("SIGTERM received: shutting down.")
    expect(out).toContain("Worker stopped")
    expect(out).not.toContain("All 4 tasks done.")
    const running = execFileSync("sh", ["-c", `pgrep -f "[r]edis-server .*:${port}\$" || true`], { encoding: "utf8" }).trim()
    expect(running).toBe("")
  }, 60_000)
})
