// The player's own page (#42): his rating in each game with its history
// drawn as an inline SVG chart (no chart library), his reliability, his
// recent games, each a link to its replay in the viewer. The server's
// (telegram_bot/views/page_player.py), in his language.

import { fill } from "./board.js";
import { read } from "./reads.js";
import { go } from "./table.js";

const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";

export async function open() {
  const box = $("player");
  $("title").textContent = "";
  $("timer").textContent = "";
  let me;
  try {
    me = await read("api/player");
  } catch (e) {
    $("status").textContent = (e.body && e.body.error) || String(e.message);
    return;
  }
  if (document.body.dataset.route !== "player") return;
  const labels = me.labels;
  $("title").textContent = "\u{1F464} " + me.name;
  box.replaceChildren();
  for (const [variant, r] of Object.entries(me.ratings)) box.append(ratingCard(variant, r, labels));
  const reliability = element("p", "reliability", me.reliability_text);
  box.append(reliability);
  if (me.cooldown) box.append(element("p", "cooldown", "\u23f3 " + me.cooldown));
  box.append(element("h2", "", labels.games));
  const list = element("ul", "games", "");
  if (!me.games.length) list.append(element("li", "none", labels.none));
  for (const g of me.games) {
    const item = element("li", "game" + (g.lost ? " lost" : ""), "");
    const label = element("span", "label", `${g.when} \u00b7 #${g.game} \u00b7 ${g.players.join(", ")}`);
    label.title = g.label;
    item.append(label);
    const b = element("button", "replay-link", "\u{1F39E} " + labels.replay);
    b.type = "button";
    b.dataset.replay = g.table + "." + g.game;
    b.addEventListener("click", () => go({ r: g.table + "." + g.game, s: "0" }));
    item.append(b);
    list.append(item);
  }
  box.append(list);
  document.body.dataset.player = "1";  // drawn (tests, screenshots)
}

function element(tag, cls, text) {
  const el = document.createElement(tag);
  if (cls) el.className = cls;
  if (text) el.textContent = text;
  return el;
}

function ratingCard(variant, r, labels) {
  const card = element("section", "rating " + variant, "");
  card.dataset.variant = variant;
  const head = element("div", "rating-head", "");
  head.append(element("span", "title", r.title));
  const figure = r.games ? r.label : "\u2014";
  head.append(element("span", "figure", figure));
  card.append(head);
  const games = r.games ? fill(labels.games_n, { n: r.games }) : labels.no_rated;
  card.append(element("div", "info", games + (r.provisional && r.games ? " \u00b7 " + labels.not_settled : "")));
  if (r.history.length) {
    card.append(element("div", "chart-title", labels.history));
    card.append(chart(r.history));
  }
  return card;
}

// The rating after each counted game, oldest first, as a line with dots.
function chart(history) {
  const w = 320;
  const h = 110;
  const pad = { l: 34, r: 8, t: 10, b: 14 };
  const values = history.map((p) => p.rating);
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 20) {
    lo -= 10;
    hi += 10;
  }
  const x = (i) => pad.l + (history.length === 1 ? (w - pad.l - pad.r) / 2
    : (i * (w - pad.l - pad.r)) / (history.length - 1));
  const y = (v) => pad.t + ((hi - v) * (h - pad.t - pad.b)) / (hi - lo);
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", values.join(", "));
  const add = (tag, attrs, text) => {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    if (text !== undefined) el.textContent = text;
    svg.append(el);
    return el;
  };
  for (const v of [hi, lo]) {
    add("line", { x1: pad.l, x2: w - pad.r, y1: y(v), y2: y(v), class: "grid" });
    add("text", { x: pad.l - 4, y: y(v) + 4, "text-anchor": "end", class: "axis" }, Math.round(v));
  }
  const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  add("polyline", { points, class: "line" });
  history.forEach((p, i) => {
    const dot = add("circle", { cx: x(i), cy: y(p.rating), r: 3, class: p.change < 0 ? "dot down" : "dot" });
    const title = document.createElementNS(SVG, "title");
    title.textContent = `${p.rating} (${p.change >= 0 ? "+" : ""}${p.change})`;
    dot.append(title);
  });
  return svg;
}
