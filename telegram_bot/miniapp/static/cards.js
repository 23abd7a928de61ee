// Cards drawn by the page (#42): a card name of the engine ("10H", "AS",
// "JK") -> a DOM element. No dependencies; no markup from data (textContent).

export const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const RED = new Set(["D", "H"]);
const RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"];
const SUIT_ORDER = ["C", "D", "H", "S"];  // left to right, as the bot's hand (C3 lowest first)
let faces = {};  // the face ranks in the reader's language (В/Д/К/Т in ru, uk): the server's

export function setFaces(map) {
  faces = map || {};
}

export function parseCard(name) {
  if (name === "JK") return { rank: "JK", suit: null, joker: true };
  return { rank: name.slice(0, -1), suit: name.slice(-1), joker: false };
}

function rankLabel(rank) {
  return faces[rank] || rank;
}

export function cardLabel(name) {
  const c = parseCard(name);
  return c.joker ? "\u{1F0CF}" : rankLabel(c.rank) + SUITS[c.suit];
}

// The bot's order: plain suits (♣ ♦ ♥ ♠), then the trump suit, then jokers.
export function sortHand(cards, trump) {
  const key = (name) => {
    const c = parseCard(name);
    if (c.joker) return [2, 0, 0];
    return [c.suit === trump ? 1 : 0, SUIT_ORDER.indexOf(c.suit), RANKS.indexOf(c.rank)];
  };
  return [...cards].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    return ka[0] - kb[0] || ka[1] - kb[1] || ka[2] - kb[2];
  });
}

export function suitElement(suit) {
  const el = document.createElement("span");
  el.className = "suit" + (RED.has(suit) ? " red" : "");
  el.textContent = SUITS[suit];
  return el;
}

export function cardElement(name, classes = []) {
  const c = parseCard(name);
  const el = document.createElement("div");
  el.className = ["card", ...classes].join(" ");
  el.dataset.card = name;
  el.setAttribute("role", "img");
  el.setAttribute("aria-label", cardLabel(name));
  if (c.joker) el.classList.add("joker");
  else if (RED.has(c.suit)) el.classList.add("red");
  const corner = document.createElement("span");
  corner.className = "corner";
  corner.textContent = c.joker ? "JK" : rankLabel(c.rank) + SUITS[c.suit];
  const pip = document.createElement("span");
  pip.className = "pip";
  pip.textContent = c.joker ? "\u2605" : SUITS[c.suit];
  el.append(corner, pip);
  return el;
}

export function cardBack(classes = []) {
  const el = document.createElement("div");
  el.className = ["card", "back", ...classes].join(" ");
  return el;
}
