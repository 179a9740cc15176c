/**
 * The API reference (`npm run docs`, TypeDoc over the package's entry points, typedoc.json) builds
 * with TypeDoc's validation and every warning treated as an error: every public export has JSDoc,
 * no `{@link}` or relative link is broken. The HTML goes to a temporary folder, not docs-api/.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("..", import.meta.url))
const run = promisify(execFile)

describe("the API reference (TypeDoc)", () => {
  it("covers every entry point of package.json, and validates: warnings are errors", async () => {
    const config = JSON.parse(readFileSync(join(root, "typedoc.json"), "utf8")) as {
      entryPoints: Array<string>
      treatWarningsAsErrors: boolean
      validation: Record<string, boolean>
      requiredToBeDocumented: Array<string>
    }
    expect(config.treatWarningsAsErrors).toBe(true)
    expect(config.validation).toMatchObject({ invalidLink: true, notDocumented: true })
    expect(config.requiredToBeDocumented).toEqual(
      expect.arrayContaining(["Variable", "Function", "Class", "Interface", "TypeAlias"])
    )
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      exports: Record<string, string | { default: string }>
    }
    const sources = Object.values(pkg.exports)
      .filter((t): t is { default: string } => typeof t !== "string")
      .map((t) => t.default.replace(/^\.\/dist\//, "").replace(/\.js$/, ".ts"))
    expect(config.entryPoints.sort()).toEqual(sources.sort())

    const out = mkdtempSync(join(tmpdir(), "effect-asynq-typedoc-"))
    try {
      // Exits non-zero on any warning (treatWarningsAsErrors); the output names each one.
      const { stdout, stderr } = await run(
        process.execPath,
        [join(root, "node_modules/typedoc/bin/typedoc"), "--out", out],
        {
          cwd: root,
          maxBuffer: 16 * 1024 * 1024
        }
      ).catch((e: { stdout?: string; stderr?: string }) => ({
        stdout: e.stdout ?? "",
        stderr: `${e.stderr ?? ""}\n(typedoc failed)`
      }))
      expect(`${stdout}${stderr}`).not.toMatch(/\[(warning|error)\]|typedoc failed/)
      expect(readFileSync(join(out, "index.html"), "utf8")).toContain("effect-asynq")
    } finally {
      rmSync(out, { recursive: true, force: true })
    }
  }, 600_000)
})
