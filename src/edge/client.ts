/**
 * The edge client (`effect-asynq/edge`): enqueue from any runtime with `fetch`, over a Redis that
 * speaks HTTP (Upstash's REST protocol). Same options, errors and wire format as the TCP client
 * of `effect-asynq/client`: a Go asynq server processes what it writes.
 *
 *   const client = createClient({ url: env.UPSTASH_REDIS_REST_URL, token: env.UPSTASH_REDIS_REST_TOKEN })
 *   const info = await client.enqueue("email:deliver", { userId: 42 }, { queue: "critical" })
 *
 * Nothing to close: every call is one HTTP request (the first call of a script sends its source,
 * later calls its SHA). Failures reject with the typed error objects (`_tag`, `message`).
 */
import * as Result from "effect/Result"
import { type EnqueueError, type EnqueueItem, enqueueManyUntraced, enqueueUntraced } from "../steps/enqueue.js"
import type { EnqueueOptions } from "../steps/options.js"
import type { TaskInfo } from "../steps/taskInfo.js"
import type { TaskDefinition } from "../steps/TaskDefinition.js"
import { boundedEdgeRunner } from "./context.js"
import type { HttpRedisOptions } from "../redis/httpRedis.js"
import { enqueueScripts } from "./scripts.js"

/** One item's outcome in `enqueueMany`. */
export type EnqueueOutcome =
  | { readonly ok: true; readonly info: TaskInfo }
  | { readonly ok: false; readonly error: EnqueueError }

export interface EdgeClient {
  /**
   * Enqueues one task. Rejects with InvalidArgument, DuplicateTask, TaskIdConflict, RedisError or
   * RedisConnectionError (unusable url/token); within `timeoutMs` (default 10000 ms), resends included.
   */
  enqueue(type: string, payload?: unknown, options?: EnqueueOptions): Promise<TaskInfo>
  /** Enqueues one task of a definition (defineTask): the payload is type-checked and validated (InvalidArgument `payload`, nothing written); the definition's options are the defaults. */
  enqueue<A>(task: TaskDefinition<A>, payload: A, options?: EnqueueOptions): Promise<TaskInfo>
  /** Enqueues many tasks in one HTTP request; each item gets its own outcome, in input order. */
  enqueueMany(items: ReadonlyArray<EnqueueItem>): Promise<ReadonlyArray<EnqueueOutcome>>
}

/** A client over the REST endpoint `url` with `token` (e.g. Upstash's UPSTASH_REDIS_REST_URL / _TOKEN). */
export const createClient = (options: HttpRedisOptions): EdgeClient => {
  const run = boundedEdgeRunner(options, enqueueScripts)
  return {
    enqueue: (type: string | TaskDefinition<any>, payload?: unknown, opts?: EnqueueOptions) =>
      run("enqueue", enqueueUntraced(type, payload, opts)),
    enqueueMany: (items) =>
      run("enqueueMany", enqueueManyUntraced(items)).then((rs) =>
        rs.map(
          (r): EnqueueOutcome => (Result.isSuccess(r) ? { ok: true, info: r.success } : { ok: false, error: r.failure })
        )
      )
  }
}
