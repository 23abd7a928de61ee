// The sandbox page: simulated Telegram users side by side, talking to the real bot
// through the local fake Bot API (sandbox/fake_api).
//
//   GET  /_fake/snapshot            the whole world (users, chats, messages)
//   GET  /_fake/events?since=N      changes after N (long poll)
//   POST /_fake/act                 a simulated user acts (send, click, ...)
//
// The page renders each user's open chat from the snapshot, replacing only the
// messages whose version changed (so edits happen in place), and shows callback
// answers (toast / alert) and inline-mode results from the event feed. A group's
// ephemeral messages (chat.ephemeral) are shown only in their receiver's column.
"use strict";

const PRESENT = new Set(["creator", "administrator", "member", "restricted"]);
const COLORS = ["#e17076", "#7bc862", "#65aadd", "#a695e7", "#ee7aae", "#6ec9cb", "#faa774"];
const LANG_NAMES = { en: "English", ru: "Русский", uk: "Українська", "": "(none)" };
const TOAST_MS = 3500;
// Changes of the world that nothing on the page shows (no snapshot needed).
const UNSEEN = new Set([
  "update", "update_delivered", "callback_query", "chat_action", "commands_set",
  "bot_settings", "webhook_set", "webhook_deleted", "web_app_opened",
]);
// A Mini App's direct link: t.me/<bot>/<short name>?startapp=<param> (#42).
const DIRECT_LINK = /^(?:https?:\/\/)?(?:t|telegram)\.me\/([A-Za-z0-9_]{5,32})\/([A-Za-z0-9_]{3,30})\/?(?:\?.*)?$/i;

const state = {
  config: null,
  snap: null,
  cursor: 0, // last event seq handled
  columns: new Map(), // user id -> Column
  chats: new Map(), // chat id -> chat json (from the last snapshot)
  inlineWaits: new Map(), // inline query id -> {userId, chatId}
  refreshing: null,
  refreshAgain: false,
  typing: new Map(), // chat id -> timer
};

// ------------------------------------------------------------------ helpers
const $ = (sel, root = document) => root.querySelector(sel);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

async function getJSON(url) {
  const response = await fetch(url, { cache: "no-store" });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return response.json();
}

