/**
 * asynq's Redis key names (internal/base in Go). Every per-queue key carries the queue name in
 * braces, `asynq:{<queue>}:…`, so that all keys of one queue hash to one Redis Cluster slot.
 */

export const allServers = "asynq:servers"
/** The key of the set of every server's workers hash (`asynq:workers`). */
export const allWorkers = "asynq:workers"
/** The key of the set of running schedulers (`asynq:schedulers`). */
export const allSchedulers = "asynq:schedulers"
/** The key of the set of every queue's name (`asynq:queues`). */
export const allQueues = "asynq:queues"
/** The pub/sub channel of cancel requests (`asynq:cancel`; the message is a task id). */
export const cancelChannel = "asynq:cancel"
/**
 * Not asynq's: the pub/sub channel on which enqueue publishes a queue's name when its pending list
 * goes from empty to non-empty, so idle effect-asynq workers wake at once (lua/enqueue.lua).
 */
export const wakeChannel = "effect-asynq:wake"
/**
 * Not asynq's: the pub/sub channel on which a write of a scheduled or retry task that became the
 * earliest due task of its queue publishes `<due unix ms> <queue>`, so effect-asynq forwarders that
 * planned to look later wake up for it (lua/includes/delayTask.lua).
 */
export const forwardChannel = "effect-asynq:forward"
/**
 * Not asynq's: the pub/sub channel an effect-asynq worker (its server id) listens on while it can be
 * handed tasks; nothing is published on it. An enqueue hands a task to a parked worker only when
 * this channel has a subscriber (lua/includes/pushToParked.lua), so a worker that died (its
 * connections closed) is skipped at once. Workers of earlier versions listened on
 * `effect-asynq:park:<server id>`, and took hand-overs published on `effect-asynq:push:<server id>`;
 * today's workers listen on neither, so a client of an earlier version, which cannot tell a stalled
 * worker from a live one, never hands them a task (it writes it as pending).
 */
export const parkedPresenceChannel = (serverId: string) => `effect-asynq:parked:${serverId}`
/**
 * Not asynq's: marks an HMAC request signature (its hex digest) as used, until the end of its
 * validity window, so the HTTP endpoints refuse a replayed request. One key per signature.
 */
export const usedSignatureKey = (signatureHex: string) => `effect-asynq:used-signature:${signatureHex}`
/**
 * Not asynq's: the record of a signed HTTP enqueue request (its HMAC hex digest) in the queue's
 * slot: the answer given (or the refusal), until the end of the signature's validity window, so a
 * replay of the request gets the original answer and writes nothing (lua/enqueueSigned.lua).
 */
export const signedRequestKey = (queue: string, signatureHex: string) => `asynq:{${queue}}:signed:${signatureHex}`

/** The key of a server's ServerInfo (`asynq:servers:{host:pid:id}`). */
export const serverInfoKey = (host: string, pid: number, serverId: string) =>
  `asynq:servers:{${host}:${pid}:${serverId}}`
/** The key of a server's active workers hash (`asynq:workers:{host:pid:id}`). */
export const workersKey = (host: string, pid: number, serverId: string) => `asynq:workers:{${host}:${pid}:${serverId}}`
/** The key of a scheduler's published entries (`asynq:schedulers:{id}`). */
export const schedulerEntriesKey = (schedulerId: string) => `asynq:schedulers:{${schedulerId}}`
/** The key of an entry's enqueue history (`asynq:scheduler_history:<entry id>`). */
export const schedulerHistoryKey = (entryId: string) => `asynq:scheduler_history:${entryId}`

/** `YYYY-MM-DD` of a unix-ms time, in UTC (asynq names daily stat keys by the UTC date). */
let dayStartMs = 0
let dayText = "1970-01-01"
/** The UTC date of a unix time, "YYYY-MM-DD" (asynq's daily stats keys); the current day is remembered, as every completion asks for it. */
export const utcDate = (unixMs: number): string => {
  if (unixMs >= dayStartMs && unixMs < dayStartMs + 86_400_000) return dayText
  const text = new Date(unixMs).toISOString().slice(0, 10)
  if (!Number.isFinite(unixMs)) return text
  dayStartMs = unixMs - (((unixMs % 86_400_000) + 86_400_000) % 86_400_000)
  dayText = text
  return text
}

