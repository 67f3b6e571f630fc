// lowtide dashboard: polls the JSON of the page shown and draws it. No framework, no build, nothing from the network.
"use strict";

const OUTCOMES = ["succeeded", "failed", "expired", "canceled", "not-run", "pending", "waiting"];
const SVG = "http://www.w3.org/2000/svg";
let refreshSeconds = 2;
let timer = null;
let batchPage = 0;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (name === "style") node.style.cssText = value;  // CSSOM: allowed by the page's CSP, a style attribute is not
    else node.setAttribute(name, value);
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  return node;
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "unknown";
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

function money(value) {
  return value >= 1 ? `$${value.toFixed(2)}` : `$${value.toPrecision(2)}`;
}

function when(epoch) {
  return epoch ? new Date(epoch * 1000).toISOString().replace("T", " ").slice(0, 19) + "Z" : "";
}

function fact(label, value, id) {
  return el("div", { class: "fact", "data-fact": id || label },
    el("span", { class: "label" }, label), el("span", { class: "value" }, value));
}

function table(headers, rows, attrs) {
  const head = el("tr", {}, ...headers.map((h) => el("th", {}, h)));
  const body = rows.map((cells) => el("tr", {}, ...cells.map((c) => el("td", {}, c))));
  return el("table", attrs || {}, el("thead", {}, head), el("tbody", {}, ...body));
}

// A line chart of `series` (name, key, colour) over `points` (each with `at`), as inline SVG.
function chart(points, series, name) {
  const width = 800, height = 180, left = 48, bottom = 22, top = 8;
  const root = svg("svg", { class: "chart", viewBox: `0 0 ${width} ${height}`, preserveAspectRatio: "xMinYMid meet",
    "data-chart": name, "data-points": String(points.length), role: "img" });
  root.append(svg("line", { class: "axis", x1: left, y1: height - bottom, x2: width, y2: height - bottom }));
  if (!points.length) {
    const t = svg("text", { x: left + 8, y: height / 2 });
    t.textContent = "nothing answered yet";
    root.append(t);
    return root;
  }
  const xs = points.map((p) => p.at);
  const x0 = Math.min(...xs), x1 = Math.max(...xs) || x0 + 1;
  const top_value = Math.max(1e-9, ...points.flatMap((p) => series.map((s) => Number(p[s.key]) || 0)));
  const x = (at) => left + (x1 === x0 ? (width - left) / 2 : ((at - x0) / (x1 - x0)) * (width - left - 4));
  const y = (v) => height - bottom - (v / top_value) * (height - bottom - top);
  if (points.length === 1) {  // one interval: a bar for each series, side by side, beside its line's single point
    series.forEach((s, i) => {
      const v = Number(points[0][s.key]) || 0;
      root.append(svg("rect", { x: (x(points[0].at) - 24 + i * 26).toFixed(1), y: y(v).toFixed(1), width: 22,
        height: (height - bottom - y(v)).toFixed(1), fill: s.colour, opacity: 0.7, "data-bar-series": s.key }));
    });
  }
  for (const s of series) {
    const d = points.map((p, i) => `${i ? "L" : "M"}${x(p.at).toFixed(1)},${y(Number(p[s.key]) || 0).toFixed(1)}`);
    root.append(svg("path", { d: d.join(" "), fill: "none", stroke: s.colour, "stroke-width": 2,
      "data-series": s.key }));
    for (const p of points.length < 80 ? points : []) {
      root.append(svg("circle", { cx: x(p.at).toFixed(1), cy: y(Number(p[s.key]) || 0).toFixed(1), r: 2.5,
        fill: s.colour }));
    }
  }
  const label = (text, xx, yy, anchor) => {
    const t = svg("text", { x: xx, y: yy, "text-anchor": anchor || "start" });
    t.textContent = text;
    root.append(t);
  };
  label(series[0].format ? series[0].format(top_value) : String(Math.round(top_value)), 2, top + 10);
  label("0", 2, height - bottom);
  if (x1 === x0) label(when(x0).slice(5, 16), x(x0), height - 4, "middle");  // one interval: one time, under it
  else {
    label(when(x0).slice(5, 16), left, height - 4);
    label(when(x1).slice(5, 16), width - 2, height - 4, "end");
  }
  const legend = el("div", { class: "legend" },
    ...series.map((s) => el("span", {}, el("i", { style: `background:${s.colour}` }), s.label)));
  return el("div", {}, root, legend);
}

