/**
 * The dashboard's browser script, served at /assets/app.js: a small hash router rendering each
 * view from the JSON API with plain DOM calls (text goes in as text, never as HTML).
 */
export const appJs = String.raw`
"use strict";
(function () {
  var config = JSON.parse(document.getElementById("dash-config").textContent);
  var base = config.basePath;
  var main = document.getElementById("main");
  var nav = document.getElementById("nav");
  var STATES = ["active", "pending", "aggregating", "scheduled", "retry", "archived", "completed"];
  var READ_ONLY_TITLE = "read-only: start the dashboard with --allow-actions to do this";

  function el(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      var v = attrs[k];
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") node.textContent = String(v);
      else if (k === "onclick") node.addEventListener("click", v);
      else if (k === "className") node.className = v;
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    function add(c) {
      if (c === undefined || c === null || c === false) return;
      if (Array.isArray(c)) c.forEach(add);
      else node.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    for (var i = 2; i < arguments.length; i++) add(arguments[i]);
    return node;
  }
  function enc(s) { return encodeURIComponent(s); }
  function link(href, text, attrs) { var a = el("a", attrs || {}, text); a.setAttribute("href", href); return a; }
  function fmtBytes(n) {
    if (n < 1000) return n + " B";
    var units = ["kB", "MB", "GB", "TB"], i = -1;
    do { n = n / 1000; i++; } while (n >= 1000 && i < units.length - 1);
    return n.toFixed(1) + " " + units[i];
  }
  function fmtTime(s) { return s ? s.replace("T", " ").replace("Z", " UTC") : "—"; }
  function card(label, value, testid) {
    return el("div", { className: "card" }, el("div", { className: "label", text: label }), el("div", { className: "value", text: value, "data-testid": testid }));
  }
  function notice(text, isError) { return el("div", { className: "notice" + (isError ? " error" : ""), role: isError ? "alert" : "status", text: text }); }

  function api(method, path, body) {
    var opts = { method: method, headers: { accept: "application/json" }, credentials: "same-origin" };
    if (body !== undefined) { opts.headers["content-type"] = "application/json"; opts.body = JSON.stringify(body); }
    return fetch(base + path, opts).then(function (res) {
      if (res.status === 204) return {};
      return res.text().then(function (text) {
        var data = null;
        try { data = text ? JSON.parse(text) : {}; } catch (e) { data = { error: { message: text } }; }
        if (!res.ok) {
          var err = new Error((data && data.error && data.error.message) || ("HTTP " + res.status));
          err.status = res.status; err.code = data && data.error && data.error.code;
          throw err;
        }
        return data;
      });
    });
  }

  /** An action button: disabled (with the reason) on a read-only dashboard. */
  function actionButton(label, onRun, opts) {
    opts = opts || {};
    var b = el("button", { className: opts.danger ? "danger" : "", "data-action": opts.name || label, title: config.allowActions ? (opts.title || label) : READ_ONLY_TITLE, text: label });
    if (!config.allowActions) b.disabled = true;
    b.addEventListener("click", function () {
      if (opts.confirm && !window.confirm(opts.confirm)) return;
      b.disabled = true;
      Promise.resolve().then(onRun).then(function (msg) {
        flash(msg || (label + ": done"), false);
        render();
      }, function (e) {
        main.insertBefore(notice(label + " failed: " + e.message, true), main.firstChild);
        b.disabled = !config.allowActions;
      });
    });
    return b;
  }
  var pendingFlash = null;
  function flash(text, isError) { pendingFlash = { text: text, isError: isError }; }

  function setNav(current) {
    nav.textContent = "";
    [["#/", "Queues", "queues"], ["#/groups", "Groups", "groups"], ["#/servers", "Servers", "servers"], ["#/scheduler", "Scheduler", "scheduler"], ["#/redis", "Redis", "redis"]].forEach(function (n) {
      nav.appendChild(link(n[0], n[1], { className: current === n[2] ? "active" : "", "data-testid": "nav-" + n[2] }));
    });
  }

  function chart(days) {
    // days: [{date, processed, failed}] newest first -> drawn oldest to newest.
    var data = days.slice().reverse();
    var w = 600, h = 160, pad = 28;
    var max = 1;
    data.forEach(function (d) { max = Math.max(max, d.processed, d.failed); });
    var ns = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(ns, "svg");
    svg.setAttribute("viewBox", "0 0 " + w + " " + (h + 20));
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", "processed and failed tasks per day");
    svg.setAttribute("data-testid", "history-chart");
    function x(i) { return pad + (data.length <= 1 ? 0 : i * (w - 2 * pad) / (data.length - 1)); }
    function y(v) { return h - (v / max) * (h - 10); }
    function line(key, color) {
      var p = document.createElementNS(ns, "polyline");
      p.setAttribute("fill", "none"); p.setAttribute("stroke", color); p.setAttribute("stroke-width", "2");
      p.setAttribute("points", data.map(function (d, i) { return x(i) + "," + y(d[key]); }).join(" "));
      p.setAttribute("data-series", key);
      svg.appendChild(p);
      data.forEach(function (d, i) {
        var c = document.createElementNS(ns, "circle");
        c.setAttribute("cx", x(i)); c.setAttribute("cy", y(d[key])); c.setAttribute("r", "3"); c.setAttribute("fill", color);
        var t = document.createElementNS(ns, "title"); t.textContent = d.date + ": " + d[key] + " " + key; c.appendChild(t);
        svg.appendChild(c);
      });
    }
    var axis = document.createElementNS(ns, "line");
    axis.setAttribute("x1", pad); axis.setAttribute("x2", w - pad); axis.setAttribute("y1", h); axis.setAttribute("y2", h); axis.setAttribute("stroke", "#c5cad3");
    svg.appendChild(axis);
    var top = document.createElementNS(ns, "text");
    top.setAttribute("x", 2); top.setAttribute("y", 12); top.setAttribute("font-size", "10"); top.setAttribute("fill", "#667085"); top.textContent = String(max);
    svg.appendChild(top);
    data.forEach(function (d, i) {
      if (data.length > 8 && i % Math.ceil(data.length / 8) !== 0 && i !== data.length - 1) return;
      var t = document.createElementNS(ns, "text");
      t.setAttribute("x", x(i)); t.setAttribute("y", h + 14); t.setAttribute("font-size", "10"); t.setAttribute("text-anchor", "middle"); t.setAttribute("fill", "#667085");
      t.textContent = d.date.slice(5);
      svg.appendChild(t);
    });
    line("processed", "#3457d5");
    line("failed", "#c62828");
    return el("div", { className: "chart" }, svg, el("div", { className: "legend" }, el("span", { className: "p", text: "— processed" }), "  ", el("span", { className: "f", text: "— failed" }), " (per UTC day)"));
  }

  // ---- views ----

  function viewQueues() {
    setNav("queues");
    return Promise.all([api("GET", "/api/queues"), api("GET", "/api/queue_stats")]).then(function (r) {
      var queues = r[0].queues, stats = r[1].stats;
      var frag = el("div", {}, el("h1", { text: "Queues" }));
      if (queues.length === 0) { frag.appendChild(notice("No queues yet: nothing has been enqueued on this Redis.")); return frag; }
      var totals = {};
      Object.keys(stats).forEach(function (q) { stats[q].slice(0, 14).forEach(function (d) {
        var t = totals[d.date] || (totals[d.date] = { date: d.date, processed: 0, failed: 0 });
        t.processed += d.processed; t.failed += d.failed;
      }); });
      var days = Object.keys(totals).sort().reverse().map(function (k) { return totals[k]; });
      var head = el("tr", {}, ["Queue", "State", "Size", "Active", "Pending", "Aggregating", "Scheduled", "Retry", "Archived", "Completed", "Processed today", "Failed today", "Latency", "Memory", ""].map(function (h, i) { return el("th", { className: i >= 2 && i <= 11 ? "num" : "", text: h }); }));
      var rows = queues.map(function (q) {
        return el("tr", { "data-queue": q.queue },
          el("td", {}, link("#/queues/" + enc(q.queue) + "/pending", q.queue, { "data-testid": "queue-link" })),
          el("td", {}, el("span", { className: "badge " + (q.paused ? "paused" : "run"), text: q.paused ? "paused" : "run", "data-testid": "queue-state" })),
          el("td", { className: "num", text: q.size }), el("td", { className: "num", text: q.active }), el("td", { className: "num", text: q.pending }),
          el("td", { className: "num", text: q.aggregating }), el("td", { className: "num", text: q.scheduled }), el("td", { className: "num", text: q.retry }),
          el("td", { className: "num", text: q.archived }), el("td", { className: "num", text: q.completed }),
          el("td", { className: "num", text: q.processed }), el("td", { className: "num", text: q.failed }),
          el("td", { text: q.display_latency }), el("td", { text: fmtBytes(q.memory_usage_bytes) }),
          el("td", {}, q.paused
            ? actionButton("Resume", function () { return api("POST", "/api/queues/" + enc(q.queue) + ":resume").then(function () { return "queue " + q.queue + " resumed"; }); }, { name: "resume" })
            : actionButton("Pause", function () { return api("POST", "/api/queues/" + enc(q.queue) + ":pause").then(function () { return "queue " + q.queue + " paused"; }); }, { name: "pause" }))
        );
      });
      frag.appendChild(el("table", { "data-testid": "queues-table" }, el("thead", {}, head), el("tbody", {}, rows)));
      frag.appendChild(el("h2", { text: "Processed and failed, all queues (last 14 days)" }));
      frag.appendChild(chart(days));
      return frag;
    });
  }

  function taskRow(q, state, t, selected) {
    var cells = [];
    if (config.allowActions && state !== "active") {
      var box = el("input", { type: "checkbox", "aria-label": "select " + t.id });
      box.checked = selected.has(t.id);
      box.addEventListener("change", function () { if (box.checked) selected.add(t.id); else selected.delete(t.id); });
      cells.push(el("td", {}, box));
    }
    cells.push(el("td", {}, link("#/tasks/" + enc(q) + "/" + enc(t.id), t.id, { className: "mono", "data-testid": "task-link" })));
    cells.push(el("td", { text: t.type }));
    cells.push(el("td", {}, el("code", { className: "preview", title: t.payload, text: t.payload || "—" })));
    if (state === "active") cells.push(el("td", { text: t.start_time === "-" ? "—" : fmtTime(t.start_time) }));
    if (state === "scheduled" || state === "retry") cells.push(el("td", { text: fmtTime(t.next_process_at) }));
    if (state === "retry" || state === "archived") cells.push(el("td", { className: "num", text: t.retried + "/" + t.max_retry }));
    if (state === "retry" || state === "archived") cells.push(el("td", { className: "error", text: t.error_message }));
    if (state === "archived") cells.push(el("td", { text: fmtTime(t.last_failed_at) }));
    if (state === "completed") { cells.push(el("td", { text: fmtTime(t.completed_at) })); cells.push(el("td", {}, el("code", { className: "preview", text: t.result || "—" }))); }
    return el("tr", { "data-task-id": t.id }, cells);
  }

  function stateHeads(state) {
    var heads = [];
    if (config.allowActions && state !== "active") heads.push("");
    heads.push("ID", "Type", "Payload");
    if (state === "active") heads.push("Started");
    if (state === "scheduled" || state === "retry") heads.push("Next process at");
    if (state === "retry" || state === "archived") heads.push("Retried", "Last error");
    if (state === "archived") heads.push("Failed at");
    if (state === "completed") heads.push("Completed at", "Result");
    return el("tr", {}, heads.map(function (h) { return el("th", { text: h }); }));
  }

  var bulk = {
    active: [["Cancel all", "cancel_all", "POST"]],
    pending: [["Archive all", "archive_all", "POST"], ["Delete all", "delete_all", "DELETE"]],
    scheduled: [["Run all", "run_all", "POST"], ["Archive all", "archive_all", "POST"], ["Delete all", "delete_all", "DELETE"]],
    retry: [["Run all", "run_all", "POST"], ["Archive all", "archive_all", "POST"], ["Delete all", "delete_all", "DELETE"]],
    archived: [["Run all", "run_all", "POST"], ["Delete all", "delete_all", "DELETE"]],
    completed: [["Delete all", "delete_all", "DELETE"]],
    aggregating: [["Run all", "run_all", "POST"], ["Archive all", "archive_all", "POST"], ["Delete all", "delete_all", "DELETE"]]
  };
  var batch = {
    pending: [["Archive selected", "batch_archive"], ["Delete selected", "batch_delete"]],
    scheduled: [["Run selected", "batch_run"], ["Archive selected", "batch_archive"], ["Delete selected", "batch_delete"]],
    retry: [["Run selected", "batch_run"], ["Archive selected", "batch_archive"], ["Delete selected", "batch_delete"]],
    archived: [["Run selected", "batch_run"], ["Delete selected", "batch_delete"]],
    completed: [["Delete selected", "batch_delete"]],
    aggregating: [["Run selected", "batch_run"], ["Archive selected", "batch_archive"], ["Delete selected", "batch_delete"]]
  };

  function viewQueue(q, state, params) {
    setNav("queues");
    var page = Math.max(1, parseInt(params.get("page") || "1", 10) || 1);
    var size = 20;
    var group = params.get("group");
    var listPath = state === "aggregating"
      ? (group ? "/api/queues/" + enc(q) + "/groups/" + enc(group) + "/aggregating_tasks?page=" + page + "&size=" + size : null)
      : "/api/queues/" + enc(q) + "/" + state + "_tasks?page=" + page + "&size=" + size;
    return Promise.all([api("GET", "/api/queues/" + enc(q) + "?days=14"), listPath ? api("GET", listPath) : Promise.resolve(null), state === "aggregating" ? api("GET", "/api/queues/" + enc(q) + "/groups") : Promise.resolve(null)]).then(function (r) {
      var s = r[0].current, history = r[0].history, list = r[1], groups = r[2];
      var frag = el("div", {});
      frag.appendChild(el("h1", {}, link("#/", "Queues"), " / ", el("span", { "data-testid": "queue-name", text: q }), " ", el("span", { className: "badge " + (s.paused ? "paused" : "run"), text: s.paused ? "paused" : "run" })));
      frag.appendChild(el("div", { className: "cards" }, card("Size", String(s.size), "stat-size"), card("Latency", s.display_latency, "stat-latency"), card("Memory", fmtBytes(s.memory_usage_bytes), "stat-memory"), card("Processed today", String(s.processed), "stat-processed"), card("Failed today", String(s.failed), "stat-failed"), card("Processed total", String(s.processed_total)), card("Failed total", String(s.failed_total))));
      frag.appendChild(el("div", { className: "toolbar" }, s.paused
        ? actionButton("Resume queue", function () { return api("POST", "/api/queues/" + enc(q) + ":resume").then(function () { return "queue resumed"; }); }, { name: "resume" })
        : actionButton("Pause queue", function () { return api("POST", "/api/queues/" + enc(q) + ":pause").then(function () { return "queue paused"; }); }, { name: "pause" })));
      frag.appendChild(chart(history));
      frag.appendChild(el("div", { className: "tabs", role: "tablist" }, STATES.map(function (st) {
        return link("#/queues/" + enc(q) + "/" + st, st + " (" + s[st] + ")", { className: st === state ? "active" : "", role: "tab", "data-testid": "tab-" + st });
      })));
      if (state === "aggregating") {
        frag.appendChild(el("table", { "data-testid": "groups-table" }, el("thead", {}, el("tr", {}, el("th", { text: "Group" }), el("th", { className: "num", text: "Size" }))),
          el("tbody", {}, groups.groups.map(function (g) { return el("tr", {}, el("td", {}, link("#/queues/" + enc(q) + "/aggregating?group=" + enc(g.group), g.group)), el("td", { className: "num", text: g.size })); }))));
        if (!group) { if (groups.groups.length === 0) frag.appendChild(notice("No aggregation groups in this queue.")); return frag; }
        frag.appendChild(el("h2", { text: "Group " + group }));
      }
      var selected = new Set();
      var groupPath = state === "aggregating" ? "/api/queues/" + enc(q) + "/groups/" + enc(group) + "/aggregating_tasks" : "/api/queues/" + enc(q) + "/" + state + "_tasks";
      var bar = el("div", { className: "toolbar" });
      (batch[state] || []).forEach(function (b) {
        bar.appendChild(actionButton(b[0], function () {
          if (selected.size === 0) throw new Error("select tasks first");
          return api("POST", groupPath + ":" + b[1], { task_ids: Array.from(selected) }).then(function (res) {
            var ok = res.pending_ids || res.archived_ids || res.deleted_ids || [];
            var bad = res.error_ids || res.failed_ids || [];
            return b[0] + ": " + ok.length + " done" + (bad.length ? ", " + bad.length + " failed" : "");
          });
        }, { name: b[1] }));
      });
      bar.appendChild(el("span", { className: "spacer" }));
      (bulk[state] || []).forEach(function (b) {
        bar.appendChild(actionButton(b[0], function () {
          return api(b[2], groupPath + ":" + b[1]).then(function (res) {
            var n = res.deleted !== undefined ? res.deleted : res.archived !== undefined ? res.archived : res.scheduled;
            return b[0] + (n !== undefined ? ": " + n + " task(s)" : ": done");
          });
        }, { name: b[1], danger: b[1] === "delete_all", confirm: b[0] + " " + state + " tasks of " + q + "?" }));
      });
      frag.appendChild(bar);
      var tasks = list.tasks;
      if (tasks.length === 0) frag.appendChild(notice("No " + state + " tasks" + (page > 1 ? " on page " + page : "") + "."));
      else frag.appendChild(el("table", { "data-testid": "tasks-table" }, el("thead", {}, stateHeads(state)), el("tbody", {}, tasks.map(function (t) { return taskRow(q, state, t, selected); }))));
      var total = state === "aggregating" ? (groups.groups.filter(function (g) { return g.group === group; })[0] || { size: 0 }).size : s[state];
      var pages = Math.max(1, Math.ceil(total / size));
      var qs = function (p) { return "#/queues/" + enc(q) + "/" + state + "?" + (group ? "group=" + enc(group) + "&" : "") + "page=" + p; };
      frag.appendChild(el("div", { className: "pager" },
        page > 1 ? link(qs(page - 1), "← Previous", { "data-testid": "prev-page" }) : el("span", { className: "muted", text: "← Previous" }),
        el("span", { "data-testid": "page-info", text: "page " + page + " of " + pages }),
        page < pages ? link(qs(page + 1), "Next →", { "data-testid": "next-page" }) : el("span", { className: "muted", text: "Next →" })));
      return frag;
    });
  }

  function pretty(text) {
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }
  }

  function viewTask(q, id) {
    setNav("queues");
    return api("GET", "/api/queues/" + enc(q) + "/tasks/" + enc(id)).then(function (t) {
      var frag = el("div", {});
      frag.appendChild(el("h1", {}, link("#/", "Queues"), " / ", link("#/queues/" + enc(q) + "/" + t.state, q), " / ", el("span", { className: "mono", "data-testid": "task-id", text: t.id })));
      var acts = el("div", { className: "toolbar" });
      var tp = "/api/queues/" + enc(q) + "/" + t.state + "_tasks/" + enc(t.id);
      if (t.state === "aggregating") tp = "/api/queues/" + enc(q) + "/groups/" + enc(t.group) + "/aggregating_tasks/" + enc(t.id);
      if (["scheduled", "retry", "archived", "aggregating"].indexOf(t.state) >= 0) acts.appendChild(actionButton("Run now", function () { return api("POST", tp + ":run").then(function () { return "task moved to pending"; }); }, { name: "run" }));
      if (["pending", "scheduled", "retry", "aggregating"].indexOf(t.state) >= 0) acts.appendChild(actionButton("Archive", function () { return api("POST", tp + ":archive").then(function () { return "task archived"; }); }, { name: "archive" }));
      if (t.state === "active") acts.appendChild(actionButton("Cancel", function () { return api("POST", "/api/queues/" + enc(q) + "/active_tasks/" + enc(t.id) + ":cancel").then(function () { return "cancel signal sent"; }); }, { name: "cancel" }));
      if (t.state !== "active") acts.appendChild(actionButton("Delete", function () { return api("DELETE", tp).then(function () { location.hash = "#/queues/" + enc(q) + "/" + t.state; return "task deleted"; }); }, { name: "delete", danger: true, confirm: "Delete task " + t.id + "?" }));
      frag.appendChild(acts);
      var rows = [
        ["State", el("span", { "data-testid": "task-state", text: t.state })], ["Type", t.type], ["Queue", t.queue],
        ["Retried", t.retried + " of " + t.max_retry], ["Last error", el("span", { className: "error", "data-testid": "task-error", text: t.error_message || "—" })],
        ["Last failed at", fmtTime(t.last_failed_at)], ["Next process at", fmtTime(t.next_process_at)],
        ["Timeout", t.timeout_seconds ? t.timeout_seconds + " s" : "—"], ["Deadline", fmtTime(t.deadline)],
        ["Group", t.group || "—"], ["Completed at", fmtTime(t.completed_at)], ["Retention left", t.ttl_seconds ? t.ttl_seconds + " s" : "—"],
        ["Orphaned", t.is_orphaned ? "yes (its lease ran out)" : "no"], ["Started", t.start_time ? fmtTime(t.start_time === "-" ? "" : t.start_time) : "—"],
        ["Trace id", el("span", { className: "mono", "data-testid": "trace-id", text: t.trace_id || "—" })]
      ];
      frag.appendChild(el("dl", { className: "kv" }, rows.map(function (r) { return [el("dt", { text: r[0] }), el("dd", {}, r[1])]; })));
      frag.appendChild(el("h2", { text: "Payload" }));
      frag.appendChild(el("pre", { "data-testid": "task-payload", text: t.payload ? pretty(t.payload) : "(none)" }));
      if (t.result) { frag.appendChild(el("h2", { text: "Result" })); frag.appendChild(el("pre", { "data-testid": "task-result", text: pretty(t.result) })); }
      var hk = Object.keys(t.headers || {});
      frag.appendChild(el("h2", { text: "Headers" }));
      if (hk.length === 0) frag.appendChild(el("p", { className: "muted", text: "No headers." }));
      else frag.appendChild(el("table", { "data-testid": "task-headers" }, el("tbody", {}, hk.map(function (k) { return el("tr", {}, el("th", { text: k }), el("td", { className: "mono", text: t.headers[k] })); }))));
      return frag;
    });
  }

  function viewGroups() {
    setNav("groups");
    return api("GET", "/api/queues").then(function (r) {
      return Promise.all(r.queues.map(function (q) { return api("GET", "/api/queues/" + enc(q.queue) + "/groups").then(function (g) { return { queue: q.queue, groups: g.groups }; }); }));
    }).then(function (all) {
      var rows = [];
      all.forEach(function (x) { x.groups.forEach(function (g) {
        rows.push(el("tr", {}, el("td", { text: x.queue }), el("td", {}, link("#/queues/" + enc(x.queue) + "/aggregating?group=" + enc(g.group), g.group)), el("td", { className: "num", text: g.size })));
      }); });
      var frag = el("div", {}, el("h1", { text: "Aggregation groups" }));
      if (rows.length === 0) frag.appendChild(notice("No aggregation groups."));
      else frag.appendChild(el("table", { "data-testid": "all-groups" }, el("thead", {}, el("tr", {}, el("th", { text: "Queue" }), el("th", { text: "Group" }), el("th", { className: "num", text: "Size" }))), el("tbody", {}, rows)));
      return frag;
    });
  }

  function viewServers() {
    setNav("servers");
    return api("GET", "/api/servers").then(function (r) {
      var frag = el("div", {}, el("h1", { text: "Servers" }));
      if (r.servers.length === 0) { frag.appendChild(notice("No running servers.")); return frag; }
      frag.appendChild(el("table", { "data-testid": "servers-table" }, el("thead", {}, el("tr", {}, ["Host", "PID", "Status", "Active", "Queues", "Started", "ID"].map(function (h) { return el("th", { text: h }); }))),
        el("tbody", {}, r.servers.map(function (s) {
          var queues = Object.keys(s.queue_priorities).map(function (k) { return k + ":" + s.queue_priorities[k]; }).join(", ") + (s.strict_priority_enabled ? " (strict)" : "");
          return el("tr", {}, el("td", { text: s.host }), el("td", { text: s.pid }), el("td", { text: s.status }), el("td", { className: "num", text: s.active_workers.length + "/" + s.concurrency }), el("td", { text: queues }), el("td", { text: fmtTime(s.start_time) }), el("td", { className: "mono", text: s.id }));
        }))));
      frag.appendChild(el("h2", { text: "Active workers" }));
      var workers = [];
      r.servers.forEach(function (s) { s.active_workers.forEach(function (w) { workers.push({ s: s, w: w }); }); });
      if (workers.length === 0) frag.appendChild(el("p", { className: "muted", text: "No task is being processed right now." }));
      else frag.appendChild(el("table", { "data-testid": "workers-table" }, el("thead", {}, el("tr", {}, ["Task", "Type", "Queue", "Payload", "Started", "Deadline", "Server"].map(function (h) { return el("th", { text: h }); }))),
        el("tbody", {}, workers.map(function (x) {
          return el("tr", {}, el("td", {}, link("#/tasks/" + enc(x.w.queue) + "/" + enc(x.w.task_id), x.w.task_id, { className: "mono" })), el("td", { text: x.w.task_type }), el("td", { text: x.w.queue }), el("td", {}, el("code", { className: "preview", text: x.w.task_payload })), el("td", { text: fmtTime(x.w.start_time) }), el("td", { text: fmtTime(x.w.deadline) }), el("td", { className: "mono", text: x.s.host + ":" + x.s.pid }));
        }))));
      return frag;
    });
  }

  function viewScheduler(entryId, params) {
    setNav("scheduler");
    return api("GET", "/api/scheduler_entries").then(function (r) {
      var frag = el("div", {}, el("h1", { text: "Scheduler entries" }));
      if (r.entries.length === 0) frag.appendChild(notice("No periodic tasks: no scheduler is running."));
      else frag.appendChild(el("table", { "data-testid": "scheduler-table" }, el("thead", {}, el("tr", {}, ["Entry", "Spec", "Type", "Payload", "Options", "Next", "Previous"].map(function (h) { return el("th", { text: h }); }))),
        el("tbody", {}, r.entries.map(function (e) {
          return el("tr", {}, el("td", {}, link("#/scheduler/" + enc(e.id), e.id, { className: "mono", "data-testid": "entry-link" })), el("td", { className: "mono", text: e.spec }), el("td", { text: e.task_type }), el("td", {}, el("code", { className: "preview", text: e.task_payload })), el("td", { text: e.options.join(", ") }), el("td", { text: fmtTime(e.next_enqueue_at) }), el("td", { text: fmtTime(e.prev_enqueue_at) }));
        }))));
      if (!entryId) return frag;
      var page = Math.max(1, parseInt(params.get("page") || "1", 10) || 1);
      return api("GET", "/api/scheduler_entries/" + enc(entryId) + "/enqueue_events?page=" + page + "&size=20").then(function (ev) {
        frag.appendChild(el("h2", {}, "Enqueue history of ", el("span", { className: "mono", text: entryId })));
        if (ev.events.length === 0) frag.appendChild(notice("Nothing enqueued" + (page > 1 ? " on page " + page : " yet") + "."));
        else frag.appendChild(el("table", { "data-testid": "events-table" }, el("thead", {}, el("tr", {}, el("th", { text: "Task" }), el("th", { text: "Enqueued at" }))),
          el("tbody", {}, ev.events.map(function (e) { return el("tr", {}, el("td", { className: "mono", text: e.task_id }), el("td", { text: fmtTime(e.enqueued_at) })); }))));
        frag.appendChild(el("div", { className: "pager" },
          page > 1 ? link("#/scheduler/" + enc(entryId) + "?page=" + (page - 1), "← Newer") : el("span", { className: "muted", text: "← Newer" }),
          el("span", { text: "page " + page }),
          ev.events.length === 20 ? link("#/scheduler/" + enc(entryId) + "?page=" + (page + 1), "Older →") : el("span", { className: "muted", text: "Older →" })));
        return frag;
      });
    });
  }

  function viewRedis() {
    setNav("redis");
    return api("GET", "/api/redis_info").then(function (r) {
      var i = r.info;
      var frag = el("div", {}, el("h1", { text: "Redis" + (r.cluster ? " Cluster" : "") }));
      frag.appendChild(el("div", { className: "cards" }, card("Version", i.redis_version || "?", "redis-version"), card("Uptime", i.uptime_in_days !== undefined ? i.uptime_in_days + " days" : "?"), card("Clients", i.connected_clients || "?"), card("Memory used", i.used_memory_human || "?"), card("Peak memory", i.used_memory_peak_human || "?")));
      var keys = Object.keys(i).sort();
      frag.appendChild(el("table", { "data-testid": "redis-info" }, el("tbody", {}, keys.map(function (k) { return el("tr", {}, el("th", { text: k }), el("td", { className: "mono", text: i[k] })); }))));
      return frag;
    });
  }

  function route() {
    var hash = location.hash.replace(/^#/, "") || "/";
    var qi = hash.indexOf("?");
    var path = qi >= 0 ? hash.slice(0, qi) : hash;
    var params = new URLSearchParams(qi >= 0 ? hash.slice(qi + 1) : "");
    var parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    if (parts.length === 0) return viewQueues();
    if (parts[0] === "queues" && parts.length >= 2) return viewQueue(parts[1], STATES.indexOf(parts[2]) >= 0 ? parts[2] : "pending", params);
    if (parts[0] === "tasks" && parts.length === 3) return viewTask(parts[1], parts[2]);
    if (parts[0] === "groups") return viewGroups();
    if (parts[0] === "servers") return viewServers();
    if (parts[0] === "scheduler") return viewScheduler(parts[1], params);
    if (parts[0] === "redis") return viewRedis();
    return Promise.resolve(notice("Nothing here: " + path, true));
  }

  var renderCount = 0;
  function render() {
    var mine = ++renderCount;
    return route().then(function (node) {
      if (mine !== renderCount) return;
      main.textContent = "";
      if (pendingFlash) { main.appendChild(notice(pendingFlash.text, pendingFlash.isError)); pendingFlash = null; }
      main.appendChild(node);
      main.setAttribute("data-ready", String(mine));
    }, function (e) {
      if (mine !== renderCount) return;
      main.textContent = "";
      main.appendChild(notice((e.status === 404 ? "Not found: " : "Error: ") + e.message, true));
      main.setAttribute("data-ready", String(mine));
    });
  }
  window.addEventListener("hashchange", render);
  render();
})();
`
