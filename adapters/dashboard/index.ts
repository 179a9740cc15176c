/**
 * effect-asynq/dashboard: the web dashboard (pages, asynqmon-compatible JSON API, /metrics) as a
 * web-standard `(Request) => Promise<Response>` handler, and a Node server around it.
 */
export {
  createDashboardHandler,
  handleApiRequest,
  type DashboardConfig,
  type DashboardHandler,
  type DashboardOptions
} from "./handler.js"
export { serveDashboard, toNodeListener, type DashboardServer, type ServeDashboardOptions } from "./nodeServer.js"
