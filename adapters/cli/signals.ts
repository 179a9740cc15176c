/** Who handles SIGINT/SIGTERM: main interrupts the command, unless a command (the worker) drains on its own. */
let takenOver = false

/** The running command shuts down gracefully on signals itself; main must not interrupt it. */
export const takeOverSignals = (): void => {
  takenOver = true
}

export const signalsTakenOver = (): boolean => takenOver