/** One action of a simulated user; resolves to its result or throws its error. */
async function act(body) {
  const response = await fetch("/_fake/act", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({ ok: false, error: `HTTP ${response.status}` }));
  if (!answer.ok) throw new Error(answer.error || "the action failed");
  scheduleRefresh();
  return answer.result;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function botUsername() {
  return (state.config && state.config.bot.username) || "";
}

function userById(id) {
  return state.snap ? state.snap.users.find((u) => u.id === id) : undefined;
}

function displayName(user) {
  if (!user) return "?";
  return user.last_name ? `${user.first_name} ${user.last_name}` : user.first_name;
}

function colorOf(id) {
  return COLORS[Math.abs(id) % COLORS.length];
}

function timeOf(unix, locale) {
  const d = new Date(unix * 1000);
  return d.toLocaleTimeString(locale, { hour: "2-digit", minute: "2-digit" });
}

/** Ephemeral messages all have message_id 0: they are keyed by their own id. */
function keyOf(message) {
  const ephemeral = message.ephemeral_message_id;
  return ephemeral !== undefined && ephemeral !== null ? `e${ephemeral}` : String(message.message_id);
}

/** The chat as one user's app shows it: his ephemeral messages too, each in place of
 * the message it replaced (replace_callback_query_message), if any. */
function viewOf(chat, userId) {
  const mine = (chat.ephemeral || []).filter((m) => m.receiver_user && m.receiver_user.id === userId);
  const replacing = new Map();
  for (const m of mine) if (m.replaces_message_id !== null && m.replaces_message_id !== undefined) replacing.set(m.replaces_message_id, m);
  const items = [];
  const placed = new Set();
  for (const m of chat.messages) {
    const instead = replacing.get(m.message_id);
    if (instead) placed.add(instead);
    items.push({ at: m.created, message: instead || m });
  }
  for (const m of mine) if (!placed.has(m)) items.push({ at: m.created, message: m });
  items.sort((a, b) => a.at - b.at);
  return items.map((item) => item.message);
}

// ------------------------------------------------------------------ date_time entities
const WEEKDAY = { weekday: "long" };
const DATE_SHORT = { day: "2-digit", month: "2-digit", year: "2-digit" };
const DATE_LONG = { day: "numeric", month: "long", year: "numeric" };
const TIME_SHORT = { hour: "2-digit", minute: "2-digit" };
const TIME_LONG = { hour: "2-digit", minute: "2-digit", second: "2-digit" };

/** The language a user's Telegram app speaks (#41): his ``language_code`` in the
 * fake's user record, English when he has none or one Intl does not know -- never
 * the browser's own locale («ход закончится in 58 seconds» in a Russian hand). */
function appLocale(user) {
  const code = user && user.language_code;
  if (!code) return "en";
  try {
    return Intl.getCanonicalLocales(code)[0] || "en";
  } catch {
    return "en";
  }
}

/** A date as a client renders a date_time entity: "r" relative ("in 5 minutes"),
 * else the day of week (w), short/long date (d/D) and short/long time (t/T) in
 * the viewer's language (``locale``, :func:`appLocale`) and the browser's time
 * zone; an empty format keeps the text as written. */
function formatDateTime(unix, format, fallback, locale = "en") {
  const at = new Date(unix * 1000);
  if (!format) return fallback;
  if (format === "r") {
    const seconds = Math.round((at.getTime() - Date.now()) / 1000);
    const units = [["year", 31536000], ["month", 2592000], ["day", 86400], ["hour", 3600], ["minute", 60], ["second", 1]];
    const [unit, size] = units.find(([, s]) => Math.abs(seconds) >= s) || ["second", 1];
    return new Intl.RelativeTimeFormat(locale, { numeric: "auto" }).format(Math.round(seconds / size), unit);
  }
  const parts = [];
  if (format.includes("w")) parts.push(at.toLocaleDateString(locale, WEEKDAY));
  if (format.includes("d")) parts.push(at.toLocaleDateString(locale, DATE_SHORT));
  if (format.includes("D")) parts.push(at.toLocaleDateString(locale, DATE_LONG));
  if (format.includes("t")) parts.push(at.toLocaleTimeString(locale, TIME_SHORT));
  if (format.includes("T")) parts.push(at.toLocaleTimeString(locale, TIME_LONG));
  return parts.join(", ");
}

function timeNode(unix, format, text, locale) {
  const full = new Date(unix * 1000).toLocaleString(locale);
  return el("span", { class: "tg-time", dataset: { unix: String(unix), format: format || "", locale }, title: `${full} (${text})`, text: formatDateTime(unix, format, text, locale) });
}

function canSee(userId, chat) {
  if (chat.user_id !== null && chat.user_id !== undefined) return chat.user_id === userId;
  if (chat.peer_ids) return chat.peer_ids.includes(userId);
  return PRESENT.has(chat.members[String(userId)]);
}

/** A t.me link to this bot: {start, startgroup} payloads, or null for other URLs. */
function botLink(url) {
  let parsed;
  try {
    parsed = new URL(url.includes("://") ? url : `https://${url}`);
  } catch {
    return null;
  }
  const name = parsed.protocol === "tg:" ? parsed.searchParams.get("domain") : parsed.pathname.replace(/^\/+|\/+$/g, "");
  const host = parsed.hostname;
  if (parsed.protocol !== "tg:" && host !== "t.me" && host !== "telegram.me") return null;
  if (!name || name.toLowerCase() !== botUsername().toLowerCase()) return null;
  return {
    start: parsed.searchParams.get("start"),
    startgroup: parsed.searchParams.get("startgroup"),
  };
}

/** A Mini App's direct link of this bot (#42). */
function isDirectLink(url) {
  const m = DIRECT_LINK.exec(url);
  return Boolean(m) && m[1].toLowerCase() === botUsername().toLowerCase();
}

/** The menu button of a user's chat with the bot (setChatMenuButton, #42). */
function menuButtonOf(userId) {
  const buttons = state.snap && state.snap.menu_buttons;
  if (!buttons) return { type: "commands" };
  return buttons.chats[String(userId)] || buttons.default || { type: "commands" };
}

/** A link to a message of a supergroup (``t.me/c/<id>/<message>``, #41: the
 * answer to /arena links to the arena's message): {chatId, messageId}, or null. */
function messageLink(url) {
  const m = /^(?:https?:\/\/)?(?:t|telegram)\.me\/c\/(\d+)\/(\d+)\/?$/i.exec(url);
  return m ? { chatId: -Number(`100${m[1]}`), messageId: Number(m[2]) } : null;
}

// ------------------------------------------------------------------ the bot's HTML
// Telegram's HTML subset: everything else is reduced to its text.
const TAGS = {
  B: "b", STRONG: "b", I: "i", EM: "i", U: "u", INS: "u", S: "s", STRIKE: "s", DEL: "s",
  CODE: "code", PRE: "pre", A: "a", "TG-SPOILER": "span", BLOCKQUOTE: "blockquote",
};

/** ``html`` as the app of a user speaking ``locale`` shows it. */
function sanitize(html, locale) {
  const doc = new DOMParser().parseFromString(`<!doctype html><body>${html}</body>`, "text/html");
  const out = document.createDocumentFragment();
  copyAllowed(doc.body, out, locale);
  return out;
}

function copyAllowed(source, target, locale) {
  for (const node of source.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) {
      target.append(node.data);
      continue;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) continue;
    if (node.tagName === "TG-TIME") {
      target.append(timeNode(Number(node.getAttribute("unix")), node.getAttribute("format"), node.textContent, locale));
      continue;
    }
    let tag = TAGS[node.tagName];
    if (node.tagName === "SPAN" && node.classList.contains("tg-spoiler")) tag = "span";
    if (!tag) {
      copyAllowed(node, target, locale);
      continue;
    }
    const copy = document.createElement(tag);
    if (tag === "a") {
      const href = node.getAttribute("href") || "";
      if (/^(https?:|tg:)/i.test(href)) {
        copy.setAttribute("href", href);
        copy.dataset.link = href;
      }
    }
    if (tag === "span") copy.className = "spoiler";
    copyAllowed(node, copy, locale);
    target.append(copy);
  }
}

/** Plain text with /commands highlighted (a user's message, or a bot's without HTML). */
function plainText(text) {
  const out = document.createDocumentFragment();
  const parts = String(text).split(/(\/[A-Za-z0-9_]+(?:@[A-Za-z0-9_]+)?)/);
  parts.forEach((part, i) => {
    out.append(i % 2 ? el("span", { class: "command", text: part }) : part);
  });
  return out;
}

function serviceText(message) {
  const who = displayName(message.from);
  if (message.new_chat_members) {
    const added = message.new_chat_members.map(displayName).join(", ");
    return added === who ? `${who} joined the group` : `${who} added ${added}`;
  }
  if (message.left_chat_member) {
    const gone = displayName(message.left_chat_member);
    return gone === who ? `${who} left the group` : `${who} removed ${gone}`;
  }
  if (message.group_chat_created) return `${who} created the group`;
  return null;
}

