/**
 * The signed HTTP enqueue: one task per request signature. The task and the request's record are
 * written in one script (lua/enqueueSigned.lua), so a request sent again with the same signature
 * (a retry after a lost reply, or a replay) writes nothing and gets the first call's answer.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { Broker } from "../broker/Broker.js"
import { InvalidArgument } from "../broker/errors.js"
import { type SignedOutcome, writeSignedTask } from "../broker/claimSignature.js"
import { currentTraceHeaders } from "./traceContext.js"
import type { TaskInfo } from "./taskInfo.js"
import { type EnqueueError, prepareEnqueue } from "./enqueue.js"
import type { EnqueueOptions } from "./options.js"

/** The request's signature (its HMAC hex digest) and how long it stays valid from now. */
export interface RequestSignature {
  readonly signatureHex: string
  readonly validForMs: number
}

/** What a signed enqueue did, and the task this call prepared (written only when `replayed` is false). */
export interface SignedEnqueue extends SignedOutcome {
  readonly prepared: TaskInfo
}

/**
 * Enqueues the task of a signed request once per signature. `render` turns the new task's TaskInfo
 * into the answer to give (recorded, and returned as is to a replay). A replay of a refused request
 * is refused the same way (DuplicateTask / TaskIdConflict).
 */
export const enqueueSigned = Effect.fn("Steps.enqueueSigned")(function* (
  type: string,
  payload: unknown,
  options: EnqueueOptions | undefined,
  signature: RequestSignature,
  render: (info: TaskInfo) => string
): Effect.fn.Return<SignedEnqueue, EnqueueError, Broker> {
  const nowMs = yield* Clock.currentTimeMillis
  const prepared = yield* Effect.fromResult(prepareEnqueue(type, payload, options, nowMs, yield* currentTraceHeaders))
  const target = prepared.write.target
  if (target.state === "keyed")
    return yield* new InvalidArgument({
      field: "limitKey",
      message: "limitKey is not available on the signed HTTP enqueue; enqueue with a client instead"
    })
  const info = prepared.info(target.state)
  const outcome = yield* writeSignedTask({
    signatureHex: signature.signatureHex,
    recordTtlMs: signature.validForMs,
    write: prepared.write,
    answer: render(info)
  })
  return { ...outcome, prepared: info }
})
