/**
 * The CLI as one esbuild bundle, built once per test process. Spawning the bundle takes a few
 * hundred ms where `node --import tsx adapters/cli/main.ts` spends seconds compiling TypeScript,
 * and it is also how the CLI ships (one file, Lua embedded).
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url))

let bundled: Promise<string> | undefined

/** Path of the bundled CLI (`node <path> …` runs `effect-asynq …`). */
export const cliBundle = (): Promise<string> =>
  (bundled ??= (async () => {
    const outfile = join(mkdtempSync(join(tmpdir(), "effect-asynq-cli-")), "effect-asynq.mjs")
    await build({
      entryPoints: [join(repoRoot, "adapters/cli/main.ts")],
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      outfile,
      logLevel: "error",
      // ioredis is CommonJS: give the ESM bundle a `require`.
      banner: {
        js: "import { createRequire as __effectAsynqRequire } from 'node:module'; const require = __effectAsynqRequire(import.meta.url);"
      }
    })
    return outfile
  })())
