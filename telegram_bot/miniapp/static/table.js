// The Mini App's table (#42): one live channel (a WebSocket) to the bot's
// server, the table drawn from each view it sends (board.js), taps turned
// into moves. The view is the server's (telegram_bot/views/page.py); the page
// keeps only its selection. The same page is the replay viewer (?r=<table>.<game>,
// viewer.js) and the player's page (?p=1, or no table to show: player.js).

import { renderCentre, renderLines, renderSeats } from "./board.js";
import { cardElement, cardLabel, setFaces, sortHand } from "./cards.js";

const tg = window.Telegram && window.Telegram.WebApp;
const $ = (id) => document.getElementById(id);

const page = {
  ws: null,
  view: null,
  labels: {},
  selected: [],   // cards of his hand, in tap order
  pending: null,  // the move in flight (its frame): sent again after a reconnect
  pendingSince: 0,
  table: "",      // the table shown: asked for again after a reconnect
  retry: 500,
  refused: false,
  timerTick: null,
  skew: 0,        // ms the server's clock is ahead of the phone's
};

// ------------------------------------------------------------------ channel
function liveUrl() {
  const url = new URL("live", window.location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  url.search = "";
  return url.toString();
}

function askedTable() {
  return new URLSearchParams(window.location.search).get("t") || "";
}

function connect() {
  const ws = new WebSocket(liveUrl());
  page.ws = ws;
  ws.onopen = () => {
    page.retry = 500;
    // the table shown, not what the URL asks now (his page or a replay may be open)
    const table = page.table || askedTable();
    ws.send(JSON.stringify({ t: "hello", init: tg ? tg.initData : "", table }));
  };
  ws.onmessage = (event) => receive(JSON.parse(event.data));
  ws.onclose = (event) => {
    if (page.refused || event.code === 4401) return;
    setTimeout(connect, page.retry);  // a network loss, a restart, a deploy
    page.retry = Math.min(page.retry * 2, 5000);
  };
}

function send(frame) {
  if (!page.ws || page.ws.readyState !== WebSocket.OPEN) return false;
  page.ws.send(JSON.stringify(frame));
  return true;
}

// A move sent while the channel was down, or whose answer a dropped channel
// lost, goes again once the server said hello: its request id makes it count
// once (applied, or answered as a duplicate or as stale).
function resend() {
  if (page.pending) send(page.pending);
}

function receive(frame) {
  switch (frame.t) {
    case "hello":
      page.labels = frame.labels || {};
      setFaces(frame.faces);
      if (page.labels.ratings) $("to-player").title = page.labels.ratings;
      if (frame.now) page.skew = frame.now - Date.now();  // the phone's clock may be off
      resend();
      break;
    case "view":
      show(frame.view);
      break;
    case "result":
      answered(frame);
      break;
    case "refused":
      page.refused = true;
      say(frame.reason);
      break;
    case "none":  // no table of his: his own page (the menu button's)
      page.refused = true;
      go({ p: "1" }, true);
      break;
    case "gone":
      page.refused = true;
      say("\u2014");
      break;
  }
}

function answered(frame) {
  if (page.pending && frame.id === page.pending.id) page.pending = null;
  if (frame.version) document.body.dataset.moved = String(frame.version);  // his last move
  if (frame.ok) {
    say("");
    return;
  }
  if (frame.text) say(frame.text);
  if (tg && tg.HapticFeedback) tg.HapticFeedback.notificationOccurred("error");
}

function say(text) {
  $("status").textContent = text || "";
}

// ------------------------------------------------------------------ moves
function newId() {
  const bytes = new Uint8Array(9);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => (b % 36).toString(36)).join("");
}

const PENDING_FOR = 15000;  // ms: a move never answered does not lock the page

function play(action) {
  const view = page.view;
  if (!view) return;
  if (page.pending && Date.now() - page.pendingSince < PENDING_FOR) return;
  page.pending = { t: "move", id: newId(), v: view.version, stamp: view.stamp, a: action };
  page.pendingSince = Date.now();
  send(page.pending);  // or once the channel is back (resend)
  page.selected = [];
  if (tg && tg.HapticFeedback) tg.HapticFeedback.impactOccurred("light");
  render();
}

function legal() {
  return (page.view && page.view.game && page.view.game.legal) || [];
}

// The moves a card of his hand makes now (engine text forms).
function movesOf(card) {
  return legal().filter((a) => {
    if ("LTRS".includes(a[0])) return a.slice(1) === card;
    if (a[0] === "C") return a.endsWith(card) && a.length > card.length + 1;
    return false;
  });
}

