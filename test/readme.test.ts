/**
 * The README's TypeScript examples compile against the current code: every ```ts block is written
 * to its own module (imports of `effect-asynq/...` resolved to this checkout's sources, as the
 * package's `exports` map them) and the lot is type-checked by tsc in strict mode. A changed
 * signature or a renamed option that the README still shows fails here.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("..", import.meta.url))

/** The ```ts blocks of the README, with the line each starts on. */
const tsBlocks = (markdown: string): Array<{ line: number; code: string }> => {
  const out: Array<{ line: number; code: string }> = []
  const lines = markdown.split("\n")
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== "```ts") continue
    const start = i + 1
    let j = start
    while (j < lines.length && lines[j]!.trim() !== "```") j++
    out.push({ line: start + 1, code: lines.slice(start, j).join("\n") })
    i = j
  }
  return out
}

describe("README examples", () => {
  it("every TypeScript block type-checks against the sources", () => {
    const blocks = tsBlocks(readFileSync(join(root, "README.md"), "utf8"))
    expect(blocks.length).toBeGreaterThan(10)
    // Inside the checkout, so the blocks' other imports (effect, ioredis, …) resolve from its node_modules.
    const dir = join(root, ".tmp", `readme-check-${process.pid}`)
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    try {
      const files = blocks.map((b, i) => {
        const name = `block${String(i + 1).padStart(2, "0")}_line${b.line}.ts`
        // `export {}` makes every block a module (own scope, top-level await allowed).
        writeFileSync(join(dir, name), `${b.code}\nexport {}\n`)
        return name
      })
      const rel = (p: string) => join("..", "..", p)
      const tsconfig = {
        compilerOptions: {
          target: "ES2022",
          module: "ESNext",
          moduleResolution: "bundler",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"],
          baseUrl: ".",
          paths: {
            "effect-asynq": [rel("src/index.ts")],
            "effect-asynq/client": [rel("src/client.ts")],
            "effect-asynq/edge": [rel("src/edge/index.ts")],
            "effect-asynq/edge/scheduler": [rel("src/edge/scheduler.ts")],
            "effect-asynq/worker": [rel("adapters/worker/index.ts")],
            "effect-asynq/inspector": [rel("src/inspector/index.ts")],
            "effect-asynq/scheduler": [rel("src/scheduler/index.ts")],
            "effect-asynq/wire": [rel("src/wire/index.ts")],
            "effect-asynq/dashboard": [rel("adapters/dashboard/index.ts")],
            "effect-asynq/observability": [rel("src/observability/index.ts")],
            "effect-asynq/serverless": [rel("adapters/serverless/index.ts")],
            "effect-asynq/aws-lambda/*": [rel("adapters/aws-lambda/*.ts")],
            "effect-asynq/gcp-functions/*": [rel("adapters/gcp-functions/*.ts")]
          }
        },
        files: files
      }
      writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(tsconfig, null, 2))
      let output = ""
      try {
        execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", join(dir, "tsconfig.json")], { encoding: "utf8", stdio: "pipe" })
      } catch (e) {
        output = `${(e as { stdout?: string }).stdout ?? ""}${(e as { stderr?: string }).stderr ?? ""}` || String(e)
      }
      // Each error names its block file, and so the README line the block starts on.
      expect(output).toBe("")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)
})
