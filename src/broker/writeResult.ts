import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { queueKeys } from "../wire/keys.js"
import { bytesArg } from "./args.js"
import { integerReply, unexpectedReply } from "./decode.js"
import type { TaskNotFound } from "./errors.js"
import { codeError } from "./replyCodes.js"
import { defineScript, runScript } from "./script.js"
import { writeResultLua } from "../redis/lua.generated.js"

/** Which task's result to write, and the bytes. */
export interface WriteResultOptions {
  readonly queue: string
  readonly id: string
  readonly result: Uint8Array
}

/** Script `writeResult`: stores result bytes in the task hash; returns the byte count. TaskNotFound when the task does not exist. */
export const writeResultScript = defineScript<WriteResultOptions, number, TaskNotFound>({
  name: "writeResult",
  source: writeResultLua,
  buffers: false,
  keys: ({ queue, id }) => [queueKeys(queue).task(id)],
  args: ({ result }) => [bytesArg(result)],
  decode: (reply, i) =>
    Result.flatMap(integerReply("writeResult", reply), (n) =>
      n >= 0
        ? Result.succeed(n)
        : Result.fail(codeError("writeResult", n, i) ?? unexpectedReply("writeResult", n, "a byte count or -1"))
    )
})

/** Stores a task's result (hash field `result`, kept with a retained completed task). Returns the byte count. */
export const writeResult = Effect.fn("Steps.writeResult")(function* (options: WriteResultOptions) {
  return yield* runScript(writeResultScript, options)
})