// ------------------------------------------------------------------ one user's column
class Column {
  constructor(user) {
    this.userId = user.id;
    this.activeChat = user.id; // his chat with the bot
    this.rendered = new Map(); // message id -> {version, node}
    this.renderedChat = null;
    this.renderedLocale = null; // the language its messages were drawn in
    this.unread = new Map(); // chat id -> count
    this.seen = new Map(); // chat id -> highest message id seen
    this.pending = 0; // button presses not answered yet
    this.answers = 0; // answers with a text shown
    this.toastTimer = null;

    const node = $("#column-template").content.firstElementChild.cloneNode(true);
    this.node = node;
    node.dataset.user = user.first_name;
    node.dataset.userId = String(user.id);
    node.dataset.pending = "0";
    node.dataset.answers = "0";
    $(".avatar", node).style.background = colorOf(user.id);
    this.messagesNode = $(".messages", node);
    this.input = $(".input", node);

    const select = $(".lang-select", node);
    for (const code of state.config.languages.concat([""])) {
      select.append(el("option", { value: code, text: LANG_NAMES[code] || code }));
    }
    select.addEventListener("change", () => this.setLanguage(select.value));
    $(".open-link", node).addEventListener("click", () => this.askLink());
    $(".composer", node).addEventListener("submit", (event) => {
      event.preventDefault();
      this.sendInput();
    });
    $(".cmd-menu", node).addEventListener("click", () => this.toggleCommands());
    $(".alert-ok", node).addEventListener("click", () => {
      $(".alert", node).hidden = true;
    });
    this.messagesNode.addEventListener("click", (event) => this.onMessagesClick(event));
    // the Mini App's frame (#42): over the column, as the app covers a phone's chat
    this.theme = "light";
    this.app = $(".miniapp", node);
    this.appFrame = $(".miniapp-frame", node);
    this.appMain = $(".miniapp-main", node);
    $(".miniapp-close", node).addEventListener("click", () => this.closeApp());
    $(".miniapp-theme", node).addEventListener("click", () => this.toggleTheme());
    $(".miniapp-back", node).addEventListener("click", () => this.toApp("back_button_pressed"));
    this.appMain.addEventListener("click", () => this.toApp("main_button_pressed"));
    $(".menu-app", node).addEventListener("click", () => this.openApp({ action: "menu_app" }));
    $("#users").append(node);
  }

  get user() {
    return userById(this.userId);
  }

  get chat() {
    return state.chats.get(this.activeChat);
  }

  // -------------------------------------------------------------- rendering
  render() {
    const user = this.user;
    if (!user) return;
    $(".name", this.node).textContent = displayName(user);
    $(".handle", this.node).textContent = user.username ? `@${user.username}` : `id ${user.id}`;
    $(".avatar", this.node).textContent = user.first_name.slice(0, 1).toUpperCase();
    const select = $(".lang-select", this.node);
    if (document.activeElement !== select) select.value = user.language_code || "";
    this.renderTabs();
    this.renderChat();
  }

  visibleChats() {
    const chats = [...state.chats.values()].filter((c) => c.id !== this.userId && canSee(this.userId, c));
    chats.sort((a, b) => (a.type === "private") - (b.type === "private") || Math.abs(a.id) - Math.abs(b.id));
    return chats;
  }

  chatTitle(chat) {
    if (!chat || chat.id === this.userId) return state.config.bot.first_name;
    if (chat.peer_ids) {
      const other = chat.peer_ids.find((id) => id !== this.userId);
      return displayName(userById(other));
    }
    return chat.title || "Group";
  }

  renderTabs() {
    const nav = $(".chat-tabs", this.node);
    const tabs = [{ id: this.userId, label: `🤖 ${state.config.bot.first_name}` }];
    for (const chat of this.visibleChats()) {
      tabs.push({ id: chat.id, label: `${chat.peer_ids ? "💬" : "👥"} ${this.chatTitle(chat)}` });
    }
    if (!tabs.some((t) => t.id === this.activeChat)) this.activeChat = this.userId;
    nav.replaceChildren(
      ...tabs.map((tab) => {
        const count = tab.id === this.activeChat ? 0 : this.unread.get(tab.id) || 0;
        return el(
          "button",
          {
            type: "button",
            class: `tab${tab.id === this.activeChat ? " active" : ""}`,
            dataset: { chatId: String(tab.id) },
            onclick: () => this.open(tab.id),
          },
          tab.label,
          count ? el("span", { class: "badge", text: String(count) }) : null,
        );
      }),
    );
  }

  open(chatId) {
    this.activeChat = chatId;
    this.unread.delete(chatId);
    $(".cmd-list", this.node).hidden = true;
    this.render();
    this.scrollDown();
  }

  renderChat() {
    const chat = this.chat;
    const isBotChat = this.activeChat === this.userId;
    $(".chat-title", this.node).textContent = this.chatTitle(chat);
    $(".chat-sub", this.node).textContent = this.chatSubtitle(chat, isBotChat);
    this.renderTools(chat, isBotChat);
    const locale = appLocale(this.user);
    if (this.renderedChat !== this.activeChat || this.renderedLocale !== locale) {
      // a new language redraws every message: its times speak it (#41)
      this.messagesNode.replaceChildren();
      this.rendered.clear();
      this.renderedChat = this.activeChat;
      this.renderedLocale = locale;
    }
    const messages = chat ? viewOf(chat, this.userId) : [];
    const nearBottom = this.isNearBottom();
    if (!messages.length) {
      this.messagesNode.replaceChildren(this.emptyState(chat, isBotChat));
      this.rendered.clear();
    } else {
      const empty = $(".empty", this.messagesNode);
      if (empty) empty.remove();
      this.renderMessages(chat, messages);
    }
    this.seen.set(this.activeChat, chat ? lastId(chat) : 0);
    if (nearBottom) this.scrollDown();
    const composer = $(".composer", this.node);
    const blocked = chat && chat.type !== "private" && !canSee(this.userId, chat);
    composer.classList.toggle("disabled", Boolean(blocked));
    this.input.placeholder = isBotChat ? `Message @${botUsername()}` : "Message";
    const menu = menuButtonOf(this.userId);
    const menuNode = $(".menu-app", this.node);
    menuNode.hidden = !(isBotChat && menu.type === "web_app");
    menuNode.textContent = menu.text || "";
  }

