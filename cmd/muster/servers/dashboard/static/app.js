// Muster's dashboard: renders the state the manager streams (server-sent
// events from api/stream), falling back to polling api/state.
"use strict";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const c of children) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

function bar(r) {
  const pct = Math.min(100, r.percent);
  const fill = el("div", { class: pct >= 100 ? "fill full" : "fill", style: `width:${pct}%` });
  return el("div", { class: "bar", "data-flavor": r.flavor, "data-resource": r.resource },
    el("span", {}, `${r.flavor} · ${r.resource}`),
    el("div", { class: "track" }, fill),
    el("span", { class: "usage" }, `${r.reserved} / ${r.nominal}` + (r.borrowed !== "0" ? ` (+${r.borrowed} borrowed)` : "")));
}

function queueBox(q) {
  const head = el("div", { class: "head" },
    el("span", { class: "name" }, q.name),
    el("span", { class: "counts" }, `${q.pending} pending · ${q.admitted} admitted` + (q.weightedShare ? ` · share ${q.weightedShare}` : "")));
  const box = el("div", { class: "queue", id: `cq-${q.name}`, "data-queue": q.name }, head);
  if (!q.active) box.append(el("div", { class: "inactive" }, `inactive: ${q.inactive}`));
  for (const r of q.quota) box.append(bar(r));
  return box;
}

function tree(state) {
  const children = {};
  const queuesOf = {};
  for (const c of state.cohorts || []) (children[c.parent || ""] ||= []).push(c.name);
  for (const q of state.clusterQueues || []) (queuesOf[q.cohort || ""] ||= []).push(q);
  const render = (cohort) => {
    const ul = el("ul");
    for (const q of queuesOf[cohort] || []) ul.append(el("li", {}, queueBox(q)));
    for (const c of children[cohort] || []) {
      ul.append(el("li", { class: "cohort" }, el("span", { class: "name" }, `cohort ${c}`), render(c)));
    }
    return ul;
  };
  return render("");
}

function rows(tbody, items, cells, empty) {
  tbody.replaceChildren();
  if (items.length === 0) {
    tbody.append(el("tr", { class: "empty" }, el("td", { colspan: "7" }, empty)));
    return;
  }
  for (const it of items) tbody.append(el("tr", {}, ...cells(it).map(([v, cls]) => el("td", cls ? { class: cls } : {}, v))));
}

function render(state) {
  const time = new Date().toLocaleTimeString();
  document.getElementById("status").textContent = !state.synced
    ? "this replica has not rebuilt its queues yet"
    : state.leading ? `live · ${time}` : `live · ${time} · a follower: recent decisions are on the leader`;
  document.getElementById("status").classList.toggle("down", !state.synced);
  document.getElementById("tree").replaceChildren(tree(state));
  const pending = [], admitted = [];
  for (const q of state.clusterQueues || []) {
    for (const p of q.pendingList) pending.push({ ...p, cq: q.name });
    for (const a of q.admittedList) admitted.push({ ...a, cq: q.name });
  }
  rows(document.querySelector("#pending-table tbody"), pending,
    (p) => [[p.workload, "name"], [p.cq], [p.localQueue], [`${p.inClusterQueue} / ${p.inLocalQueue}`, "position"], [p.priority], [p.waiting], [p.reason || "not tried yet", "reason"]],
    "nothing waits");
  rows(document.querySelector("#admitted-table tbody"), admitted,
    (a) => [[a.workload, "name"], [a.cq], [a.localQueue], [a.flavors], [a.since]],
    "nothing admitted");
  const recent = document.getElementById("recent");
  recent.replaceChildren(...(state.recent || []).slice(0, 20).map((e) =>
    el("li", {}, el("span", { class: "kind" }, e.kind), ` ${new Date(e.time).toLocaleTimeString()} ${e.workload} — ${e.message}`)));
}

function down(why) {
  const s = document.getElementById("status");
  s.textContent = why;
  s.classList.add("down");
}

function poll() {
  fetch("api/state").then((r) => r.ok ? r.json() : Promise.reject(r.statusText))
    .then(render).catch((e) => down(`cannot read the state: ${e}`))
    .finally(() => setTimeout(poll, 2000));
}

if (window.EventSource) {
  const es = new EventSource("api/stream");
  es.onmessage = (m) => render(JSON.parse(m.data));
  es.onerror = () => down("reconnecting…");
} else {
  poll();
}
