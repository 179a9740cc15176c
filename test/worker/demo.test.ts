import { execFileSync, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { freePort } from "../support/redis-server.js"

const root = fileURLToPath(new URL("../../", import.meta.url))

/** `npm start`'s program with no Redis at REDIS_URL (so it starts its private redis-server). */
const startDemo = async (args: ReadonlyArray<string> = [], env: Record<string, string> = {}) => {
  const deadPort = await freePort()
  const child = spawn(process.execPath, ["--import", "tsx", "examples/demo/main.ts", ...args], {
    cwd: root,
    env: { ...process.env, REDIS_URL: `redis://127.0.0.1:${deadPort}`, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  const seen: Array<{ text: string; resolve: () => void }> = []
  const onData = (d: Buffer) => {
    out += d.toString()
    for (const s of seen) if (out.includes(s.text)) s.resolve()
  }
  child.stdout.on("data", onData)
  child.stderr.on("data", onData)
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve))
  return {
    child,
    exited,
    output: () => out,
    /** Resolves once `text` has been printed (or the process has exited). */
    printed: (text: string) =>
      new Promise<void>((resolve) => {
        seen.push({ text, resolve })
        if (out.includes(text)) resolve()
        void exited.then(() => resolve())
      }),
    /** The private redis-server's port, from the demo's first line. */
    redisPort: () => /started a private redis-server at redis:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]
  }
}

const redisServerRunning = (port: string) =>
  execFileSync("sh", ["-c", `pgrep -f "[r]edis-server .*:${port}$" || true`], { encoding: "utf8" }).trim() !== ""

describe("npm start demo", () => {
  it("with no Redis at REDIS_URL, starts a private redis-server, processes the example tasks (one after a retry), exits 0 and stops the server", async () => {
    const demo = await startDemo()
    const code = await demo.exited
    const out = demo.output()
    expect(code, out).toBe(0)
    const port = demo.redisPort()
    expect(port, out).toBeDefined()
    for (const line of [
      "✓ email:welcome",
      "✓ image:resize",
      "✗ payment:capture   attempt 1 failed",
      "✓ payment:capture   succeeded on attempt 2",
      "✓ report:daily",
      "All 4 tasks done."
    ]) {
      expect(out).toContain(line)
    }
    expect(out.indexOf("attempt 1 failed")).toBeLessThan(out.indexOf("succeeded on attempt 2"))
    expect(redisServerRunning(port!)).toBe(false)
  }, 60_000)

  it("stops cleanly on SIGTERM before its tasks are done: the worker shuts down, the private redis-server is stopped, exit 0", async () => {
    const demo = await startDemo()
    // The delayed task is due 3 s after this line: the demo is still waiting for it.
    await demo.printed("enqueueing example tasks")
    const port = demo.redisPort()
    expect(port, demo.output()).toBeDefined()
    demo.child.kill("SIGTERM")
    expect(await demo.exited, demo.output()).toBe(0)
    const out = demo.output()
    expect(out).toContain("SIGTERM received: shutting down.")
    expect(out).toContain("Worker stopped")
    expect(out).not.toContain("All 4 tasks done.")
    expect(redisServerRunning(port!)).toBe(false)
  }, 60_000)

  it("--forever starts the dashboard beside the worker and prints its URL; it serves the demo queue until SIGTERM", async () => {
    const demo = await startDemo(["--forever"], { DASH_PORT: String(await freePort()) })
    await demo.printed("Running until Ctrl-C (--forever).")
    const url = /Dashboard: (http:\/\/127\.0\.0\.1:\d+\/) \(actions allowed\)/.exec(demo.output())?.[1]
    expect(url, demo.output()).toBeDefined()
    const queues = (await (await fetch(`${url}api/queues`)).json()) as { queues: Array<{ queue: string }> }
    expect(queues.queues.map((q) => q.queue)).toEqual(["demo"])
    expect(await (await fetch(`${url}metrics`)).text()).toContain('asynq_queue_size{queue="demo"}')
    demo.child.kill("SIGTERM")
    expect(await demo.exited, demo.output()).toBe(0)
    await expect(fetch(`${url}api/queues`)).rejects.toThrow()
  }, 60_000)
})