  chatSubtitle(chat, isBotChat) {
    if (isBotChat) return `bot · @${botUsername()}`;
    if (!chat) return "";
    if (chat.peer_ids) return "private chat (the bot is not here)";
    const members = Object.entries(chat.members)
      .filter(([, status]) => PRESENT.has(status))
      .map(([id]) => displayName(userById(Number(id))));
    if (chat.bot_status && PRESENT.has(chat.bot_status)) members.push(state.config.bot.first_name);
    return `${members.length} members: ${members.join(", ")}`;
  }

  renderTools(chat, isBotChat) {
    const tools = $(".chat-tools", this.node);
    const buttons = [];
    if (chat && chat.type !== "private") {
      if (!PRESENT.has(chat.bot_status)) {
        buttons.push(el("button", { type: "button", class: "btn small primary add-bot", text: "Add the bot", onclick: () => this.groupAction("add_bot") }));
      }
      const outside = state.snap.users.filter((u) => !PRESENT.has(chat.members[String(u.id)]));
      for (const other of outside) {
        buttons.push(el("button", { type: "button", class: "btn small", text: `+ ${other.first_name}`, title: `Add ${displayName(other)} to the group`, onclick: () => this.addMember(other.id) }));
      }
      buttons.push(el("button", { type: "button", class: "btn small", text: "Leave", onclick: () => this.groupAction("leave") }));
      // Offline: ephemeral messages (and their edits) do not reach him.
      const online = !this.user || this.user.online !== false;
      buttons.push(el("button", { type: "button", class: "btn small online-toggle", text: online ? "Go offline" : "Go online", onclick: () => this.run({ action: "set_online", online: !online }) }));
    } else if (isBotChat && this.user && this.user.blocked) {
      buttons.push(el("button", { type: "button", class: "btn small", text: "Unblock", onclick: () => this.run({ action: "unblock" }) }));
    }
    tools.replaceChildren(...buttons);
  }

  emptyState(chat, isBotChat) {
    if (isBotChat) {
      return el(
        "div",
        { class: "empty" },
        el("div", { text: `${state.config.bot.first_name} — two durak-family card games.` }),
        el("button", { type: "button", class: "btn primary start-bot", text: "START", onclick: () => this.run({ action: "start" }) }),
      );
    }
    return el("div", { class: "empty", text: "No messages here yet." });
  }

  renderMessages(chat, messages) {
    const wanted = new Set(messages.map(keyOf));
    for (const [id, entry] of this.rendered) {
      if (!wanted.has(id)) {
        entry.node.remove();
        this.rendered.delete(id);
      }
    }
    let previous = null;
    for (const message of messages) {
      const entry = this.rendered.get(keyOf(message));
      if (entry && entry.version === message.version) {
        previous = entry.node;
        continue;
      }
      const node = this.messageNode(chat, message);
      if (entry) {
        entry.node.replaceWith(node);
        node.classList.add("flash");
      } else if (previous) {
        previous.after(node);
      } else {
        this.messagesNode.prepend(node);
      }
      this.rendered.set(keyOf(message), { version: message.version, node });
      previous = node;
    }
  }

  messageNode(chat, message) {
    const bot = state.config.bot;
    const fromBot = message.from && message.from.id === bot.id;
    const service = serviceText(message);
    const ephemeral = message.ephemeral_message_id !== undefined && message.ephemeral_message_id !== null;
    const data = {
      messageId: String(message.message_id),
      version: String(message.version),
      from: fromBot ? "bot" : message.from && message.from.id === this.userId ? "me" : "user",
    };
    if (service !== null && message.text === undefined) {
      return el("div", { class: "service", dataset: data, text: service });
    }
    const out = message.from && message.from.id === this.userId;
    const bubble = el("div", { class: "bubble" });
    if (chat.type !== "private" && !out) {
      bubble.append(el("div", { class: "sender", text: displayName(message.from), style: fromBot ? null : `color:${colorOf(message.from.id)}` }));
    }
    if (ephemeral) data.ephemeralMessageId = String(message.ephemeral_message_id);
    if (message.via_bot) bubble.append(el("div", { class: "via", text: `via @${message.via_bot.username}` }));
    const replied = message.reply_to_message_id && chat.messages.find((m) => m.message_id === message.reply_to_message_id);
    if (replied) {
      // a reply shows what it answers above its text, as Telegram's apps do (#41: /leave)
      bubble.append(el("div", { class: "reply", text: `${displayName(replied.from)}: ${replied.text || ""}` }));
    }
    const body = el("div", { class: "text" });
    if (message.parse_mode && message.parse_mode.toUpperCase() === "HTML" && message.source) {
      body.append(sanitize(message.source, appLocale(this.user)));
    } else {
      body.append(plainText(message.text || ""));
    }
    const meta = el("span", { class: "meta", text: (ephemeral ? "only you can see this · " : "") + (message.edit_date ? "edited " : "") + timeOf(message.date, appLocale(this.user)) });
    bubble.append(body, meta);
    const node = el("div", { class: `msg ${out ? "out" : "in"}${ephemeral ? " ephemeral" : ""}`, dataset: data }, bubble);
    const keyboard = message.reply_markup && message.reply_markup.inline_keyboard;
    if (keyboard && keyboard.length) node.append(this.keyboardNode(message, keyboard));
    return node;
  }