function progressBar(counts, total) {
  const bar = el("div", { class: "bar", "data-bar": "progress" });
  for (const o of OUTCOMES) {
    if (!counts[o]) continue;
    bar.append(el("span", { class: o, style: `width:${(100 * counts[o]) / Math.max(total, 1)}%`, title: `${o}: ${counts[o]}` }));
  }
  return bar;
}

// When the run should end: "done", "unknown" before a batch of it has ended (no pace yet), "due now" once its
// batches have outlived their pace, else how long.
function eta(run) {
  if (run.state === "finished") return "done";
  if (run.eta_seconds === null || run.eta_seconds === undefined) return "unknown";
  return run.eta_seconds < 1 ? "due now" : duration(run.eta_seconds);
}

// The worst case still out, and the items out that no cost limit priced: a run without one stores no worst case,
// and "$0" beside requests in flight would read as "nothing at stake".
function worstOut(run) {
  const unpriced = run.unpriced_out || 0;
  if (!unpriced) return run.worst_case_out;
  const items = `${unpriced} item${unpriced === 1 ? "" : "s"} not priced (no cost limit)`;
  return unpriced === sumOut(run.counts) ? items : `${run.worst_case_out} + ${items}`;
}

function sumOut(counts) {
  return (counts.pending || 0) + (counts.waiting || 0);
}

// Running totals of `keys` over `points`: what was spent up to the end of each interval.
function cumulative(points, keys) {
  const sums = Object.fromEntries(keys.map((k) => [k, 0]));
  return points.map((p) => {
    const out = { at: p.at };
    for (const k of keys) out[k] = sums[k] += Number(p[k]) || 0;
    return out;
  });
}

function renderRuns(data) {
  const page = document.getElementById("page-runs");
  if (!data.runs.length) {
    page.replaceChildren(el("p", { class: "empty" }, `No runs in ${data.location}.`));
    return;
  }
  page.replaceChildren(...data.runs.map((run) => {
    if (run.state === "counting") {  // its first count is still being made (a very large run): shown at once
      return el("div", { class: "card run", "data-run": run.id, "data-state": run.state },
        el("h2", {}, run.id, " ", el("small", { class: "run-state" }, `${run.items} items · being counted`)),
        el("p", { class: "counted" }, "Counting this run's items for the first time; shown here once counted."),
        el("div", { class: "facts" }, fact("actor", run.actor, "actor"), fact("started", when(run.created_at), "started")));
    }
    const counts = OUTCOMES.map((o) => fact(o, String(run.counts[o]), `count-${o}`));
    // A large ledger is counted again in the background: say how old the counts shown are, once it matters.
    const age = data.now - run.counted_at;
    const counted = run.state !== "finished" && age > 2 * refreshSeconds
      ? el("p", { class: "counted", "data-counted": String(Math.round(age)) },
        `Counted ${duration(age)} ago; counted again in the background.`)
      : null;
    return el("div", { class: "card run", "data-run": run.id, "data-state": run.state },
      el("h2", {}, run.id, " ", el("small", { class: "run-state" }, `${run.state} · ${run.done} of ${run.items} done`)),
      progressBar(run.counts, run.items),
      counted,
      el("div", { class: "facts" }, ...counts),
      el("div", { class: "facts" },
        fact("ETA", eta(run), "eta"),
        fact("spent", run.spent, "spent"),
        fact("saved", run.saved, "saved"),
        fact("worst case still out", worstOut(run), "worst"),
        fact("cost limit", run.cost_limit || "none", "limit"),
        fact("actor", run.actor, "actor")),
      run.retry ? el("p", {}, "Retry its failed items: ", el("code", {}, run.retry)) : null,
      run.timeline === null ? el("p", { class: "counted" }, "Its chart is being drawn from the ledger.")
        : chart(run.timeline, [{ key: "answers", label: "answers per interval", colour: "#1f6feb" },
        { key: "failures", label: "failures", colour: "#cf222e" }], `run-${run.id}`));
  }));
}

