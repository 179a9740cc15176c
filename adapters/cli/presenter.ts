/** Where effect/cli's help goes: asked-for help on stdout, help after a usage mistake on stderr. */
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { CliOutput } from "effect/cli"

const formatter = () => CliOutput.defaultFormatter({ colors: process.stdout.isTTY === true && process.env.NO_COLOR === undefined })

export const presenterLayer = CliOutput.layerPresenter({
  present: (event) =>
    Effect.gen(function* () {
      const f = formatter()
      switch (event._tag) {
        case "Help":
          if (event.reason === "Requested") return yield* Console.log(f.formatHelpDoc(event.helpDoc))
          return yield* Console.error(f.formatHelpDoc(event.helpDoc))
        case "InvalidInvocation":
          yield* Console.error(f.formatHelpDoc(event.helpDoc))
          return yield* Console.error(f.formatErrors(event.errors))
        case "Version":
          return yield* Console.log(f.formatVersion(event.name, event.version))
      }
    })
})

