/**
 * What the queue steps need from Redis, whatever carries the commands (ioredis over TCP in
 * Redis.ts, HTTP in httpRedis.ts): script calls, one at a time or batched, and a plain
 * command. Nothing here names a client library or a Node API, so modules that depend only on these
 * types bundle for any runtime.
 */
import type { Effect } from "effect"
import type { RedisError } from "./errors.js"
import type { LuaName } from "./lua.generated.js"

/** A script argument: text, a number, or raw bytes (a Uint8Array, Buffers included, is sent as its bytes). */
export type ScriptArg = string | number | Uint8Array

/** One script call inside a pipelined batch. */
export interface ScriptCall {
  readonly script: LuaName
  readonly keys: ReadonlyArray<string>
  readonly args: ReadonlyArray<ScriptArg>
  /** Read this call's bulk replies as bytes (default: the batch's `buffers` option, else strings). */
  readonly buffers?: boolean
  /**
   * Also read, in one MULTI with the script, `SORT list BY nosort GET get` and `DEL list` (the
   * large-message lease: broker/leaseByIds.ts); the call's reply is then `[scriptReply,
   * sortReply]`, bytes, with SORT's own error answer in its place. Only on a transport that has
   * `scriptSorted`; elsewhere the call fails.
   */
  readonly sorted?: SortedRead
}

/** The read that goes with a script call in its MULTI (`ScriptCall.sorted`). */
export interface SortedRead {
  readonly list: string
  readonly get: string
}

/** Options of `scriptBatch`. */
export interface ScriptBatchOptions {
  /** Read bulk replies as bytes (a call's own `buffers` wins). */
  readonly buffers?: boolean
  /**
   * Called once the calls have been handed to the connection, before their replies (also when
   * sending failed). Calls handed to one connection reach Redis in that order, so a batch handed
   * over after this call runs after this one: the acknowledgement batcher relies on it
   * (processor/acker.ts). Over HTTP, where no worker runs, concurrent requests are not ordered.
   */
  readonly onSent?: () => void
}

/** A script call's outcome inside a batch: its reply, or the error Redis gave for that call alone. */
export type BatchReply =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: RedisError }

/** The transport-neutral part of the Redis service (see the module comment). */
export interface RedisTransport {
  readonly isCluster: boolean
  /** The address, secrets removed, for messages. */
  readonly target: string
  /** Runs a script from lua/ (EVALSHA, loading it on NOSCRIPT). Bulk replies come back as strings. */
  readonly script: (
    name: LuaName,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<ScriptArg>
  ) => Effect.Effect<unknown, RedisError>
  /** Same as `script`, bulk replies as bytes (for protobuf payloads). */
  readonly scriptBuffer: (
    name: LuaName,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<ScriptArg>
  ) => Effect.Effect<unknown, RedisError>
  /**
   * `script` (or with `buffers`, `scriptBuffer`) as a Promise that rejects with the RedisError: for
   * callers that run no Effect per call (the Promise client's enqueue).
   */
  readonly scriptPromise: (
    name: LuaName,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<ScriptArg>,
    buffers: boolean
  ) => Promise<unknown>
  /**
   * Sends many script calls in as few round trips as the transport allows, each call with its own
   * outcome (never fails as a whole); calls keep their order.
   */
  readonly scriptBatch: (
    calls: ReadonlyArray<ScriptCall>,
    opts?: ScriptBatchOptions
  ) => Effect.Effect<ReadonlyArray<BatchReply>>
  /**
   * Where the transport sends a MULTI in one round trip (a single node over ioredis; absent on a
   * Cluster, which denies SORT's GET option, and over HTTP): in one MULTI, the script (EVALSHA,
   * EVAL when it is not cached), then `SORT list BY nosort GET get` and `DEL list`. Bulk replies as
   * bytes. Resolves to the script's reply and SORT's, or the Error SORT answered (the script has
   * run: an ACL user without read access to every key may not use GET patterns). The lease scripts' ids mode writes the ids
   * into the list (src/broker/leaseByIds.ts), so large messages are read without Lua copying them.
   */
  readonly scriptSorted?: (
    name: LuaName,
    keys: ReadonlyArray<string>,
    args: ReadonlyArray<ScriptArg>,
    list: string,
    get: string
  ) => Effect.Effect<readonly [script: unknown, sorted: unknown], RedisError>
  /** One plain command (e.g. `["SMEMBERS", key]`), bulk replies as strings; `op` names it in errors. */
  readonly command: (op: string, args: ReadonlyArray<string | number>) => Effect.Effect<unknown, RedisError>
}
