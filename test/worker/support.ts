/** Worker child processes: `effect-asynq worker` (adapters/cli/main.ts worker) run with tsx. */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))

export interface WorkerProcess {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/** Starts `effect-asynq worker` with `handlersModule` (default: the recording handlers), `args` and `env`. */
export const spawnWorker = (
  redisUrl: string,
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  handlersModule = "test/worker/fixtures/recordingHandlers.ts"
): WorkerProcess => {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "adapters/cli/main.ts",
      "worker",
      handlersModule,
      "--redis-url",
      redisUrl,
      "--log-level",
      "warn",
      ...args
    ],
    {
      cwd: root,
      env: { ...process.env, REDIS_URL: redisUrl, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  let out = ""
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
  child.stderr!.on("data", (d: Buffer) => (out += d.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, output: () => out, exited }
}