/** All key names of one queue. */
export interface QueueKeys {
  readonly queue: string
  readonly prefix: string
  readonly taskPrefix: string
  readonly pending: string
  readonly active: string
  readonly scheduled: string
  readonly retry: string
  readonly archived: string
  readonly lease: string
  readonly completed: string
  readonly paused: string
  /**
   * Not asynq's: park tokens of idle effect-asynq workers (a hash: server id -> token), left by a
   * dequeue that came back short, taken by the enqueue that hands a new task to that worker.
   */
  readonly parked: string
  /**
   * Not asynq's: how many more tasks each parked worker may be handed under its token (a hash:
   * server id -> count), written with the token; the enqueue that hands over the last one removes both.
   */
  readonly parkRoom: string
  /**
   * Not asynq's: the list on which an enqueue hands a task to the parked worker `serverId` (it waits
   * on it with BLPOP); short-lived, it expires a minute after the hand-over's lease.
   */
  readonly pushList: (serverId: string) => string
  /**
   * Not asynq's: the exact due time (unix ms) of scheduled and retry tasks that effect-asynq wrote
   * with a sub-second part (a zset: task id -> unix ms). asynq's zsets hold whole seconds (its
   * Inspector reads a score as an integer), rounded up; the forwarder reads this one to move such a
   * task on the millisecond (lua/includes/delayTask.lua, lua/forward.lua).
   */
  readonly dueMs: string
  /**
   * Not asynq's: the queue's flow-control limit (a hash; absent for an unlimited queue): a rate
   * (`interval_ms` between tasks, `burst`, and the `limit` / `per_ms` it was given as), a
   * `concurrency` cap, and the rate's state `tat` (GCRA's theoretical arrival time, unix ms).
   * Read by the lease scripts (lua/includes/flowLimit.lua); written by lua/setQueueLimit.lua.
   */
  readonly flow: string
  /**
   * Not asynq's: the ring of limit keys with waiting tasks (a zset: key -> unix ms when it is next
   * worth a look). Read by the lease scripts (lua/includes/keyLimits.lua).
   */
  readonly limitKeys: string
  /** Not asynq's: a limit key's waiting task ids (a list; lua/includes/writeKeyedTask.lua, lua/includes/keyLimits.lua). */
  readonly limitKeyList: (key: string) => string
  /** Not asynq's: a limit key's leased task ids (a set; lua/includes/keyLimits.lua, lua/releaseLimitKey.lua). */
  readonly limitKeyActive: (key: string) => string
  /** Not asynq's: a limit key's rate state (a string, GCRA's TAT, expiring once spent; lua/includes/keyLimits.lua). */
  readonly limitKeyRate: (key: string) => string
  /**
   * Not asynq's: the index of the queue's per-key keys (a set: `l:<limit key>` for a key that may
   * have a list, a leased set or a rate state; `k:<keep-last key>` for a keep-last key), so that
   * deleting the queue finds them without a scan (lua/inspector_deleteQueue.lua).
   */
  readonly keyIndex: string
  /**
   * Not asynq's: a throttle key (a string: the id of the task it let through in its window; it
   * expires with the window). Written by lua/enqueueThrottled.lua.
   */
  readonly throttle: (key: string) => string
  /**
   * Not asynq's: a debounce key (a string: the id of the key's latest scheduled task). Written by
   * lua/enqueueDebounced.lua.
   */
  readonly debounce: (key: string) => string
  /**
   * Not asynq's: a keep-last key (a hash: `current`, the id of the key's task released to run;
   * `waiting`, the id of its one waiting scheduled task). Written by lua/enqueueKeepLast.lua and
   * lua/keepLastRelease.lua.
   */
  readonly keepLast: (key: string) => string
  /**
   * Not asynq's: the hand-overs not yet confirmed by their worker (a zset: member
   * `<token>\n<byte length of server id>\n<server id><task id>`, score: when it goes back to
   * pending unless confirmed, unix ms). See lua/confirmHandovers.lua and lua/reclaimHandovers.lua.
   */
  readonly handover: string
  /**
   * Not asynq's: the liveness mark of the effect-asynq worker `serverId` (a string key with a
   * 3 s expiry the worker renews every second from its own event loop): enqueues hand it tasks only
   * while the mark exists.
   */
  readonly alive: (serverId: string) => string
  readonly processedTotal: string
  readonly failedTotal: string
  readonly groupPrefix: string
  readonly allGroups: string
  readonly allAggregationSets: string
  /** The hash of one task (`asynq:{q}:t:<id>`). */
  readonly task: (id: string) => string
  /** The processed counter of the UTC day of this time. */
  readonly processed: (unixMs: number) => string
  /** The failed counter of the UTC day of this time. */
  readonly failed: (unixMs: number) => string
  /** The zset of an aggregation group's tasks. */
  readonly group: (group: string) => string
  /** The zset of one aggregation set of a group. */
  readonly aggregationSet: (group: string, setId: string) => string
  readonly uniquePrefix: string
}