// What the selected cards make together: a lead or a throw-in of them all.
function selectionMove() {
  const cards = page.selected;
  if (!cards.length) return null;
  for (const letter of ["L", "T"]) {
    if (cards.every((c) => legal().includes(letter + c))) return letter + cards.join("");
  }
  return null;
}

function tapCard(card) {
  const at = page.selected.indexOf(card);
  if (at >= 0) {  // the second tap plays
    const together = selectionMove();
    const own = movesOf(card).filter((a) => "LT".includes(a[0]) || a[0] === "C");
    if (together && page.selected.length > 1) play(together);
    else if (own.length === 1) play(own[0]);
    else if (together) play(together);
    else {
      page.selected.splice(at, 1);
      render();
    }
    return;
  }
  if (!movesOf(card).length) return;
  page.selected.push(card);
  if (tg && tg.HapticFeedback) tg.HapticFeedback.selectionChanged();
  render();
}

function tapAttack(attack) {
  const card = page.selected[page.selected.length - 1];
  if (card && legal().includes("C" + attack + card)) play("C" + attack + card);
}

// ------------------------------------------------------------------ drawing
function show(view) {
  if (page.table && view.table !== page.table) return;  // another table's: not shown here
  page.table = view.table;
  const before = page.view;
  if (before && view.version < before.version) return;  // never back
  const myTurnNow = view.game && view.game.legal && view.game.legal.length > 0;
  const myTurnBefore = before && before.game && before.game.legal && before.game.legal.length > 0;
  page.view = view;
  const hand = (view.game && view.game.hand) || [];
  page.selected = page.selected.filter((c) => hand.includes(c) && movesOf(c).length);
  if (myTurnNow && !myTurnBefore && tg && tg.HapticFeedback) {
    tg.HapticFeedback.notificationOccurred("success");
  }
  render(before);
}

// ``before``: the view drawn before (what is new in this one is animated);
// a redraw of the same view (a tap) animates nothing.
function render(before = page.view) {
  const view = page.view;
  if (!view || !onTable()) return;  // a replay or his page is shown: drawn on the way back
  const game = view.game;
  document.body.dataset.version = String(view.version);  // what it shows (tests, debugging)
  $("title").textContent = titleOf(view);
  renderBoard(view, game, before && before.game);
  renderHand(game, before && before.game);
  renderActions(game);
  renderMoves(view, game);
  renderTimer(view);
  renderFair(view);
  renderMainButton();
}

// The deal's commitment, as the game's first message shows it (a hash: the
// deal's key comes with its replay, after the end).
function renderFair(view) {
  const el = $("fair");
  el.textContent = view.fair ? "\u{1F512} " + (page.labels.fair || "Fair deal") + ": " + view.fair.slice(0, 16) + "\u2026" : "";
  el.title = view.fair || "";
}

function titleOf(view) {
  const variant = view.title || (view.variant === "chuvash" ? "Chuvash" : "Shchelkovsky");
  if (view.status === "playing") return variant;
  if (view.status === "open") return variant + " \u00b7 lobby";
  return variant + " \u00b7 " + view.status;
}

function renderBoard(view, game, old) {
  renderSeats(view, game);
  const mine = page.selected[page.selected.length - 1];
  renderCentre(game, old, {
    labels: page.labels,
    suitOrder: view.suit_order,
    onAttack: (pair, attack, el) => {
      if (mine && legal().includes("C" + attack + mine)) {
        pair.classList.add("target");
        el.addEventListener("click", () => tapAttack(attack));
      }
    },
  });
}

function renderHand(game, old) {
  const box = $("hand");
  box.replaceChildren();
  if (!game || !game.hand) return;
  const marked = new Set();  // a multi-deck hand holds twins: one of them is selected
  const held = new Set((old && old.hand) || []);  // a card not held before was drawn or taken
  for (const card of sortHand(game.hand, game.trump)) {
    const playable = movesOf(card).length > 0;
    const classes = [playable ? "playable" : "dim"];
    if (old && !held.has(card)) classes.push("new");
    if (page.selected.includes(card) && !marked.has(card)) {
      classes.push("selected");
      marked.add(card);
    }
    const el = cardElement(card, classes);
    el.addEventListener("click", () => tapCard(card));
    box.append(el);
  }
}

function button(text, action, style = "") {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  if (style) b.className = style;
  b.addEventListener("click", () => play(action));
  return b;
}

