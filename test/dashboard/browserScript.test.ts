/**
 * The dashboard's browser script is a TypeScript module (adapters/dashboard/browser/app.ts):
 * type-checked with the DOM library by its own tsconfig, and bundled by esbuild into the string
 * module the handler serves (adapters/dashboard/assets/app.generated.ts, written by embed.mjs in
 * the build, typecheck and test steps). What the browser runs is checked in browser.test.ts.
 */
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { appJs } from "../../adapters/dashboard/assets/app.generated.js"
import { bundleApp, generatedModule } from "../../adapters/dashboard/browser/embed.mjs"

const root = fileURLToPath(new URL("../../", import.meta.url))
const run = promisify(execFile)

describe("the dashboard's browser script", () => {
  it("type-checks under the DOM library (strict), apart from the Node program", async () => {
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc")
    const result = await run(
      process.execPath,
      [tsc, "-p", join(root, "adapters", "dashboard", "browser", "tsconfig.json")],
      { cwd: root }
    ).then(
      () => "ok",
      (e: { stdout?: string }) => e.stdout ?? "tsc failed"
    )
    expect(result).toBe("ok")
  }, 60_000)

  it("is served as the esbuild bundle of browser/app.ts: one script with no import, no source map, nothing to fetch", async () => {
    const script = await bundleApp()
    expect(readFileSync(join(root, "adapters", "dashboard", "assets", "app.generated.ts"), "utf8")).toBe(
      generatedModule(script)
    )
    expect(appJs).toBe(script)
    expect(appJs).not.toMatch(/^\s*import\b|\bimport\(|sourceMappingURL|https?:\/\/(?!www\.w3\.org\/2000\/svg)/m)
    expect(appJs).toContain('addEventListener("hashchange"')
  }, 60_000)
})