function renderBatches(data) {
  const page = document.getElementById("page-batches");
  const rows = data.batches.map((b) => [
    el("span", { "data-batch": b.id }, b.id), b.provider_batch_id || "—", b.provider, b.state, b.phase || "",
    `${b.results} / ${b.requests}`, Object.entries(b.counts).map(([k, v]) => `${k} ${v}`).join(", "),
    duration(b.age_seconds), b.ends_in_seconds === null ? "ended" : duration(b.ends_in_seconds),
    b.cost, b.live_cost, b.saved, b.note || ""]);
  const pages = Math.max(1, Math.ceil(data.total / data.per_page));
  const pager = el("div", { class: "pager" },
    el("button", { id: "batches-prev", type: "button" }, "newer"), `page ${data.page + 1} of ${pages} · ${data.total} batches `,
    el("button", { id: "batches-next", type: "button" }, "older"));
  pager.querySelector("#batches-prev").onclick = () => { batchPage = Math.max(0, batchPage - 1); refresh(); };
  pager.querySelector("#batches-next").onclick = () => { if (batchPage + 1 < pages) batchPage += 1; refresh(); };
  page.replaceChildren(el("div", { class: "card" }, el("h2", {}, "Batches, waiting longest first"), pager,
    rows.length ? table(["batch", "API's batch id", "provider", "state", "phase", "answered", "API counts", "age", "deadline in",
      "cost", "at live price", "saved", "note"], rows, { id: "batches-table" }) : el("p", { class: "empty" }, "No batches.")));
}

function spendTable(lines, dim) {
  return table([dim, "answers", "failures", "cost", "at live price", "saved"],
    lines.map((l) => [l.name, String(l.answers), String(l.failures), l.cost, l.live_cost, l.saved]), { "data-by": dim });
}

function renderMoney(data) {
  const page = document.getElementById("page-money");
  page.replaceChildren(
    el("div", { class: "card" }, el("h2", {}, "Spend and savings"),
      el("div", { class: "facts" }, fact("spent", data.spent, "spent"), fact("at live prices", data.live, "live"),
        fact("saved", data.saved, "saved")),
      chart(cumulative(data.timeline, ["cost_usd", "live_cost_usd"]), [
        { key: "cost_usd", label: "spent so far ($)", colour: "#1f6feb", format: money },
        { key: "live_cost_usd", label: "the same at live prices ($)", colour: "#bf8700" }], "money")),
    ...["actor", "model", "provider"].map((dim) => el("div", { class: "card" }, el("h2", {}, `By ${dim}`),
      spendTable(data.by[dim], dim))));
}

function renderFailures(data) {
  const page = document.getElementById("page-failures");
  if (!data.groups.length) {
    page.replaceChildren(el("p", { class: "empty" }, "No failures."));
    return;
  }
  const rows = data.groups.map((g) => [g.class, g.type, String(g.count),
    el("a", { href: `#request=${encodeURIComponent(g.example_key)}` }, g.example_key),
    g.example_message,
    g.retry.length ? el("span", {}, ...g.retry.map((c) => el("code", {}, c))) : "—"]);
  page.replaceChildren(el("div", { class: "card" }, el("h2", {}, "Failures by error"),
    table(["error class", "type", "count", "example", "message", "retry with"], rows, { id: "failures-table" })));
}

