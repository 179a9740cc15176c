/**
 * Request signatures of the HTTP endpoints: claiming one (the drain function refuses a replay),
 * and the signed enqueue, where the claim and the task write are one script (lua/enqueueSigned.lua)
 * and a replay is answered with the first call's recorded answer.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { queueKeys, signedRequestKey, usedSignatureKey } from "../wire/keys.js"
import { encodeTaskMessage } from "../wire/TaskMessage.js"
import { enqueueSignedLua } from "../redis/lua.generated.js"
import { bytesArg } from "./args.js"
import { Broker } from "./Broker.js"
import { unexpectedReply } from "./decode.js"
import { registerQueueScript, type TaskWrite } from "./enqueue.js"
import type { DuplicateTask, TaskIdConflict } from "./errors.js"
import { codeError } from "./replyCodes.js"
import { bindScript, defineScript, runScripts } from "./script.js"
import { unixNanosString, unixSeconds } from "./time.js"

/**
 * Marks a request signature as used until `ttlMs` from now (SET NX PX, one key: Cluster-safe).
 * Returns true when this call claimed it, false when it was already used (a replay).
 */
export const claimSignature = Effect.fn("Broker.claimSignature")(function* (signatureHex: string, ttlMs: number) {
  const { redis } = yield* Broker
  // A plain command (not ioredis's `set`): it runs over every transport, the light one included.
  const reply = yield* redis.command("claim request signature", [
    "SET",
    usedSignatureKey(signatureHex),
    "1",
    "PX",
    Math.max(1, Math.ceil(ttlMs)),
    "NX"
  ])
  return reply === "OK"
})

/** One signed enqueue: the request's signature, how long to remember it, the task, and the answer to record. */
export interface SignedWrite {
  readonly signatureHex: string
  readonly recordTtlMs: number
  readonly write: TaskWrite
  /** The answer the endpoint gives when the task is written (recorded, returned to replays). */
  readonly answer: string
}

/** What a signed enqueue did: written now, or a replay answered with the first call's answer. */
export interface SignedOutcome {
  readonly answer: string
  /** True when the signature had been used: nothing was written, `answer` is the recorded one. */
  readonly replayed: boolean
}

const refusal = (code: number, w: SignedWrite) => codeError("enqueue", code, { msg: w.write.msg })

/** Script `enqueueSigned`: the request's record and its task, in one step. */
export const enqueueSignedScript = defineScript<SignedWrite, SignedOutcome, DuplicateTask | TaskIdConflict>({
  name: "enqueueSigned",
  source: enqueueSignedLua,
  buffers: false,
  keys: ({ signatureHex, write: w }) => {
    const k = queueKeys(w.msg.queue)
    const t = w.target
    const target = t.state === "scheduled" ? k.scheduled : t.state === "aggregating" ? k.group(t.group) : k.pending
    const keys = [signedRequestKey(w.msg.queue, signatureHex), k.taskPrefix, target, k.allGroups]
    if (w.uniqueLockTtlMs !== undefined) keys.push(w.msg.uniqueKey)
    return keys
  },
  args: ({ recordTtlMs, answer, write: w }) => {
    const t = w.target
    return [
      Math.max(1, Math.ceil(recordTtlMs)),
      answer,
      w.msg.id,
      bytesArg(encodeTaskMessage(w.msg)),
      t.state,
      t.state === "scheduled"
        ? unixSeconds(t.processAtMs)
        : t.state === "aggregating"
          ? unixSeconds(w.nowMs)
          : unixNanosString(w.nowMs),
      t.state === "aggregating" ? t.group : "",
      w.msg.queue,
      w.uniqueLockTtlMs === undefined ? 0 : Math.max(1, Math.ceil(w.uniqueLockTtlMs))
    ]
  },
  decode: (v, w) => {
    if (!Array.isArray(v) || v.length !== 2) return Result.fail(unexpectedReply("enqueueSigned", v, "[code, recorded]"))
    const code = Number(v[0])
    const recorded = String(v[1])
    const refused = code === 2 && recorded.startsWith("refused:") ? Number(recorded.slice("refused:".length)) : code
    if (refused === 0 || refused === -1) return Result.fail(refusal(refused, w)!)
    if (code === 1) return Result.succeed({ answer: w.answer, replayed: false })
    if (code === 2) return Result.succeed({ answer: recorded, replayed: true })
    return Result.fail(unexpectedReply("enqueueSigned", v, "[code, recorded] with code 1, 2, 0 or -1"))
  }
})

/**
 * Writes the task of a signed request once per signature: the first call writes it and records
 * `answer`; a replay (the same signature within its window, e.g. a resend after a lost reply)
 * writes nothing and gets the recorded answer, or the recorded refusal (DuplicateTask /
 * TaskIdConflict). The queue's registration in `asynq:queues` rides in the same round trip while
 * it is not known to be done.
 */
export const writeSignedTask = Effect.fn("Broker.writeSignedTask")(function* (signed: SignedWrite) {
  const { knownQueues } = yield* Broker
  const queue = signed.write.msg.queue
  const register = !knownQueues.has(queue, signed.write.nowMs)
  const bound = bindScript(enqueueSignedScript, signed)
  if (!register) return yield* Effect.fromResult((yield* runScripts([bound]))[0])
  const [registered, written] = yield* runScripts([bindScript(registerQueueScript, queue), bound])
  if (Result.isSuccess(registered)) knownQueues.add(queue, signed.write.nowMs)
  return yield* Effect.fromResult(written)
})