const cache = new Map<string, QueueKeys>()

/** Every key name of one queue, as asynq names them (all in the queue's `{q}` cluster slot). */
export const queueKeys = (queue: string): QueueKeys => {
  let k = cache.get(queue)
  if (k) return k
  const prefix = `asynq:{${queue}}:`
  k = {
    queue,
    prefix,
    taskPrefix: `${prefix}t:`,
    pending: `${prefix}pending`,
    active: `${prefix}active`,
    scheduled: `${prefix}scheduled`,
    retry: `${prefix}retry`,
    archived: `${prefix}archived`,
    lease: `${prefix}lease`,
    completed: `${prefix}completed`,
    paused: `${prefix}paused`,
    parked: `${prefix}parked`,
    parkRoom: `${prefix}parkroom`,
    pushList: (serverId) => `${prefix}push:${serverId}`,
    dueMs: `${prefix}due_ms`,
    flow: `${prefix}flow`,
    limitKeys: `${prefix}lkeys`,
    limitKeyList: (key) => `${prefix}lk:${key}`,
    limitKeyActive: (key) => `${prefix}lka:${key}`,
    limitKeyRate: (key) => `${prefix}lkt:${key}`,
    keyIndex: `${prefix}keyindex`,
    throttle: (key) => `${prefix}throttle:${key}`,
    debounce: (key) => `${prefix}debounce:${key}`,
    keepLast: (key) => `${prefix}keeplast:${key}`,
    handover: `${prefix}handover`,
    alive: (serverId) => `${prefix}alive:${serverId}`,
    processedTotal: `${prefix}processed`,
    failedTotal: `${prefix}failed`,
    groupPrefix: `${prefix}g:`,
    allGroups: `${prefix}groups`,
    allAggregationSets: `${prefix}aggregation_sets`,
    uniquePrefix: `${prefix}unique:`,
    task: (id) => `${prefix}t:${id}`,
    processed: (ms) => `${prefix}processed:${utcDate(ms)}`,
    failed: (ms) => `${prefix}failed:${utcDate(ms)}`,
    group: (g) => `${prefix}g:${g}`,
    aggregationSet: (g, setId) => `${prefix}g:${g}:${setId}`
  }
  if (cache.size < 10_000) cache.set(queue, k)
  return k
}

/** asynq's TaskState names, as stored in the task hash's `state` field. */
export type TaskState = "pending" | "active" | "scheduled" | "retry" | "archived" | "completed" | "aggregating"
/** Every task state, in asynq's order. */
export const taskStates: ReadonlyArray<TaskState> = [
  "active",
  "pending",
  "aggregating",
  "scheduled",
  "retry",
  "archived",
  "completed"
]

/**
 * Not asynq's: the header a task's limit key travels in (the worker that runs the task reads it to
 * give the key its place back when the task ends, lua/releaseLimitKey.lua, and to give a task it
 * hands back to its key, lua/requeue.lua).
 */
export const limitKeyHeader = "effect-asynq-limit-key"
