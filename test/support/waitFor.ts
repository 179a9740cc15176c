/**
 * The one way tests wait for something that happens in the background (another fiber, another
 * process, Redis pub/sub): read a value again and again until it is what the test needs, with a
 * time limit. On time-out it fails with what it waited for and the value it read last, so a
 * failure says how far things got. Reads happen every 10 ms of real time, also inside a test on
 * TestClock (the wait is on the real clock: the background work it waits for does real I/O).
 */
import { Effect } from "effect"

export interface WaitForOptions {
  /** Give up after this long (real time; default 10 s). */
  readonly timeoutMs?: number | undefined
}

const describe = (value: unknown): string => {
  if (value instanceof Error) return `${value.name}: ${value.message}`
  try {
    const json = JSON.stringify(value)
    return json === undefined ? String(value) : json.length > 500 ? `${json.slice(0, 500)}…` : json
  } catch {
    return String(value)
  }
}

/**
 * Reads `read()` until `ok(value)` holds (default: the value is truthy) and returns that value.
 * Fails after `timeoutMs` with "timed out after N ms waiting for <what>; last seen: <value>" (or
 * the error the last read threw).
 */
export const waitFor = async <A>(
  what: string,
  read: () => A | PromiseLike<A>,
  ok: (value: A) => boolean = Boolean,
  options: WaitForOptions = {}
): Promise<A> => {
  const timeoutMs = options.timeoutMs ?? 10_000
  const deadline = performance.now() + timeoutMs
  for (;;) {
    let seen: string
    try {
      const value = await read()
      if (ok(value)) return value
      seen = describe(value)
    } catch (e) {
      seen = `the read failed: ${describe(e)}`
    }
    if (performance.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${seen}`)
    await new Promise((r) => setTimeout(r, 10))
  }
}

/**
 * `waitFor` for Effect code: `read` is an Effect run with the caller's services (e.g. the Broker),
 * and the waiting is on the real clock even under TestClock.
 */
export const waitForEffect = <A, E, R>(
  what: string,
  read: Effect.Effect<A, E, R>,
  ok: (value: A) => boolean = Boolean,
  options: WaitForOptions = {}
): Effect.Effect<A, never, R> =>
  Effect.flatMap(Effect.context<R>(), (context) =>
    Effect.promise(() => waitFor(what, () => Effect.runPromise(Effect.provideContext(read, context)), ok, options))
  )
