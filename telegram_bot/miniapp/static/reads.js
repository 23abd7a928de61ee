// The page's reads beside its live table (#42): a replay, the player page --
// JSON from the bot's server, each request proving the user with the init
// data Telegram gave the page (Authorization: tma <initData>).

const tg = window.Telegram && window.Telegram.WebApp;

export async function read(path, params = {}) {
  const url = new URL(path, window.location.href);
  url.hash = "";
  url.search = new URLSearchParams(params).toString();
  const answer = await fetch(url, { headers: { Authorization: "tma " + (tg ? tg.initData : "") } });
  const body = await answer.json().catch(() => ({}));
  if (!answer.ok) throw Object.assign(new Error(body.error || String(answer.status)), { body });
  return body;
}
