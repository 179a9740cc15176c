/**
 * Waiting out a server that is still loading its dataset: after a restart (or a replica's full
 * sync) Redis answers data commands with `-LOADING …` until its data is in memory. The command did
 * not run, so it is sent again after a short backoff (50 ms doubling to 500 ms) until
 * `loadingTimeoutMs` has passed since the call's first LOADING answer; then the call fails with
 * that answer, reworded to say how long it waited. The transports (ioredis, the light RESP client)
 * use it around each call; it never resends a command that may have run.
 */
import { isErrorReply } from "./errors.js"

/** Whether a failure (or a raw reply) is Redis's LOADING answer. */
export const isLoadingReply = (e: unknown): boolean => isErrorReply(e) && (e as Error).message.startsWith("LOADING")

/** The final LOADING failure: still an error reply (named so, see isErrorReply), since nothing ran. */
class StillLoading extends Error {
  override readonly name = "ReplyError"
}

/** One call's wait: resolves after the next backoff, or rejects with the final error once the time is spent. */
export type LoadingWait = (answer: Error) => Promise<void>

const firstDelayMs = 50
const maxDelayMs = 500

/** Starts a call's wait for a server at `target`, given `budgetMs` (loadingTimeoutMs). */
export const loadingWaiter = (target: string, budgetMs: number) => (): LoadingWait => {
  const start = Date.now()
  let attempt = 0
  return (answer) => {
    const waited = Date.now() - start
    if (waited >= budgetMs)
      return Promise.reject(
        new StillLoading(
          `Redis at ${target} is still loading its dataset after ${waited} ms of retries (loadingTimeoutMs ${budgetMs}): ${answer.message}`
        )
      )
    const delay = Math.min(firstDelayMs * 2 ** attempt++, maxDelayMs, budgetMs - waited)
    return new Promise((resolve) => setTimeout(resolve, delay))
  }
}

/**
 * Runs `send` again while it fails with a LOADING answer, within the wait `start` begins (`wait`:
 * the one already started). A call that succeeds costs one rejection handler, nothing more.
 */
export const whileLoading = <A>(send: () => Promise<A>, start: () => LoadingWait, wait?: LoadingWait): Promise<A> =>
  send().catch((e: unknown) => {
    if (!isLoadingReply(e)) throw e
    const w = wait ?? start()
    return w(e as Error).then(() => whileLoading(send, start, w))
  })
