/**
 * Starts the real Functions Framework (its CLI entry point, in a child process) serving one
 * target of test/gcp-functions/functions.fixture.ts (or of `source`, e.g. a bundle) on a loopback port.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { freePort } from "../support/redis-server.js"
import { waitFor } from "../support/waitFor.js"

export interface FrameworkHandle {
  readonly url: string
  readonly output: () => string
  readonly stop: () => Promise<void>
}

const root = fileURLToPath(new URL("../../", import.meta.url))

export const startFunction = async (
  target: string,
  env: Record<string, string>,
  /** What to serve: TypeScript is loaded through tsx; a built .mjs (or a folder) as Node loads it. */
  source = "test/gcp-functions/functions.fixture.ts"
): Promise<FrameworkHandle> => {
  const port = await freePort()
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(source.endsWith(".ts") ? ["--import", "tsx"] : []),
      "node_modules/@google-cloud/functions-framework/build/src/main.js",
      `--target=${target}`,
      `--source=${source}`,
      `--port=${port}`
    ],
    { cwd: root, env: { ...process.env, ...env, NODE_ENV: "test" }, stdio: ["ignore", "pipe", "pipe"] }
  )
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  const url = `http://127.0.0.1:${port}`
  // Generous: starting Node + tsx + the framework is slow on a loaded machine.
  const state = await waitFor(
    `functions-framework to listen on ${port}`,
    async () => {
      if (child.exitCode !== null) return "exited"
      await fetch(`${url}/__ready`, { method: "HEAD" })
      return "listening"
    },
    Boolean,
    { timeoutMs: 120_000 }
  ).catch((e: Error) => {
    throw new Error(`${e.message}\n${out}`)
  })
  if (state === "exited") throw new Error(`functions-framework exited (${child.exitCode}):\n${out}`)
  return {
    url,
    output: () => out,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.kill("SIGTERM")
      })
  }
}