  keyboardNode(message, keyboard) {
    const kb = el("div", { class: "kb" });
    for (const row of keyboard) {
      const line = el("div", { class: "kb-row" });
      for (const button of row) {
        const data = { messageId: String(message.message_id) };
        if (button.callback_data !== undefined) data.callback = button.callback_data;
        if (button.style) data.style = button.style;
        if (button.url !== undefined) data.url = button.url;
        if (button.web_app !== undefined) data.webApp = button.web_app.url;
        for (const key of ["switch_inline_query", "switch_inline_query_current_chat", "switch_inline_query_chosen_chat"]) {
          if (button[key] !== undefined) {
            const value = button[key];
            data.switch = typeof value === "object" ? value.query || "" : String(value);
            data.switchKind = key;
          }
        }
        line.append(
          el("button", {
            type: "button",
            class: `kb-btn${button.style ? ` style-${button.style}` : ""}${button.web_app !== undefined ? " web-app" : ""}`,
            dataset: data,
            title: button.disabled ? `${button.text} (disabled)` : button.text,
            text: button.text,
            // A disabled button "does nothing": no callback query is sent.
            disabled: button.disabled !== undefined,
            onclick: button.disabled !== undefined ? undefined : (event) => this.pressButton(message, button, event.currentTarget),
          }),
        );
      }
      kb.append(line);
    }
    return kb;
  }

  isNearBottom() {
    const box = this.messagesNode;
    return box.scrollHeight - box.scrollTop - box.clientHeight < 80;
  }

  scrollDown() {
    this.messagesNode.scrollTop = this.messagesNode.scrollHeight;
  }

