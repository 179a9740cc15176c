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
