/** Printing results: JSON (--json) or text, on stdout; progress lines on stderr. */
import { Console, Effect } from "effect"
import { Json } from "./globalFlags.js"

const replacer = (_k: string, v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v)

/** Prints `json()` as JSON when --json is set, else `text()`. */
export const emit = (json: () => unknown, text: () => string) =>
  Effect.gen(function* () {
    if (yield* Json) yield* Console.log(JSON.stringify(json(), replacer, 2))
    else {
      const t = text()
      if (t !== "") yield* Console.log(t)
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
