// The table drawn from a game's view (#42), shared by the live table
// (table.js) and the replay viewer (viewer.js): the seats, the bout's pairs,
// the stock, trump and discard, Chuvash's suit order, the last moves, and the
// short animations of a play, a take and a discard -- CSS animations the
// drawing only starts (classes and two custom properties), none under
// prefers-reduced-motion. A view is the server's (telegram_bot/views/page.py,
// page_replay.py); nothing here decides what a viewer may see.

import { SUITS, cardBack, cardElement, sortHand, suitElement } from "./cards.js";

const $ = (id) => document.getElementById(id);
const still = () => window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

export function fill(template, vars) {
  return String(template || "").replace(/\{(\w+)\}/g, (_, k) => (k in vars ? vars[k] : ""));
}

const ROLE_MARKS = { attacker: "\u2694\ufe0f", defender: "\u{1F6E1}\ufe0f", thrower: "\u270b",
  out: "\u2705", loser: "\u{1F413}", idle: "" };

// Every seat: name (text, never markup), role, cards held; ``hands`` (a
// replay's: every hand, the game being over) drawn small under each;
// ``mover``: the seat whose move a replay's step shows.
export function renderSeats(view, game, hands = null, mover = null) {
  const box = $("seats");
  box.replaceChildren();
  const acting = new Set((game && game.to_act) || []);
  view.seats.forEach((seat, i) => {
    const el = document.createElement("div");
    el.className = "seat";
    el.dataset.seat = String(i);
    if (i === view.you) el.classList.add("you");
    if (acting.has(i)) el.classList.add("acting");
    if (mover === i) el.classList.add("moved");
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = (seat.ai ? "\u{1F916} " : "") + seat.name;
    const info = document.createElement("span");
    info.className = "info";
    const role = game ? ROLE_MARKS[game.roles[i]] || "" : "";
    const count = game ? game.hand_counts[i] + " \u{1F0A0}" : "";
    info.textContent = [role, count].filter(Boolean).join(" ");
    el.append(name, info);
    if (hands && hands[i]) {
      const held = document.createElement("div");
      held.className = "seat-hand";
      for (const card of sortHand(hands[i], game && game.trump)) held.append(cardElement(card, ["mini"]));
      el.append(held);
    }
    box.append(el);
  });
}

// C3, where trumps would be: ♠ > ♥ > ♦ > ♣ (the server's order, highest first).
function suitOrder(order) {
  const el = document.createElement("div");
  el.className = "suit-order";
  el.setAttribute("aria-label", order.join(" > "));
  order.forEach((suit, i) => {
    if (i) el.append(document.createTextNode(" > "));
    el.append(suitElement(suit));
  });
  return el;
}

// The stock and trump, the discard, the bout; ``old``: the game drawn before
// (its cards not on the table before land; a bout gone is animated to the
// taker's seat or to the discard). ``onAttack(pair, attack)``: the live
// table's hook to make an uncovered attack a target.
export function renderCentre(game, old, { labels = {}, suitOrder: order = null, onAttack = null } = {}) {
  const deck = $("trump-card");
  const stock = $("stock");
  const bout = $("bout");
  const discard = $("discard");
  deck.replaceChildren();
  bout.replaceChildren();
  stock.replaceChildren();
  for (const gone of document.querySelectorAll("#centre > .leaving")) gone.remove();  // a jump since
  if (discard) discard.replaceChildren();
  if (!game) return;
  if (game.stock_count > 0) deck.append(cardBack());
  if (game.trump_card) deck.append(cardElement(game.trump_card, ["trump-mark"]));
  const trump = game.trump ? fill(labels.trump || "trump {suit}", { suit: SUITS[game.trump] })
    : labels.no_trump || "";
  const words = document.createElement("div");
  words.textContent = trump + " \u00b7 " + fill(labels.stock || "stock: {n}", { n: game.stock_count });
  stock.append(words);
  if (order && !game.trump) stock.append(suitOrder(order));
  if (discard) {
    discard.dataset.count = String(game.discard_count || 0);
    if (game.discard_count) discard.append(cardBack(["discarded"]));
  }
  const seen = new Set(old ? old.table.flat().filter(Boolean) : []);
  for (const [attack, cover] of game.table) {
    const pair = document.createElement("div");
    pair.className = "pair";
    const a = cardElement(attack, ["attack", ...(seen.has(attack) ? [] : ["new"])]);
    pair.append(a);
    if (cover) pair.append(cardElement(cover, ["cover", ...(seen.has(cover) ? [] : ["new"])]));
    else if (onAttack) onAttack(pair, attack, a);
    bout.append(pair);
  }
  if (old && old.table.length && !game.table.length) boutGone(old, game);
}

// The bout just ended: its cards leave the table -- to the defender's seat
// (taken) or to the discard (beaten off) -- as a short CSS animation.
function boutGone(old, game) {
  if (still()) return;
  const centre = $("centre");
  const bout = $("bout");
  const beaten = (game.discard_count || 0) > (old.discard_count || 0);
  const target = beaten ? $("discard") : document.querySelector(`.seat[data-seat="${old.defender}"]`);
  const layer = document.createElement("div");
  layer.className = "leaving " + (beaten ? "beaten" : "taken");
  layer.setAttribute("aria-hidden", "true");
  const from = bout.getBoundingClientRect();
  const box = centre.getBoundingClientRect();
  layer.style.left = from.left - box.left + "px";
  layer.style.top = from.top - box.top + "px";
  if (target) {
    const to = target.getBoundingClientRect();
    layer.style.setProperty("--dx", to.left + to.width / 2 - (from.left + 40) + "px");
    layer.style.setProperty("--dy", to.top + to.height / 2 - (from.top + 40) + "px");
  }
  for (const [attack, cover] of old.table) {
    const pair = document.createElement("div");
    pair.className = "pair";
    pair.append(cardElement(attack, ["attack"]));
    if (cover) pair.append(cardElement(cover, ["cover"]));
    layer.append(pair);
  }
  centre.append(layer);
  layer.addEventListener("animationend", () => layer.remove(), { once: true });
  setTimeout(() => layer.remove(), 900);  // however the animation went
}

// The last moves: the server's lines, in the reader's language.
export function renderLines(lines) {
  const box = $("moves");
  box.replaceChildren();
  for (const line of lines || []) {
    const el = document.createElement("div");
    el.className = "line";
    el.textContent = line;
    box.append(el);
  }
}