function renderRequest(data) {
  const body = document.getElementById("request-body");
  if (!data) {
    body.replaceChildren(el("p", { class: "empty", id: "request-missing" }, "No request with that key or custom id."));
    return;
  }
  const batches = data.batches.map((b) => [b.id, b.provider_batch_id || "—", b.state, b.sent_as,
    Object.entries(b.create_steps).map(([k, v]) => `${k}: ${v}`).join(", ") || "—", b.note || "—", when(b.intent_at)]);
  const results = data.results.map((r) => [when(r.at), r.batch_id || "live", r.state, r.cost || "—",
    r.error ? `${r.error.class || ""} ${r.error.error_type || ""}: ${r.error.api_message || r.error.message || ""}` : "—"]);
  body.replaceChildren(el("div", { class: "card", id: "request-card", "data-state": data.state },
    el("h2", {}, data.key),
    el("div", { class: "facts" }, fact("state", data.state, "state"), fact("custom id", data.custom_id, "custom_id"),
      fact("attempts", `${data.attempts} of ${data.max_attempts}`, "attempts"), fact("model", data.model, "model"),
      fact("actor", data.actor, "actor"), fact("cost", data.cost || "—", "cost"),
      fact("at live price", data.live_cost || "—", "live_cost")),
    data.runs.length ? el("p", {}, "In runs: ", data.runs.map((r) => `${r.run} item ${r.index}`).join(", ")) : null,
    el("h2", {}, "Batches"), table(["batch", "API id", "state", "sent as", "create steps", "reconcile note", "intent"], batches, { id: "request-batches" }),
    el("h2", {}, "Results"), table(["at", "batch", "state", "cost", "error"], results, { id: "request-results" }),
    el("h2", {}, "Prompt"), el("pre", { id: "request-prompt" }, data.prompt),
    data.answer !== null ? el("div", {}, el("h2", {}, "Answer"), el("pre", { id: "request-answer" }, data.answer)) : null,
    data.error ? el("div", {}, el("h2", {}, "Error"), el("pre", { id: "request-error" }, JSON.stringify(data.error, null, 1))) : null));
}

// Agent runs by state, the latest changed listed; with `#agents=RUN`, that run's timeline above them.
const AGENT_STATES = ["running", "parked", "waiting-on-person", "in-doubt", "finished", "failed", "stopped"];

