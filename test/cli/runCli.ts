/** Runs the CLI as a subprocess (the bundled `effect-asynq`, see test/support/cliBundle.ts), as a shell user would. */
import { execFile } from "node:child_process"
import { cliBundle, repoRoot as root } from "../support/cliBundle.js"

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** True when the process had to be killed after `timeoutMs` (it hung). */
  readonly killed: boolean
}

export const runCli = async (
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined> = {},
  timeoutMs = 20_000
): Promise<CliResult> => {
  const cli = await cliBundle()
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resolve({ code, stdout, stderr, killed: error?.killed === true })
      }
    )
  })
}
