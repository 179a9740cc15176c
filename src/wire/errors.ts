import * as Data from "effect/Data"

/** Bytes in Redis that are not a message asynq could have written (TaskMessage, ServerInfo, …). */
export class MessageDecodeError extends Data.TaggedError("MessageDecodeError")<{
  readonly message: string
  readonly key?: string
}> {}
