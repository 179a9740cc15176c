/**
 * Where effect/cli's output goes: asked-for help on stdout; after a usage mistake, one line per
 * mistake on stderr (`effect-asynq: <what is wrong> (see effect-asynq <command> --help)`), not the
 * whole help.
 */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { CliOutput } from "effect/cli"
import { visible } from "./output.js"

const formatter = () =>
  CliOutput.defaultFormatter({ colors: process.stdout.isTTY === true && process.env.NO_COLOR === undefined })

/** effect/cli's message on one line: its "Did you mean this?" list folded into it. */
export const oneLine = (message: string): string => {
  const [head, suggestions] = message.split(/\n\s*Did you mean this\?\n/)
  const base = head!.trim().replace(/\s*\n\s*/g, " ")
  if (suggestions === undefined) return base
  const names = suggestions
    .split("\n")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  return `${base}; did you mean ${names.join(" or ")}?`
}

/** The usage mistakes of a command line, each as one line with where to read more. */
export const usageLines = (
  commandPath: ReadonlyArray<string>,
  errors: ReadonlyArray<{ readonly message: string }>
): string => {
  const help = `see ${commandPath.length > 0 ? commandPath.join(" ") : "effect-asynq"} --help`
  return errors.map((e) => `effect-asynq: ${visible(oneLine(e.message))} (${help})`).join("\n")
}

export const presenterLayer = CliOutput.layerPresenter({
  present: (event) =>
    Effect.gen(function* () {
      const f = formatter()
      switch (event._tag) {
        case "Help":
          if (event.reason === "Requested") return yield* Console.log(f.formatHelpDoc(event.helpDoc))
          return yield* Console.error(f.formatHelpDoc(event.helpDoc))
        case "InvalidInvocation":
          return yield* Console.error(usageLines(event.commandPath, event.errors))
        case "Version":
          return yield* Console.log(f.formatVersion(event.name, event.version))
      }
    })
})