  // -------------------------------------------------------------- feedback
  toast(text) {
    const toast = $(".toast", this.node);
    toast.textContent = text;
    toast.hidden = false;
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => {
      toast.hidden = true;
    }, TOAST_MS);
  }

  alert(text) {
    $(".alert-text", this.node).textContent = text;
    $(".alert", this.node).hidden = false;
    $(".alert-ok", this.node).focus();
  }

  showError(error) {
    this.toast(`⚠ ${error.message || error}`);
  }

  setPending(delta) {
    this.pending = Math.max(0, this.pending + delta);
    this.node.dataset.pending = String(this.pending);
  }

  onAnswer(detail) {
    this.setPending(-1);
    if (detail.text) {
      this.answers += 1;
      this.node.dataset.answers = String(this.answers);
      this.node.dataset.lastAnswer = detail.text;
      if (detail.show_alert) this.alert(detail.text);
      else this.toast(detail.text);
    }
    if (detail.url) this.followLink(detail.url);
  }

  markUnread(chatId) {
    if (chatId === this.activeChat) return;
    this.unread.set(chatId, (this.unread.get(chatId) || 0) + 1);
  }

  // -------------------------------------------------------------- actions
  async run(body, { quiet = false } = {}) {
    try {
      return await act({ user_id: this.userId, ...body });
    } catch (error) {
      if (!quiet) this.showError(error);
      return undefined;
    }
  }

  async setLanguage(code) {
    await this.run({ action: "set_language", language_code: code || null });
    this.toast(`Telegram app language: ${LANG_NAMES[code] || code}`);
  }

  async sendInput() {
    const text = this.input.value.trim();
    if (!text) return;
    this.input.value = "";
    $(".cmd-list", this.node).hidden = true;
    const mention = `@${botUsername()}`;
    if (text.toLowerCase().startsWith(mention.toLowerCase()) && (text.length === mention.length || text[mention.length] === " ")) {
      await this.inlineQuery(text.slice(mention.length).trim(), this.activeChat);
      return;
    }
    if (this.activeChat === this.userId && /^\/start(\s|$)/.test(text) && !this.user.started) {
      await this.run({ action: "start", payload: text.slice(6).trim() || null });
      return;
    }
    await this.run({ action: "send", text, chat_id: this.activeChat });
  }

  async toggleCommands() {
    const list = $(".cmd-list", this.node);
    if (!list.hidden) {
      list.hidden = true;
      return;
    }
    const commands = (await this.run({ action: "commands", chat_id: this.activeChat })) || [];
    const items = commands.map((c) =>
      el(
        "button",
        {
          type: "button",
          class: "cmd-item",
          onclick: () => {
            list.hidden = true;
            this.input.value = `/${c.command}`;
            this.sendInput();
          },
        },
        el("b", { text: `/${c.command}` }),
        el("span", { text: c.description }),
      ),
    );
    list.replaceChildren(...(items.length ? items : [el("div", { class: "cmd-item", text: "No commands here." })]));
    list.hidden = false;
  }

  async pressButton(message, button, node) {
    if (button.callback_data !== undefined) {
      node.classList.add("busy");
      this.setPending(1);
      const where = message.ephemeral_message_id !== undefined && message.ephemeral_message_id !== null
        ? { ephemeral_message_id: message.ephemeral_message_id }
        : { message_id: message.message_id };
      const result = await this.run({ action: "click", chat_id: this.activeChat, ...where, data: button.callback_data });
      node.classList.remove("busy");
      if (result === undefined) this.setPending(-1);
      return;
    }
    if (button.web_app !== undefined) {
      const where = { chat_id: this.activeChat, message_id: message.message_id };
      await this.openApp({ action: "web_app", ...where, text: button.text });
      return;
    }
    if (button.url !== undefined) {
      this.followLink(button.url);
      return;
    }
    for (const key of ["switch_inline_query", "switch_inline_query_chosen_chat"]) {
      if (button[key] !== undefined) {
        const value = button[key];
        await this.inlineQuery(typeof value === "object" ? value.query || "" : String(value), null);
        return;
      }
    }
    if (button.switch_inline_query_current_chat !== undefined) {
      await this.inlineQuery(String(button.switch_inline_query_current_chat), this.activeChat);
      return;
    }
    this.toast("This kind of button is not simulated.");
  }

  onMessagesClick(event) {
    const link = event.target.closest("a[data-link]");
    if (link) {
      event.preventDefault();
      this.followLink(link.dataset.link);
      return;
    }
    const spoiler = event.target.closest(".spoiler");
    if (spoiler) spoiler.classList.add("shown");
  }

  /** What the Telegram app does with a link: a deep link to the bot opens its chat. */
  async followLink(url) {
    if (isDirectLink(url)) {
      await this.openApp({ action: "direct_link", url, chat_id: this.activeChat });
      return;
    }
    const target = messageLink(url);
    if (target) {
      this.showMessage(target.chatId, target.messageId);
      return;
    }
    const link = botLink(url);
    if (!link) {
      this.toast(`External link (not opened in the sandbox):\n${url}`);
      return;
    }
    if (link.startgroup !== null) {
      const groups = this.visibleChats().filter((c) => c.type !== "private");
      const group = await pickGroup(this, groups);
      if (!group) return;
      const result = await this.run({ action: "follow_link", url, chat_id: group });
      if (result !== undefined) this.open(group);
      return;
    }
    this.open(this.userId);
    if (link.start === null && this.user.started) return; // just opens the chat
    await this.run({ action: "follow_link", url });
  }

  /** A message link opens its chat at that message, as the app does -- for a
   * member of the chat. */
  showMessage(chatId, messageId) {
    const chat = state.chats.get(chatId);
    if (!chat || !canSee(this.userId, chat)) {
      this.toast("That message is in a chat you are not in.");
      return;
    }
    this.open(chatId);
    const node = this.messagesNode.querySelector(`.msg[data-message-id='${messageId}']`);
    if (!node) {
      this.toast("That message is gone.");
      return;
    }
    node.scrollIntoView({ block: "center" });
    node.classList.remove("flash");
    void node.offsetWidth; // restart the highlight
    node.classList.add("flash");
  }

  // -------------------------------------------------------------- Mini Apps (#42)
  /** Open a Mini App as Telegram does: the fake signs the user's init data and
   * gives the app's URL with the launch parameters in its hash. */
  async openApp(body) {
    const launch = await this.run({ ...body, theme: this.theme });
    if (!launch) return;
    this.appMain.hidden = true;
    $(".miniapp-back", this.node).hidden = true;
    $(".miniapp-title", this.node).textContent = state.config.bot.first_name;
    this.node.dataset.app = "open";
    this.node.dataset.appReady = "";
    this.node.dataset.appStartParam = launch.start_param || "";
    this.paintApp();
    this.app.hidden = false;
    this.appFrame.src = launch.url;
  }

  closeApp() {
    this.app.hidden = true;
    this.appFrame.src = "about:blank";
    this.node.dataset.app = "";
  }

  toggleTheme() {
    this.theme = this.theme === "light" ? "dark" : "light";
    this.paintApp();
    this.toApp("theme_changed", { theme_params: state.config.web_app_themes[this.theme] });
  }

  paintApp() {
    const theme = state.config.web_app_themes[this.theme];
    this.app.style.setProperty("--app-bg", theme.bg_color);
    this.app.style.setProperty("--app-text", theme.text_color);
    this.app.style.setProperty("--app-head", theme.header_bg_color);
    $(".miniapp-theme", this.node).textContent = this.theme === "light" ? "🌙" : "☀";
    this.node.dataset.appTheme = this.theme;
  }

  /** An event from Telegram's side to the app (its script listens for them). */
  toApp(eventType, eventData = {}) {
    if (this.app.hidden || !this.appFrame.contentWindow) return;
    this.appFrame.contentWindow.postMessage(JSON.stringify({ eventType, eventData }), "*");
  }

  /** An event the app's script posted (web_app_ready, web_app_close, ...). */
  fromApp(eventType, data) {
    switch (eventType) {
      case "web_app_ready":
        this.node.dataset.appReady = "1";
        break;
      case "web_app_close":
        this.closeApp();
        break;
      case "web_app_setup_main_button": {
        const main = this.appMain;
        main.hidden = !data.is_visible || !String(data.text || "").trim();
        main.textContent = data.text || "";
        main.disabled = data.is_active === false;
        main.classList.toggle("progress", Boolean(data.is_progress_visible));
        if (data.color) main.style.background = data.color;
        if (data.text_color) main.style.color = data.text_color;
        break;
      }
      case "web_app_setup_back_button":
        $(".miniapp-back", this.node).hidden = !data.is_visible;
        break;
      case "web_app_open_tg_link":
        this.closeApp();
        this.followLink(`https://t.me${data.path_full || ""}`);
        break;
      case "web_app_open_link":
        window.open(data.url, "_blank", "noopener");
        break;
      default: // expand, haptics, colours: nothing to show in the sandbox
        break;
    }
  }

  async askLink() {
    const url = await prompt1(`Open a link as ${this.user.first_name}`, "t.me link", `https://t.me/${botUsername()}?start=`);
    if (url) this.followLink(url);
  }

  async inlineQuery(query, chatId) {
    const result = await this.run({ action: "inline_query", query, chat_id: chatId });
    if (result === undefined) return;
    state.inlineWaits.set(result.query_id, { userId: this.userId, chatId, query });
    this.toast(`@${botUsername()} ${query} …`);
  }

  async onInlineResults(queryId, detail) {
    const wait = state.inlineWaits.get(queryId);
    state.inlineWaits.delete(queryId);
    if (!detail.results.length) {
      this.toast("The bot offered nothing to share.");
      return;
    }
    const choice = await pickInlineResult(this, detail.results, wait.chatId);
    if (!choice) return;
    let chatId = choice.chatId;
    if (typeof chatId === "string" && chatId.startsWith("user:")) {
      const chat = await this.run({ action: "direct_chat", other_user_id: Number(chatId.slice(5)) });
      if (!chat) return;
      chatId = chat.id;
    }
    const posted = await this.run({ action: "choose_result", query_id: queryId, result_id: choice.resultId, chat_id: chatId });
    if (posted) this.open(chatId);
  }

  async groupAction(action) {
    await this.run({ action, chat_id: this.activeChat });
  }

  async addMember(otherId) {
    // The fake's "join" is the member's own action; here a member adds him.
    await act({ action: "join", user_id: otherId, chat_id: this.activeChat }).catch((e) => this.showError(e));
  }
}

