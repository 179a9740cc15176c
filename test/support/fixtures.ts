/** Reading the golden asynq wire fixtures (../shared/fixtures/asynq-wire/, see its README). */
import { readFileSync } from "node:fs"

export const fixturesDir = new URL("../../../shared/fixtures/asynq-wire/", import.meta.url)

/** A fixture file, parsed as JSON; `relPath` is relative to the fixtures folder, e.g. "states/a-enqueue.json". */
export const loadFixture = <A = unknown>(relPath: string): A => JSON.parse(readFileSync(new URL(relPath, fixturesDir), "utf8")) as A
