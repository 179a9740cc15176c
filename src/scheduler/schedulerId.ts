/** A scheduler instance id as asynq makes them: `host:pid:uuid` (Node only: the long-lived scheduler). */
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"

/** A scheduler id as asynq makes one: `<hostname>:<pid>:<uuid>`. */
export const newSchedulerId = (): string => `${hostname()}:${process.pid}:${randomUUID()}`
