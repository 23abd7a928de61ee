// The replay viewer (#42): a finished game's every step at once (the
// server's, telegram_bot/views/page_replay.py: what the chat's replay
// message shows, no more), drawn as the live table is drawn (board.js);
// a slider, ◀ ▶ (a move), ⏮ ⏭ (a bout), the keyboard's arrows (Shift: a
// bout; Home, End).

import { fill, renderCentre, renderLines, renderSeats } from "./board.js";
import { setFaces } from "./cards.js";
import { read } from "./reads.js";

const $ = (id) => document.getElementById(id);
const viewer = { game: null, key: "", step: 0, shown: null };

export async function open(ref, step) {
  const [table, game] = String(ref).split(".");
  const key = table + "." + game;
  if (viewer.key !== key) {
    viewer.key = key;
    viewer.game = null;
    $("status").textContent = "";
    try {
      viewer.game = await read("api/replay", { table, game });
    } catch (e) {
      $("status").textContent = (e.body && (e.body.text || e.body.error)) || String(e.message);
      return;
    }
    setFaces(viewer.game.faces);
    controls();
  }
  show(step);
}

function controls() {
  const g = viewer.game;
  const slider = $("replay-slider");
  slider.min = "0";
  slider.max = String(g.last);
  slider.value = "0";
  slider.oninput = () => show(Number(slider.value));
  $("replay-first").onclick = () => show(prevBout());
  $("replay-prev").onclick = () => show(viewer.step - 1);
  $("replay-next").onclick = () => show(viewer.step + 1);
  $("replay-last").onclick = () => show(nextBout());
  $("replay-key").textContent = "\u{1F513} " + (g.labels.key || "Key") + ": " + g.seed;
}

function prevBout() {
  const starts = viewer.game.bout_starts.filter((s) => s < viewer.step);
  return starts.length ? starts[starts.length - 1] : 0;
}

function nextBout() {
  const next = viewer.game.bout_starts.find((s) => s > viewer.step);
  return next === undefined ? viewer.game.last : next;
}

function show(step) {
  const g = viewer.game;
  if (!g || document.body.dataset.route !== "replay") return;
  step = Math.max(0, Math.min(g.last, step));
  const frame = g.frames[step];
  const before = viewer.shown;
  const forward = before && before.step === step - 1;  // animated only a move ahead
  viewer.step = step;
  viewer.shown = frame;
  document.body.dataset.step = String(step);
  $("title").textContent = "\u{1F39E} " + (g.labels.replay || "Replay") + " \u00b7 " + g.title;
  $("timer").textContent = "";
  const view = { seats: g.seats, you: g.you };
  renderSeats(view, frame, frame.hands, frame.seat);
  // a jump (the slider, a bout, the end) draws the step as it is, nothing flies
  renderCentre(frame, forward ? before : frame, { labels: g.labels, suitOrder: g.suit_order });
  renderLines([frame.line]);
  $("replay-slider").value = String(step);
  $("replay-pos").textContent = fill(g.labels.position, {
    k: step, n: g.last, b: frame.bout, m: g.bouts,
  });
  $("replay-prev").disabled = step === 0;
  $("replay-first").disabled = step === 0;
  $("replay-next").disabled = step === g.last;
  $("replay-last").disabled = step === g.last;
}

document.addEventListener("keydown", (event) => {
  if (!viewer.game || document.body.dataset.route !== "replay") return;
  const keys = {
    ArrowLeft: () => (event.shiftKey ? prevBout() : viewer.step - 1),
    ArrowRight: () => (event.shiftKey ? nextBout() : viewer.step + 1),
    PageUp: prevBout,
    PageDown: nextBout,
    Home: () => 0,
    End: () => viewer.game.last,
  };
  if (!(event.key in keys)) return;
  if (event.target === $("replay-slider") && !event.shiftKey && event.key.startsWith("Arrow")) return;
  event.preventDefault();
  show(keys[event.key]());
});
