import * as Effect from "effect/Effect"
import { archiveCorruptScript, type CorruptSource } from "../broker/archiveCorrupt.js"
import { runScript } from "../broker/script.js"
import { decodeTaskMessage, type TaskMessage } from "../wire/TaskMessage.js"
import { queueKeys } from "../wire/keys.js"

/** A task that could not be handed out because its stored message is unusable. */
export interface CorruptTask {
  readonly queue: string
  readonly id: string
  /** Why, starting "asynq: task message is corrupt: ". */
  readonly error: string
  /** "archived": moved to the archive, bytes kept, reason in the hash field `error`; "dropped": the hash had no msg, the id was removed. */
  readonly outcome: "archived" | "dropped"
}

export const corruptPrefix = "asynq: task message is corrupt: "

/**
 * The message stored for `id` in `queue`, or why it is unusable: missing, not a TaskMessage, or
 * a message naming another id or queue (acting on it would touch the wrong keys).
 */
export const decodeStored = (
  queue: string,
  id: string,
  bytes: Uint8Array | undefined
): { msg: TaskMessage } | { error: string } => {
  const key = queueKeys(queue).task(id)
  if (bytes === undefined) return { error: `${corruptPrefix}task hash ${key} has no msg field` }
  let msg: TaskMessage
  try {
    msg = decodeTaskMessage(bytes, key)
  } catch (e) {
    return { error: corruptPrefix + (e instanceof Error ? e.message : String(e)) }
  }
  if (msg.id !== id) return { error: `${corruptPrefix}the message at ${key} has id "${msg.id}", not "${id}"` }
  if (msg.queue !== queue)
    return { error: `${corruptPrefix}the message at ${key} names queue "${msg.queue}", not "${queue}"` }
  return { msg }
}

/** Moves an unusable task out of `source` into the archive (or drops a dangling id) and describes it. */
export const setAsideCorrupt = (queue: string, id: string, error: string, source: CorruptSource, nowMs: number) =>
  Effect.map(runScript(archiveCorruptScript, { queue, id, error, source, nowMs }), (outcome) =>
    outcome === "absent" ? undefined : ({ queue, id, error, outcome } satisfies CorruptTask)
  )