function agentId() {
  const hash = location.hash.replace(/^#/, "");
  return hash.startsWith("agents=") ? decodeURIComponent(hash.slice(7)) : "";
}

function renderAgentRun(data) {
  const run = data.run;
  const rows = data.timeline.map((t) => [String(t.position), t.kind, t.name, t.state, t.batch_id || "—",
    t.cost || "—", duration(t.waited_seconds), String(t.attempts), t.error || ""]);
  return el("div", { class: "card", id: "agent-run", "data-run": run.run_id, "data-state": run.state },
    el("h2", {}, run.run_id, " ", el("small", { class: "run-state" }, run.state)),
    el("div", { class: "facts" }, fact("agent", run.agent, "agent"), fact("cost", run.cost, "cost"),
      fact("budget", run.budget || "none", "budget"),
      fact("waits on", run.question || run.awaiting || "—", "awaiting"), fact("started", when(run.created_at), "started")),
    run.error ? el("p", { class: "counted" }, run.error) : null,
    table(["#", "kind", "turn or step", "outcome", "batch", "cost", "waited", "attempts", "error"], rows,
      { id: "agent-timeline" }));
}

function renderAgents(data) {
  const page = document.getElementById("page-agents");
  const counts = el("div", { class: "facts" }, ...AGENT_STATES.map((s) => fact(s, String(data.counts[s]), `agents-${s}`)));
  const rows = data.runs.map((r) => [el("a", { href: `#agents=${encodeURIComponent(r.run_id)}` }, r.run_id), r.state,
    r.agent, r.cost, r.for_seconds === null ? "—" : duration(r.for_seconds), r.question || r.awaiting || "", r.error || ""]);
  const list = el("div", { class: "card" }, el("h2", {}, `Agent runs, the latest changed first (${data.runs.length} of ${data.total})`),
    counts, rows.length ? table(["run", "state", "agent", "cost", "in this state for", "waits on", "error"], rows,
      { id: "agents-table" }) : el("p", { class: "empty" }, `No agent runs in ${data.location}.`));
  page.replaceChildren(...[data.shown ? renderAgentRun(data.shown) : null, list].filter((n) => n));
}

// How much of a cap is spent or reserved, as a bar (red once it is all taken).
function capBar(share) {
  const used = Math.min(1, Math.max(0, share));
  return el("div", { class: "bar", "data-bar": "cap", title: `${Math.round(100 * used)}% taken` },
    el("span", { style: `width:${100 * used}%;background:${used >= 1 ? "#cf222e" : "#1f6feb"}` }));
}

// Spend by owner: each cap with its room left, then spend by team, project and day.
function renderSpend(data) {
  const page = document.getElementById("page-spend");
  const caps = data.caps.length ? table(["scope", "name", "period", "cap", "spent", "reserved", "left", ""],
    data.caps.map((c) => [c.scope, c.name, c.period, c.limit, c.spent, c.reserved, c.left,
      capBar(c.used_share)]), { id: "caps-table" })
    : el("p", { class: "empty" }, "No caps: set one with lowtide spend --set-cap team:NAME:month:USD.");
  page.replaceChildren(
    el("div", { class: "card" }, el("h2", {}, "Spend by team and project"),
      el("div", { class: "facts" }, fact("spent", data.spent, "spend-spent"),
        fact("reserved", data.reserved, "spend-reserved")), caps),
    ...["team", "project", "day"].map((dim) => el("div", { class: "card" }, el("h2", {}, `By ${dim}`),
      table([dim, "requests", "spent", "reserved"],
        data.by[dim].map((l) => [l.name, String(l.requests), l.spent, l.reserved]), { "data-spend-by": dim }))));
}

const PAGES = {
  runs: { url: () => "/api/runs", render: renderRuns },
  batches: { url: () => `/api/batches?page=${batchPage}`, render: renderBatches },
  money: { url: () => "/api/money", render: renderMoney },
  spend: { url: () => "/api/spend", render: renderSpend },
  failures: { url: () => "/api/failures", render: renderFailures },
  agents: { url: () => { const id = agentId(); return id ? `/api/agents?run=${encodeURIComponent(id)}` : "/api/agents"; },
    render: renderAgents },
  request: { url: () => { const id = requestId(); return id ? `/api/request?id=${encodeURIComponent(id)}` : null; },
    render: renderRequest },
};

function current() {
  const hash = location.hash.replace(/^#/, "");
  const name = hash.split("=")[0];
  return PAGES[name] ? name : "runs";
}

function requestId() {
  const hash = location.hash.replace(/^#/, "");
  return hash.startsWith("request=") ? decodeURIComponent(hash.slice(8)) : "";
}

let updates = 0;

async function refresh() {
  clearTimeout(timer);
  const name = current();
  for (const key of Object.keys(PAGES)) {
    document.getElementById(`page-${key}`).classList.toggle("shown", key === name);
    document.getElementById(`nav-${key}`).classList.toggle("active", key === name);
  }
  const status = document.getElementById("status");
  const url = PAGES[name].url();
  if (url) {
    try {
      const response = await fetch(url, { credentials: "same-origin", cache: "no-store" });
      if (response.status === 404) {
        PAGES[name].render(null);
      } else if (!response.ok) {
        status.textContent = `error ${response.status}`;
      } else {
        const data = await response.json();
        refreshSeconds = data.refresh_seconds || refreshSeconds;
        PAGES[name].render(data);
        updates += 1;
        status.textContent = `updated ${new Date().toISOString().slice(11, 19)}Z`;
        status.dataset.updates = String(updates);
      }
    } catch (error) {
      status.textContent = "cannot reach the dashboard";
    }
  }
  if (name !== "request") timer = setTimeout(refresh, refreshSeconds * 1000);
}

window.addEventListener("hashchange", () => { batchPage = 0; refresh(); });
window.addEventListener("DOMContentLoaded", () => {
  document.getElementById("request-form").addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = `request=${encodeURIComponent(document.getElementById("request-id").value.trim())}`;
  });
  const id = requestId();
  if (id) document.getElementById("request-id").value = id;
  refresh();
});
