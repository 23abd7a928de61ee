// Cards drawn by the page (#42): a card name of the engine ("10H", "AS",
// "JK") -> a DOM element. No dependencies; no markup from data (textContent).

export const SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };
const RED = new Set(["D", "H"]);

export function parseCard(name) {
  if (name === "JK") return { rank: "JK", suit: null, joker: true };
  return { rank: name.slice(0, -1), suit: name.slice(-1), joker: false };
}

export function cardLabel(name) {
  const c = parseCard(name);
  return c.joker ? "\u{1F0CF}" : c.rank + SUITS[c.suit];
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
  corner.textContent = c.joker ? "JK" : c.rank + SUITS[c.suit];
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
