/**
 * A function's maintenance tick that stays up to forward on time: `stayForMs` (an adapter option)
 * becomes the tick's `forwardUntilMs`, measured from the start of the invocation on Effect's Clock
 * and ended `stayReserveMs` before the invocation's budget when one is known.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { type MaintenanceConfig, maintenanceTick } from "../../src/processor/maintenance.js"

/** The adapters' tick option: how long a tick stays up after its passes, forwarding on time. */
export interface TickStayOption {
  /**
   * After its passes, stay up this long (ms) and move each scheduled or retry task to pending on its
   * due millisecond instead of leaving it for the next tick (see `MaintenanceConfig.forwardUntilMs`).
   * Never past the invocation's time left, less a reserve to answer in. With a tick every minute and
   * a function timeout of 70 s, `stayForMs: 55_000` forwards without a gap. Default 0 (no stay).
   */
  readonly stayForMs?: number
}

/** Time kept back between the end of the stay and the end of the invocation's budget (for the last pass and the answer). */
export const stayReserveMs = 2000

/** The maintenance tick of an invocation with `budgetMs` to run in (unknown: the stay is as asked). */
export const tickWithStay = (config: MaintenanceConfig & TickStayOption, budgetMs?: number) => {
  const stayMs = Math.min(
    config.stayForMs ?? 0,
    budgetMs === undefined ? Number.POSITIVE_INFINITY : Math.max(0, budgetMs - stayReserveMs)
  )
  if (!(stayMs > 0)) return maintenanceTick(config)
  return Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
    maintenanceTick({ ...config, forwardUntilMs: nowMs + stayMs })
  )
}
