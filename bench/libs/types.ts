/**
 * "floor" is no library: the round trip itself, on a raw socket (bench/libs/roundTripFloor.ts), a
 * reference for the scenarios that are one round trip per task; it has no target.
 *
 * The interface every benchmarked library is driven through. One adapter per library
 * (bench/libs/<lib>.ts) maps it onto that library's recommended API, so the scenarios in
 * bench/scenarios.ts are the same code for all of them.
 */
export const libNames = ["effect-asynq", "bullmq", "bee-queue", "floor"] as const
export type LibName = (typeof libNames)[number]

/**
 * The task payload: a sequence number and the producer's clock (ms, performance.now) or 0; in the
 * payload-size scenarios also `s`, a string of the scenario's size (1 KB, 10 KB, 100 KB), which the
 * handler reads.
 */
export interface Payload {
  readonly n: number
  readonly t: number
  readonly s?: string
}

/** A no-op-ish handler: receives the payload the library decoded; must not throw. */
export type Handler = (payload: Payload) => void

export interface WorkerHandle {
  /** Stops fetching and resolves once in-flight tasks are acknowledged and connections closed. */
  readonly stop: () => Promise<void>
}

/** What the "scheduled lateness" scenario asks of a worker besides `startWorker`'s. */
export interface DelayedWorkerOptions {
  /**
   * The retry delay of a failed attempt (ms). The handler throws on a task's first attempt when
   * the scenario wants a retry; the library runs it again after this delay.
   */
  readonly retryDelayMs: number
}

/** A handler that may throw (the attempt fails and the library retries it). */
export type FailingHandler = (payload: Payload, attempt: number) => void

/**
 * The steps of the "workflow3" scenario: three steps, step i of flow n returning n + i; the flow's
 * last piece of user code sees all three results (`flowValue`).
 */
export const flowSteps = [1, 2, 3] as const

/** What flow `n`'s last piece of user code must see: the sum of its three steps' results. */
export const flowValue = (n: number): number => flowSteps.reduce((sum, i) => sum + n + i, 0)

/**
 * A library's workflows for the "workflow3" scenario: a flow of three steps whose results are
 * handed to a final piece of user code (effect-asynq: a durable workflow of three activities;
 * BullMQ: a FlowProducer parent with three children, completed when its children did).
 */
export interface FlowRunner {
  /** How the flows are configured (for the report). */
  readonly settings: string
  /**
   * Starts processing flows with `concurrency` in flight; `onDone(n, value)` is called by flow n's
   * final code with the value it computed from its steps' results. Resolves once started.
   */
  readonly startWorker: (concurrency: number, onDone: (n: number, value: number) => void) => Promise<WorkerHandle>
  /** Starts flow `n` (one API call, one flow); needs a started worker in this process for effect-asynq. */
  readonly addFlow: (n: number) => Promise<void>
  /** Closes the producer side. */
  readonly close: () => Promise<void>
}

export interface LibAdapter {
  readonly name: LibName
  /** How the library is configured here, for the report (fairness is checked by reading this). */
  readonly settings: string
  /** Enqueues one task (one API call, one task). */
  readonly enqueueOne: (payload: Payload) => Promise<void>
  /** Enqueues a batch through the library's bulk API. */
  readonly enqueueBulk: (payloads: ReadonlyArray<Payload>) => Promise<void>
  /** Starts processing the queue with `concurrency` handlers in flight; resolves once started. */
  readonly startWorker: (concurrency: number, handler: Handler) => Promise<WorkerHandle>
  /** Enqueues one task due `delayMs` from now (the library's delayed/scheduled task). */
  readonly enqueueDelayed?: (payload: Payload, delayMs: number) => Promise<void>
  /** Enqueues delayed tasks through the library's bulk API. */
  readonly enqueueDelayedBulk?: (payloads: ReadonlyArray<Payload>, delayMs: number) => Promise<void>
  /** Enqueues one task that is retried once after a failed attempt, `retryDelayMs` later (job options where the library takes them there). */
  readonly enqueueRetried?: (payload: Payload, retryDelayMs: number) => Promise<void>
  /** Starts a worker that also runs delayed tasks and retries, with `options.retryDelayMs`; attempts count from 0. */
  readonly startDelayedWorker?: (
    concurrency: number,
    handler: FailingHandler,
    options: DelayedWorkerOptions
  ) => Promise<WorkerHandle>
  /** Tasks ready to run and not taken by a worker yet (the library's waiting/pending count). */
  readonly readyCount?: () => Promise<number>
  /** The "workflow3" scenario's flows (libraries with workflows or flows only). */
  readonly flows?: () => Promise<FlowRunner>
  /** Closes the producer side. */
  readonly close: () => Promise<void>
}

export interface AdapterConfig {
  readonly redisUrl: string
  readonly queue: string
}

export type AdapterFactory = (config: AdapterConfig) => Promise<LibAdapter>

/** Raised by an adapter for a capability that does not exist yet (reported as "pending"). */
export class NotAvailable extends Error {
  override readonly name = "NotAvailable"
}
