import * as Data from "effect/Data"

/** A Redis command or script failed (network error, server error reply, timeout). */
export class RedisError extends Data.TaggedError("RedisError")<{
  readonly op: string
  readonly message: string
  readonly cause?: unknown
}> {}

/** No Redis server could be reached when the connection was opened. */
export class RedisConnectionError extends Data.TaggedError("RedisConnectionError")<{
  /** The address tried, with any password removed. */
  readonly target: string
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * Whether a failure is an error reply from Redis (an answer: the command ran, or was refused), as
 * opposed to a lost reply. Read by name, so no transport's class is imported: ioredis's ReplyError
 * and the HTTP transport's error replies are both named "ReplyError".
 */
export const isErrorReply = (cause: unknown): boolean => cause instanceof Error && cause.name === "ReplyError"

export const errorMessage = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/**
 * The cause of a RedisError when a command got no reply within its time limit (`commandTimeoutMs`;
 * over HTTP, the edge client's `timeoutMs`). Not an answer: the command may have run, or may still
 * run, on the server (a lost reply, see broker/lostReply.ts).
 */
export class CommandTimeout extends Error {
  override readonly name = "CommandTimeout"
  constructor(
    /** The server, secrets removed. */
    readonly target: string,
    /** The limit that ran out, ms. */
    readonly timeoutMs: number,
    /** Which option set the limit, for the message. */
    readonly option: string = "commandTimeoutMs",
    /** Why no reply came, when known (e.g. the connection was not ready). */
    readonly detail: string | undefined = undefined
  ) {
    super(`Command timed out: ${CommandTimeout.describe(target, timeoutMs, option, detail)}`)
  }

  /** "no reply from <target> within <ms> ms (<option>)[: <detail>]". */
  static describe(target: string, timeoutMs: number, option: string, detail: string | undefined): string {
    return `no reply from ${target} within ${timeoutMs} ms (${option})${detail === undefined ? "" : `: ${detail}`}`
  }
}

/** Whether a RedisError (or any failure) is a command timeout. */
export const isCommandTimeout = (e: { readonly cause?: unknown } | unknown): boolean =>
  e instanceof CommandTimeout ||
  (typeof e === "object" && e !== null && (e as { cause?: unknown }).cause instanceof CommandTimeout)

/**
 * The RedisError of operation `op` failing with `cause`. A timeout's message names the operation,
 * the server and the limit (never the command's arguments): "Command timed out: script enqueue got
 * no reply from redis://127.0.0.1:6379 within 5000 ms (commandTimeoutMs); it may still run on the server".
 */
export const redisError = (op: string, cause: unknown): RedisError =>
  new RedisError({
    op,
    message:
      cause instanceof CommandTimeout
        ? `Command timed out: ${op} got ${CommandTimeout.describe(cause.target, cause.timeoutMs, cause.option, cause.detail)}; it may still run on the server`
        : errorMessage(cause),
    cause
  })
