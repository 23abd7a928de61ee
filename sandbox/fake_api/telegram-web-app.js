// A stand-in for Telegram's telegram-web-app.js (#42), served by the fake Bot API
// at /telegram-web-app.js: window.Telegram.WebApp for a Mini App opened in the
// sandbox's phone frame (sandbox/page), with no internet and no Telegram account.
//
// Like Telegram's script it reads the launch parameters from the URL's hash
// (tgWebAppData, tgWebAppVersion, tgWebAppPlatform, tgWebAppThemeParams,
// tgWebAppStartParam), and talks to the app around it -- here the sandbox page --
// by postMessage({eventType, eventData}) as a JSON string: it posts
// web_app_ready, web_app_expand, web_app_close, web_app_setup_main_button,
// web_app_setup_back_button, web_app_trigger_haptic_feedback, ...; it receives
// theme_changed, main_button_pressed, back_button_pressed, viewport_changed.
// The init data was signed by the fake, server-side, with the bot's token as
// Telegram signs it (sandbox/fake_api/web_apps.py): this script does no crypto.
"use strict";
(function () {
  if (window.Telegram && window.Telegram.WebApp) return;

  // ---------------------------------------------------------------- launch parameters
  const STORE = "__telegram__launch";
  function launchParams() {
    const hash = new URLSearchParams(window.location.hash.slice(1));
    if (hash.has("tgWebAppData") || hash.has("tgWebAppVersion")) {
      const found = {};
      for (const [key, value] of hash) found[key] = value;
      try {
        sessionStorage.setItem(STORE, JSON.stringify(found)); // a hash router may drop it
      } catch (e) { /* storage off */ }
      return found;
    }
    try {
      return JSON.parse(sessionStorage.getItem(STORE) || "{}");
    } catch (e) {
      return {};
    }
  }

  const params = launchParams();
  const initData = params.tgWebAppData || "";
  const initDataUnsafe = {};
  for (const [key, value] of new URLSearchParams(initData)) {
    if (key === "user" || key === "receiver" || key === "chat") {
      try {
        initDataUnsafe[key] = JSON.parse(value);
      } catch (e) {
        initDataUnsafe[key] = value;
      }
    } else if (key === "auth_date" || key === "can_send_after") {
      initDataUnsafe[key] = Number(value);
    } else {
      initDataUnsafe[key] = value;
    }
  }
  let themeParams = {};
  try {
    themeParams = JSON.parse(params.tgWebAppThemeParams || "{}");
  } catch (e) { /* none */ }

  // ---------------------------------------------------------------- the frame around it
  const handlers = new Map(); // event name -> Set of callbacks

  function post(eventType, eventData) {
    const body = JSON.stringify({ eventType, eventData: eventData || {} });
    if (window.parent && window.parent !== window) window.parent.postMessage(body, "*");
  }

  function fire(name, ...args) {
    for (const callback of handlers.get(name) || []) {
      try {
        callback.apply(WebApp, args);
      } catch (e) {
        console.error(e);
      }
    }
  }

  function luminance(hex) {
    const m = /^#?([0-9a-f]{6})$/i.exec(hex || "");
    if (!m) return 1;
    const n = parseInt(m[1], 16);
    return (0.2126 * ((n >> 16) & 255) + 0.7152 * ((n >> 8) & 255) + 0.0722 * (n & 255)) / 255;
  }

  function applyTheme() {
    WebApp.themeParams = themeParams;
    WebApp.colorScheme = luminance(themeParams.bg_color) < 0.5 ? "dark" : "light";
    WebApp.backgroundColor = themeParams.bg_color || "#ffffff";
    WebApp.headerColor = themeParams.header_bg_color || themeParams.bg_color || "#ffffff";
    const style = document.documentElement.style;
    for (const [key, value] of Object.entries(themeParams)) {
      style.setProperty(`--tg-theme-${key.replace(/_/g, "-")}`, value);
    }
    style.setProperty("--tg-color-scheme", WebApp.colorScheme);
  }

  function applyViewport() {
    WebApp.viewportHeight = window.innerHeight;
    WebApp.viewportStableHeight = window.innerHeight;
    const style = document.documentElement.style;
    style.setProperty("--tg-viewport-height", `${WebApp.viewportHeight}px`);
    style.setProperty("--tg-viewport-stable-height", `${WebApp.viewportStableHeight}px`);
  }

  // ---------------------------------------------------------------- bottom buttons
  function bottomButton(kind, defaults) {
    const button = {
      type: kind,
      text: defaults.text,
      color: themeParams.button_color || "#2481cc",
      textColor: themeParams.button_text_color || "#ffffff",
      isVisible: false,
      isActive: true,
      isProgressVisible: false,
      hasShineEffect: false,
      setText(text) {
        return button.setParams({ text });
      },
      onClick(callback) {
        WebApp.onEvent(defaults.event, callback);
        return button;
      },
      offClick(callback) {
        WebApp.offEvent(defaults.event, callback);
        return button;
      },
      show() {
        return button.setParams({ is_visible: true });
      },
      hide() {
        return button.setParams({ is_visible: false });
      },
      enable() {
        return button.setParams({ is_active: true });
      },
      disable() {
        return button.setParams({ is_active: false });
      },
      showProgress() {
        return button.setParams({ is_progress_visible: true });
      },
      hideProgress() {
        return button.setParams({ is_progress_visible: false });
      },
      ownColors: false, // set by the app: a theme change keeps them
      retheme() {
        if (button.ownColors) return;
        button.color = themeParams.button_color || button.color;
        button.textColor = themeParams.button_text_color || button.textColor;
        if (button.isVisible) button.setParams({});
      },
      setParams(p) {
        if (p.text !== undefined) button.text = String(p.text).trim() || defaults.text;
        if (p.color !== undefined) button.color = p.color;
        if (p.text_color !== undefined) button.textColor = p.text_color;
        if (p.color !== undefined || p.text_color !== undefined) button.ownColors = true;
        if (p.is_visible !== undefined) button.isVisible = Boolean(p.is_visible);
        if (p.is_active !== undefined) button.isActive = Boolean(p.is_active);
        if (p.has_shine_effect !== undefined) button.hasShineEffect = Boolean(p.has_shine_effect);
        if (p.is_progress_visible !== undefined) button.isProgressVisible = Boolean(p.is_progress_visible);
        post(defaults.setup, {
          is_visible: button.isVisible,
          is_active: button.isActive,
          is_progress_visible: button.isProgressVisible,
          text: button.text,
          color: button.color,
          text_color: button.textColor,
        });
        return button;
      },
    };
    return button;
  }

  function simpleButton(setup, event) {
    const button = {
      isVisible: false,
      onClick(callback) {
        WebApp.onEvent(event, callback);
        return button;
      },
      offClick(callback) {
        WebApp.offEvent(event, callback);
        return button;
      },
      show() {
        button.isVisible = true;
        post(setup, { is_visible: true });
        return button;
      },
      hide() {
        button.isVisible = false;
        post(setup, { is_visible: false });
        return button;
      },
    };
    return button;
  }

  const noop = () => undefined;
  const haptic = (kind) => (detail) => {
    post("web_app_trigger_haptic_feedback", { type: kind, detail });
    return WebApp.HapticFeedback;
  };

  // ---------------------------------------------------------------- the object
  const WebApp = {
    initData,
    initDataUnsafe,
    version: params.tgWebAppVersion || "6.0",
    platform: params.tgWebAppPlatform || "unknown",
    colorScheme: "light",
    themeParams: {},
    isExpanded: true,
    isActive: true,
    isFullscreen: false,
    isClosingConfirmationEnabled: false,
    isVerticalSwipesEnabled: true,
    viewportHeight: window.innerHeight,
    viewportStableHeight: window.innerHeight,
    headerColor: "#ffffff",
    backgroundColor: "#ffffff",
    bottomBarColor: "#ffffff",
    safeAreaInset: { top: 0, bottom: 0, left: 0, right: 0 },
    contentSafeAreaInset: { top: 0, bottom: 0, left: 0, right: 0 },
    MainButton: null,
    SecondaryButton: null,
    BackButton: simpleButton("web_app_setup_back_button", "backButtonClicked"),
    SettingsButton: simpleButton("web_app_setup_settings_button", "settingsButtonClicked"),
    HapticFeedback: {
      impactOccurred: haptic("impact"),
      notificationOccurred: haptic("notification"),
      selectionChanged: () => haptic("selection_change")(undefined),
    },
    CloudStorage: {
      setItem: (k, v, cb) => cb && cb(null, true),
      getItem: (k, cb) => cb && cb(null, ""),
      getItems: (ks, cb) => cb && cb(null, {}),
      removeItem: (k, cb) => cb && cb(null, true),
      removeItems: (ks, cb) => cb && cb(null, true),
      getKeys: (cb) => cb && cb(null, []),
    },
    isVersionAtLeast(version) {
      const a = String(WebApp.version).split(".").map(Number);
      const b = String(version).split(".").map(Number);
      for (let i = 0; i < Math.max(a.length, b.length); i += 1) {
        if ((a[i] || 0) !== (b[i] || 0)) return (a[i] || 0) > (b[i] || 0);
      }
      return true;
    },
    onEvent(name, callback) {
      if (!handlers.has(name)) handlers.set(name, new Set());
      handlers.get(name).add(callback);
    },
    offEvent(name, callback) {
      const set = handlers.get(name);
      if (set) set.delete(callback);
    },
    ready() {
      post("web_app_ready");
    },
    expand() {
      WebApp.isExpanded = true;
      post("web_app_expand");
    },
    close() {
      post("web_app_close");
    },
    sendData(data) {
      post("web_app_data_send", { data: String(data) });
    },
    openLink(url) {
      post("web_app_open_link", { url: String(url) });
    },
    openTelegramLink(url) {
      post("web_app_open_tg_link", { path_full: String(url) });
    },
    showPopup(p, callback) {
      const ok = window.confirm(`${p.title ? p.title + "\n\n" : ""}${p.message}`);
      const buttons = p.buttons || [{ id: "", type: "close" }];
      if (callback) callback(ok ? buttons[0].id || "" : "");
    },
    showAlert(message, callback) {
      window.alert(message);
      if (callback) callback();
    },
    showConfirm(message, callback) {
      const ok = window.confirm(message);
      if (callback) callback(ok);
    },
    setHeaderColor(color) {
      WebApp.headerColor = color;
      post("web_app_set_header_color", { color });
    },
    setBackgroundColor(color) {
      WebApp.backgroundColor = color;
      post("web_app_set_background_color", { color });
    },
    setBottomBarColor(color) {
      WebApp.bottomBarColor = color;
    },
    enableClosingConfirmation() {
      WebApp.isClosingConfirmationEnabled = true;
    },
    disableClosingConfirmation() {
      WebApp.isClosingConfirmationEnabled = false;
    },
    enableVerticalSwipes() {
      WebApp.isVerticalSwipesEnabled = true;
    },
    disableVerticalSwipes() {
      WebApp.isVerticalSwipesEnabled = false;
    },
    requestFullscreen: noop,
    exitFullscreen: noop,
    lockOrientation: noop,
    unlockOrientation: noop,
    readTextFromClipboard(callback) {
      if (callback) callback(null);
    },
  };
  WebApp.MainButton = bottomButton("main", {
    text: "Continue",
    event: "mainButtonClicked",
    setup: "web_app_setup_main_button",
  });
  WebApp.SecondaryButton = bottomButton("secondary", {
    text: "Cancel",
    event: "secondaryButtonClicked",
    setup: "web_app_setup_secondary_button",
  });

  // ---------------------------------------------------------------- events from the frame
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    let message;
    try {
      message = typeof event.data === "string" ? JSON.parse(event.data) : event.data;
    } catch (e) {
      return;
    }
    if (!message || typeof message.eventType !== "string") return;
    const data = message.eventData || {};
    switch (message.eventType) {
      case "theme_changed":
        themeParams = data.theme_params || {};
        applyTheme();
        WebApp.MainButton.retheme(); // the default colours follow the theme, as Telegram's
        WebApp.SecondaryButton.retheme();
        fire("themeChanged");
        break;
      case "main_button_pressed":
        if (WebApp.MainButton.isActive) fire("mainButtonClicked");
        break;
      case "secondary_button_pressed":
        if (WebApp.SecondaryButton.isActive) fire("secondaryButtonClicked");
        break;
      case "back_button_pressed":
        fire("backButtonClicked");
        break;
      case "settings_button_pressed":
        fire("settingsButtonClicked");
        break;
      case "viewport_changed":
        applyViewport();
        fire("viewportChanged", { isStateStable: true });
        break;
      case "visibility_changed":
        WebApp.isActive = Boolean(data.is_visible);
        fire(WebApp.isActive ? "activated" : "deactivated");
        break;
      default:
        break;
    }
  });
  window.addEventListener("resize", () => {
    applyViewport();
    fire("viewportChanged", { isStateStable: true });
  });

  applyTheme();
  applyViewport();
  window.Telegram = window.Telegram || {};
  window.Telegram.WebApp = WebApp;
  window.Telegram.Utils = {};
  window.Telegram.WebView = {
    initParams: params,
    isIframe: window.parent !== window,
    postEvent: post,
    onEvent: WebApp.onEvent,
    offEvent: WebApp.offEvent,
  };
  post("iframe_ready", { reload_supported: false });
})();
