/** Printing results: JSON (--json) or text, on stdout; progress lines on stderr. */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { Json } from "./globalFlags.js"

const replacer = (_k: string, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v)

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is what this does
const controlCharacters = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * Text as a terminal should see it: control characters (other than newline and tab) become visible
 * `\xNN` escapes, so a task type, payload or error message stored in Redis cannot move the cursor,
 * recolour or retitle the user's terminal.
 */
export const visible = (s: string): string =>
  s.replace(controlCharacters, (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, "0")}`)

/** Prints `json()` as JSON when --json is set, else `text()` (with control characters made visible). */
export const emit = (json: () => unknown, text: () => string) =>
  Effect.gen(function* () {
    if (yield* Json) yield* Console.log(JSON.stringify(json(), replacer, 2))
    else {
      const t = text()
      if (t !== "") yield* Console.log(visible(t))
    }
  })

/** A progress reporter for bulk operations: one line per batch on stderr (rewritten in place on a terminal). */
export const progressLine = (verb: string) => {
  const tty = process.stderr.isTTY === true
  return {
    onProgress: ({ done, total }: { done: number; total: number }) => {
      process.stderr.write(tty ? `\r${verb} ${done}/${total}` : `${verb} ${done}/${total}\n`)
    },
    finish: () => {
      if (tty) process.stderr.write("\n")
    }
  }
}
