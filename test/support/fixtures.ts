/** Reading the golden asynq wire fixtures (test/fixtures/asynq-wire/, see its README). */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

export const fixturesDir = new URL("../fixtures/asynq-wire/", import.meta.url)

/** A fixture file, parsed as JSON; `relPath` is relative to the fixtures folder, e.g. "states/a-enqueue.json". */
export const loadFixture = <A = unknown>(relPath: string): A => {
  const dir = fileURLToPath(fixturesDir)
  if (!existsSync(dir)) {
    throw new Error(
      `The asynq wire fixtures folder is missing: expected ${dir} (test/fixtures/asynq-wire in the repository). These golden files were captured from Go asynq and are needed by the wire tests.`
    )
  }
  const file = new URL(relPath, fixturesDir)
  if (!existsSync(file)) throw new Error(`asynq wire fixture ${relPath} is missing from ${dir}`)
  return JSON.parse(readFileSync(file, "utf8")) as A
}

export const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex")
export const fromHex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, "hex"))
/** A fixture `bytes` value: standard base64, `null` = Go nil. */
export const fromB64 = (s: string | null): Uint8Array | undefined =>
  s === null ? undefined : new Uint8Array(Buffer.from(s, "base64"))
