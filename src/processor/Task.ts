/** The task object a handler receives: the message's fields as plain accessors, payload helpers, a result writer. */
import { payloadJson, payloadText } from "../wire/payload.js"
import type { TaskMessage } from "../wire/TaskMessage.js"

/** Stores a task's result (hash field `result`, kept with the task when it has a retention). */
export interface ResultWriter {
  readonly taskId: string
  /** Writes bytes, a string (UTF-8) or a JSON value; resolves to the number of bytes written. */
  readonly write: (data: unknown) => Promise<number>
}

/** The task a handler gets: its id, type, payload, headers, queue, retry counts, deadline and result writer. */
export interface Task {
  readonly id: string
  readonly type: string
  /** The payload bytes (`undefined` when the task has none). */
  readonly payload: Uint8Array | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly queue: string
  /** How many times the task was retried before this attempt. */
  readonly retryCount: number
  /** How many retries the task may have in total. */
  readonly maxRetry: number
  /** When this attempt's time is up (timeout from the start of the attempt, or the task's deadline). */
  readonly deadline: Date
  /** The payload as UTF-8 text ("" when none). Throws PayloadDecodeError on invalid UTF-8. */
  readonly text: () => string
  /** The payload parsed as JSON (`undefined` when none). Throws PayloadDecodeError when it is not JSON. */
  readonly json: <A = unknown>() => A
  readonly resultWriter: ResultWriter
  /** The message as stored in Redis (asynq's TaskMessage). */
  readonly message: TaskMessage
}

/** Builds the handler's view of a leased task message. */
export const makeTask = (msg: TaskMessage, deadline: Date, resultWriter: ResultWriter): Task => ({
  id: msg.id,
  type: msg.type,
  payload: msg.payload,
  headers: msg.headers,
  queue: msg.queue,
  retryCount: msg.retried,
  maxRetry: msg.retry,
  deadline,
  text: () => payloadText(msg.payload),
  json: <A = unknown>() => payloadJson<A>(msg.payload),
  resultWriter,
  message: msg
})
