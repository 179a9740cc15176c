/**
 * asynq's uniqueness lock key (base.UniqueKey): `asynq:{<queue>}:unique:<type>:<md5 hex of payload>`.
 * A nil payload gives a key ending in `:`; an empty, non-nil payload gives the md5 of "" — only the
 * client can tell the two apart, so the key is always computed where the task is created.
 */
import { md5Hex } from "../hash/md5.js"

/** asynq's uniqueness-lock key: `asynq:{q}:unique:<type>:<md5 of the payload>` (no payload part when there is none). */
export const uniqueKey = (queue: string, type: string, payload: Uint8Array | undefined): string =>
  `asynq:{${queue}}:unique:${type}:${payload === undefined ? "" : md5Hex(payload)}`