function renderActions(game) {
  const box = $("actions");
  box.replaceChildren();
  const over = page.view && page.view.result;
  if (over) {  // the game over: its replay, step by step (#42)
    const b = document.createElement("button");
    b.type = "button";
    b.id = "to-replay";
    b.textContent = "\u{1F39E} " + (page.labels.replay || "Replay");
    b.addEventListener("click", () => go({ r: page.view.table + "." + over.game, s: "0" }));
    box.append(b);
  }
  if (!game) return;
  const moves = legal();
  const card = page.selected[page.selected.length - 1];
  if (card) {
    for (const a of movesOf(card)) {
      if (a[0] === "R") box.append(button("\u21aa " + cardLabel(card), a, "quiet"));
      if (a[0] === "S") box.append(button("\u{1F3AB} " + cardLabel(card), a, "quiet"));
    }
  }
  if (moves.includes("K")) box.append(button(page.labels.take || "Take", "K", "danger"));
  if (moves.includes("P")) {
    const covered = game.table.length > 0 && game.table.every(([, c]) => c);
    box.append(button(covered ? page.labels.done || "Done" : page.labels.pass || "Pass", "P", "quiet"));
  }
}

function renderMoves(view, game) {
  const box = $("moves");
  if (view.result) {  // the game's end: who lost (or a draw)
    const loser = view.result.loser;
    box.textContent = view.result.draw ? "\u{1F91D}" : "\u{1F413} " + (view.seats[loser] || {}).name;
    return;
  }
  if (!game) {
    box.textContent = "";
    return;
  }
  renderLines(view.lines);  // the bot's own words, in his language
}

function renderTimer(view) {
  clearInterval(page.timerTick);
  const el = $("timer");
  const tick = () => {
    if (!onTable()) return;
    if (!view.deadline || view.status !== "playing") {
      el.textContent = "";
      return;
    }
    const left = Math.max(0, Math.round((view.deadline - Date.now() - page.skew) / 1000));
    el.textContent = "\u23f3 " + left + "s";
    el.classList.toggle("urgent", left <= 10);
  };
  tick();
  page.timerTick = setInterval(tick, 1000);
}

function renderMainButton() {
  if (!tg || !tg.MainButton) return;
  const move = selectionMove();
  if (move && page.selected.length) {
    tg.MainButton.setText((page.labels.play || "Play") + " (" + page.selected.length + ")");
    tg.MainButton.show();
  } else {
    tg.MainButton.hide();
  }
}

function onMainButton() {
  const move = selectionMove();
  if (move) play(move);
}

// ------------------------------------------------------------------ routes
function onTable() {
  return document.body.dataset.route === "table";
}

// ?t=<table> (or none): the live table; ?r=<table>.<game>[&s=<step>]: the
// replay viewer; ?p=1: his own page. Moving between them keeps the URL's
// hash, where Telegram puts the init data.
let live = false;

export function go(params, replace = false) {
  const url = new URL(window.location.href);
  url.search = new URLSearchParams(params).toString();
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  route();
}

// A group's result message opens a replay by the app's direct link:
// startapp=r<game>_<table> (longer than any table id, 11 characters).
function startedReplay() {
  const start = (tg && tg.initDataUnsafe && tg.initDataUnsafe.start_param) || "";
  const m = /^r(\d{1,9})_([A-Za-z0-9_-]{1,64})$/.exec(start);
  return m && start.length > 11 ? m[2] + "." + m[1] : null;
}

function route() {
  const q = new URLSearchParams(window.location.search);
  if (![...q.keys()].length && startedReplay()) q.set("r", startedReplay());
  const back = tg && tg.BackButton;
  if (q.get("r")) {
    document.body.dataset.route = "replay";
    import("./viewer.js").then((m) => m.open(q.get("r"), Number(q.get("s") || 0)));
  } else if (q.get("p")) {
    document.body.dataset.route = "player";
    import("./player.js").then((m) => m.open());
  } else {
    document.body.dataset.route = "table";
    if (!live) {
      live = true;
      connect();
    } else {
      render();  // back from a replay or his page: the table of now, drawn again
    }
  }
  if (document.body.dataset.route !== "table" && tg && tg.MainButton) tg.MainButton.hide();
  if (back) {
    if (document.body.dataset.route !== "table" && history.length > 1) back.show();
    else back.hide();
  }
}

// ------------------------------------------------------------------ start
if (tg) {
  tg.ready();
  if (tg.expand) tg.expand();
  if (tg.MainButton) tg.MainButton.onClick(onMainButton);
  if (tg.BackButton) tg.BackButton.onClick(() => history.back());
}
window.addEventListener("popstate", route);
$("to-player").addEventListener("click", () => go({ p: "1" }));
route();