// ------------------------------------------------------------------ dialogs
function dialog(title, body, { ok = "OK" } = {}) {
  const modal = $("#modal");
  $("#modal-title").textContent = title;
  $("#modal-body").replaceChildren(...body);
  $("#modal-ok").textContent = ok;
  modal.hidden = false;
  const first = $("#modal-body input, #modal-body select", modal);
  if (first) first.focus();
  return new Promise((resolve) => {
    const done = (value) => {
      modal.hidden = true;
      $("#modal-form").onsubmit = null;
      $("#modal-cancel").onclick = null;
      resolve(value);
    };
    $("#modal-form").onsubmit = (event) => {
      event.preventDefault();
      done(true);
    };
    $("#modal-cancel").onclick = () => done(false);
  });
}

async function prompt1(title, label, value = "") {
  const input = el("input", { type: "text", name: "value", value });
  const ok = await dialog(title, [el("label", { class: "field" }, label, input)]);
  return ok ? input.value.trim() : null;
}

async function pickGroup(column, groups) {
  if (!groups.length) {
    column.toast("Create a group first (👥 New group).");
    return null;
  }
  const select = el("select", { name: "group" }, ...groups.map((g) => el("option", { value: String(g.id), text: g.title })));
  const ok = await dialog("Add the bot to a group", [el("label", { class: "field" }, "Group", select)]);
  return ok ? Number(select.value) : null;
}

async function pickInlineResult(column, results, chatId) {
  const list = results.map((r, i) =>
    el(
      "label",
      { class: "check result" },
      el("input", { type: "radio", name: "result", value: r.id, checked: i === 0 }),
      el("span", {}, r.title || r.id, r.description ? el("small", { text: r.description }) : null),
    ),
  );
  const body = [el("fieldset", {}, el("legend", { text: "Result" }), ...list)];
  let target = null;
  if (chatId === null || chatId === undefined) {
    target = el("select", { name: "chat" });
    for (const chat of column.visibleChats()) {
      target.append(el("option", { value: String(chat.id), text: column.chatTitle(chat) }));
    }
    for (const user of state.snap.users) {
      const exists = column.visibleChats().some((c) => c.peer_ids && c.peer_ids.includes(user.id));
      if (user.id !== column.userId && !exists) {
        target.append(el("option", { value: `user:${user.id}`, text: `${displayName(user)} (private chat)` }));
      }
    }
    target.append(el("option", { value: String(column.userId), text: state.config.bot.first_name }));
    body.push(el("label", { class: "field" }, "Send to", target));
  }
  const ok = await dialog(`Share as ${column.user.first_name}`, body, { ok: "Send" });
  if (!ok) return null;
  const checked = $("input[name=result]:checked", $("#modal-body"));
  const chosen = target ? target.value : chatId;
  return { resultId: checked ? checked.value : results[0].id, chatId: /^-?\d+$/.test(String(chosen)) ? Number(chosen) : chosen };
}

async function newUserDialog() {
  const name = el("input", { type: "text", name: "name", value: "" });
  const lang = el("select", { name: "lang" }, ...state.config.languages.map((c) => el("option", { value: c, text: LANG_NAMES[c] })));
  const ok = await dialog("Add a user", [el("label", { class: "field" }, "First name", name), el("label", { class: "field" }, "Telegram language", lang)], { ok: "Add" });
  const first = name.value.trim();
  if (!ok || !first) return;
  await act({ action: "add_user", first_name: first, username: first.toLowerCase().replace(/[^a-z0-9_]/g, "") || null, language_code: lang.value });
}

async function newGroupDialog() {
  const users = state.snap.users;
  const title = el("input", { type: "text", name: "title", value: `Game night ${state.chats.size}` });
  const creator = el("select", { name: "creator" }, ...users.map((u) => el("option", { value: String(u.id), text: displayName(u) })));
  const boxes = users.map((u, i) => el("label", { class: "check" }, el("input", { type: "checkbox", name: "member", value: String(u.id), checked: i < 2 }), displayName(u)));
  const addBot = el("input", { type: "checkbox", name: "bot", checked: true });
  const ok = await dialog(
    "New group",
    [
      el("label", { class: "field" }, "Title", title),
      el("label", { class: "field" }, "Created by", creator),
      el("fieldset", {}, el("legend", { text: "Members" }), ...boxes),
      el("label", { class: "check" }, addBot, `Add ${state.config.bot.first_name}`),
    ],
    { ok: "Create" },
  );
  if (!ok) return;
  const creatorId = Number(creator.value);
  const members = boxes.map((b) => $("input", b)).filter((b) => b.checked).map((b) => Number(b.value)).filter((id) => id !== creatorId);
  try {
    const group = await act({ action: "create_group", user_id: creatorId, title: title.value.trim() || "Group", member_ids: members });
    if (addBot.checked) await act({ action: "add_bot", user_id: creatorId, chat_id: group.id });
    await refresh();
    for (const id of [creatorId, ...members]) {
      const column = state.columns.get(id);
      if (column) column.open(group.id);
    }
  } catch (error) {
    const column = state.columns.get(creatorId);
    if (column) column.showError(error);
  }
}

