/** Runs the CLI as a subprocess (node --import tsx adapters/cli/main.ts …), as a shell user would. */
import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../", import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  /** True when the process had to be killed after `timeoutMs` (it hung). */
  readonly killed: boolean
}

export const runCli = (args: ReadonlyArray<string>, env: Record<string, string | undefined> = {}, timeoutMs = 20_000): Promise<CliResult> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", "adapters/cli/main.ts", ...args],
      { cwd: root, env: { ...process.env, NO_COLOR: "1", ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null
        resolve({ code, stdout, stderr, killed: error?.killed === true })
      }
    )
  })
