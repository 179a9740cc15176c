/** Exit codes and the one-line error message a shell user sees. */
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Exit from "effect/Exit"
import { CliError } from "effect/cli"

export const exitOk = 0
/** The operation failed (Redis unreachable, queue not found, task in the wrong state, …). */
export const exitFailure = 1
/**
 * The command line was wrong (unknown command, missing or bad argument), or a destructive bulk
 * command was run without --force (it only said how many tasks it would change).
 */
export const exitUsage = 2

/** Ends the CLI with this exit code; the command already said why. */
export class ExitWith extends Data.TaggedError("ExitWith")<{ readonly code: number }> {}

/** A destructive command needs --force; the message says what it would change. Nothing was changed. */
export class ForceRequired extends Data.TaggedError("ForceRequired")<{
  readonly message: string
  readonly count: number
}> {}

const usageTags = new Set(["InvalidArgument", "ForceRequired"])

/** The exit code for how the command ended, and what to print on stderr (nothing when help was already shown). */
export const outcome = (exit: Exit.Exit<unknown, unknown>): { code: number; message?: string } => {
  if (Exit.isSuccess(exit)) return { code: exitOk }
  if (Cause.hasInterruptsOnly(exit.cause)) return { code: 130 }
  const err = Cause.squash(exit.cause)
  if (CliError.isCliError(err)) return { code: exitUsage }
  if (err instanceof ExitWith) return { code: err.code }
  if (typeof err === "object" && err !== null && "_tag" in err && "message" in err) {
    const tag = String((err as { _tag: unknown })._tag)
    return {
      code: usageTags.has(tag) ? exitUsage : exitFailure,
      message: String((err as { message: unknown }).message)
    }
  }
  return { code: exitFailure, message: err instanceof Error ? err.message : String(err) }
}