// ------------------------------------------------------------------ syncing
function scheduleRefresh() {
  refresh().catch(() => {});
}

/** Fetch the snapshot and re-render (one at a time; a request during one runs after it). */
async function refresh() {
  if (state.refreshing) {
    state.refreshAgain = true;
    return state.refreshing;
  }
  state.refreshing = (async () => {
    do {
      state.refreshAgain = false;
      const snap = await getJSON("/_fake/snapshot");
      apply(snap);
    } while (state.refreshAgain);
  })();
  try {
    await state.refreshing;
  } finally {
    state.refreshing = null;
  }
}

function apply(snap) {
  const before = state.chats;
  state.snap = snap;
  state.chats = new Map(snap.chats.map((c) => [c.id, c]));
  for (const user of snap.users) {
    if (!state.columns.has(user.id)) state.columns.set(user.id, new Column(user));
  }
  // unread counters: new messages in chats a column is not looking at
  for (const column of state.columns.values()) {
    for (const chat of snap.chats) {
      if (!canSee(column.userId, chat) || chat.id === column.activeChat) continue;
      const seen = column.seen.get(chat.id) ?? (before.has(chat.id) ? lastId(before.get(chat.id)) : 0);
      const fresh = chat.messages.filter((m) => m.message_id > seen && (!m.from || m.from.id !== column.userId)).length;
      if (fresh) column.unread.set(chat.id, (column.unread.get(chat.id) || 0) + fresh);
      column.seen.set(chat.id, lastId(chat));
    }
    column.render();
  }
  document.body.dataset.version = String(snap.version);
}

function lastId(chat) {
  return chat.messages.length ? chat.messages[chat.messages.length - 1].message_id : 0;
}

function onEvent(event) {
  const column = event.user_id !== null ? state.columns.get(event.user_id) : undefined;
  switch (event.kind) {
    case "callback_answered":
      if (column) column.onAnswer(event.detail || {});
      break;
    case "inline_answered":
      if (column && state.inlineWaits.has(event.detail.query_id)) column.onInlineResults(event.detail.query_id, event.detail);
      break;
    case "chat_action":
      showTyping(event.chat_id);
      break;
    case "message_new":
      hideTyping(event.chat_id);
      break;
    default:
      break;
  }
}

function showTyping(chatId) {
  clearTimeout(state.typing.get(chatId));
  state.typing.set(chatId, setTimeout(() => hideTyping(chatId), 5000));
  updateTyping();
}

function hideTyping(chatId) {
  clearTimeout(state.typing.get(chatId));
  state.typing.delete(chatId);
  updateTyping();
}

function updateTyping() {
  for (const column of state.columns.values()) {
    const node = $(".typing", column.node);
    node.hidden = !state.typing.has(column.activeChat);
    node.textContent = `${state.config.bot.first_name} is typing…`;
  }
}

/** A Mini App's script talking to "Telegram" (#42): routed to the column whose
 * frame sent it. */
function onAppMessage(event) {
  const column = [...state.columns.values()].find((c) => c.appFrame.contentWindow === event.source);
  if (!column) return;
  let message;
  try {
    message = typeof event.data === "string" ? JSON.parse(event.data) : event.data;
  } catch {
    return;
  }
  if (message && typeof message.eventType === "string") column.fromApp(message.eventType, message.eventData || {});
}

function setStatus(value) {
  const status = $("#status");
  status.dataset.state = value;
  status.title = { online: "Connected", offline: "Disconnected — retrying", connecting: "Connecting" }[value];
}

async function follow() {
  for (;;) {
    try {
      const feed = await getJSON(`/_fake/events?since=${state.cursor}&timeout=25`);
      setStatus("online");
      if (feed.reset || feed.version < state.cursor) {
        // events were dropped, or the sandbox restarted: start over from a snapshot
        state.cursor = feed.version;
        await refresh();
        continue;
      }
      if (!feed.events.length) continue;
      state.cursor = feed.events[feed.events.length - 1].seq;
      // render first, so answers and toasts refer to what is on screen
      if (feed.events.some((event) => !UNSEEN.has(event.kind))) await refresh();
      for (const event of feed.events) onEvent(event);
    } catch (error) {
      setStatus("offline");
      await sleep(1000);
    }
  }
}

async function main() {
  state.config = await getJSON("/_sandbox/config");
  const bot = state.config.bot;
  $("#bot-name").textContent = `${bot.first_name} · @${bot.username}`;
  document.title = `${bot.first_name} · sandbox`;
  if (state.config.admin_url) {
    const link = $("#admin-link");
    link.href = state.config.admin_url;
    link.hidden = false;
  }
  window.addEventListener("message", onAppMessage);
  $("#new-user").addEventListener("click", newUserDialog);
  $("#new-group").addEventListener("click", newGroupDialog);
  const snap = await getJSON("/_fake/snapshot");
  state.cursor = snap.version;
  apply(snap);
  document.body.dataset.ready = "1";
  setStatus("online"); // the snapshot came: connected now, not after the first long poll (#29)
  follow();
}

main().catch((error) => {
  setStatus("offline");
  $("#bot-name").textContent = `failed to start: ${error.message}`;
});
