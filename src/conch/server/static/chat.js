// conch web chat: talks to this server's /v1/chat/completions (streamed), shows conch's
// own tool calls as they happen (the `conch` member of a chunk), keeps conversations in
// localStorage. No build step, no network beyond this server.
//
// The server's token comes in the address conch printed (/?token=...): it is kept in
// sessionStorage (this tab only, gone when it closes), taken out of the address bar, and
// sent as "Authorization: Bearer" on every API call. A key typed on the left goes there too.
"use strict";

const STORE = "conch.chats";
const TOKEN_STORE = "conch.token";
const OLD_KEY_STORE = "conch.apiKey"; // where an older page kept the key, for good
const MODEL_STORE = "conch.model";
const AUTH_NEEDED =
  "This server needs its token: open the URL conch serve printed when it started " +
  "(it ends in /?token=…), or enter its API key on the left.";

const $ = (id) => document.getElementById(id);
const ui = {
  chats: $("chats"), messages: $("messages"), input: $("input"), send: $("send"),
  stop: $("stop"), model: $("model"), status: $("status"), key: $("api-key"),
  editing: $("editing"), composer: $("composer"), auth: $("auth-needed"),
};

let chats = load();
let current = null;      // the conversation shown
let controller = null;   // the request in flight (its AbortController)
let editing = false;     // the composer holds the last user message, to send again

function load() {
  try {
    const data = JSON.parse(localStorage.getItem(STORE) || "[]");
    return Array.isArray(data) ? data : [];
  } catch (err) {
    return [];
  }
}

function save() {
  localStorage.setItem(STORE, JSON.stringify(chats));
}

// The token from the address, kept for this tab; the address bar is left without it.
function takeToken() {
  const url = new URL(window.location.href);
  const given = url.searchParams.get("token");
  if (given !== null) {
    sessionStorage.setItem(TOKEN_STORE, given.trim());
    url.searchParams.delete("token");
    history.replaceState(history.state, "", url.pathname + url.search + url.hash);
  }
  localStorage.removeItem(OLD_KEY_STORE);
  return sessionStorage.getItem(TOKEN_STORE) || "";
}

function headers() {
  const h = { "Content-Type": "application/json" };
  const key = ui.key.value.trim();
  if (key) h.Authorization = "Bearer " + key;
  return h;
}

// A 401 means no token or a wrong one: say once, plainly, where the right one is.
function unauthorized(response) {
  ui.auth.hidden = response.status !== 401;
  return response.status === 401;
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

// Text with ``` fences shown as code blocks; everything goes in as text, never as HTML.
function renderText(node, text) {
  node.replaceChildren();
  const parts = text.split("```");
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      const body = part.replace(/^[\w+-]*\n/, "");
      node.append(el("pre", null, body));
    } else if (part) {
      node.append(document.createTextNode(part));
    }
  });
}

function newChat() {
  current = { id: String(Date.now()), title: "New chat", messages: [] };
  chats.unshift(current);
  save();
  setEditing(false);
  draw();
}

function open(id) {
  if (controller) return;
  current = chats.find((c) => c.id === id) || null;
  setEditing(false);
  draw();
}

function remove(id) {
  if (controller) return;
  chats = chats.filter((c) => c.id !== id);
  save();
  if (current && current.id === id) current = chats[0] || null;
  if (!current) newChat(); else draw();
}

function drawList() {
  ui.chats.replaceChildren();
  for (const chat of chats) {
    const item = el("li", chat === current ? "current" : "");
    item.append(el("span", null, chat.title));
    const del = el("button", null, "×");
    del.title = "Delete this conversation";
    del.addEventListener("click", (e) => { e.stopPropagation(); remove(chat.id); });
    item.append(del);
    item.addEventListener("click", () => open(chat.id));
    ui.chats.append(item);
  }
}

function toolBlock(tool) {
  const box = el("details", "tool" + (tool.is_error ? " failed" : ""));
  const summary = el("summary");
  summary.append(el("span", "name", tool.name), " ", el("span", "args", tool.arguments));
  summary.append(el("span", "state", tool.result === undefined ? "running…" : tool.is_error ? "failed" : "done"));
  box.append(summary);
  if (tool.result !== undefined) box.append(el("pre", "result", tool.result));
  box.open = tool.result === undefined || tool.is_error;
  return box;
}

function drawMessage(message, index) {
  const box = el("div", "message " + message.role);
  const who = el("div", "who", message.role === "user" ? "you" : "conch");
  const lastUser = current.messages.map((m) => m.role).lastIndexOf("user");
  if (message.role === "user" && index === lastUser && !controller) {
    const edit = el("button", "edit", "edit & retry");
    edit.addEventListener("click", () => startEdit());
    who.append(edit);
  }
  box.append(who);
  for (const tool of message.tools || []) box.append(toolBlock(tool));
  const text = el("div", "text");
  renderText(text, message.content || "");
  box.append(text);
  if (message.stopped) box.append(el("div", "note", "stopped"));
  if (message.error) box.append(el("div", "error", message.error));
  return box;
}

function draw() {
  drawList();
  ui.messages.replaceChildren();
  if (!current) return;
  current.messages.forEach((m, i) => ui.messages.append(drawMessage(m, i)));
  ui.messages.scrollTop = ui.messages.scrollHeight;
}

function redrawLast() {
  const boxes = ui.messages.querySelectorAll(".message");
  const index = current.messages.length - 1;
  const box = drawMessage(current.messages[index], index);
  if (boxes.length === current.messages.length) boxes[boxes.length - 1].replaceWith(box);
  else ui.messages.append(box);
  ui.messages.scrollTop = ui.messages.scrollHeight;
}

function setEditing(on) {
  editing = on;
  ui.editing.hidden = !on;
}

function startEdit() {
  const lastUser = current.messages.map((m) => m.role).lastIndexOf("user");
  if (lastUser < 0 || controller) return;
  ui.input.value = current.messages[lastUser].content;
  setEditing(true);
  ui.input.focus();
}

function busy(on) {
  ui.send.hidden = on;
  ui.stop.hidden = !on;
  ui.input.disabled = on;
}

async function loadModels() {
  try {
    const response = await fetch("/v1/models", { headers: headers() });
    if (unauthorized(response)) {
      ui.status.textContent = "";
      return;
    }
    const body = await response.json();
    if (!response.ok) throw new Error(body.error ? body.error.message : response.statusText);
    ui.model.replaceChildren();
    for (const model of body.data) ui.model.append(el("option", null, model.id));
    const saved = localStorage.getItem(MODEL_STORE);
    if (saved && body.data.some((m) => m.id === saved)) ui.model.value = saved;
    ui.status.textContent = "";
  } catch (err) {
    ui.status.textContent = "cannot list models: " + err.message;
  }
}

// One server-sent event's data, handed to `reply`.
function handle(data, reply) {
  if (data.error) {
    reply.error = data.error.message || "the server failed";
    return;
  }
  const extra = data.conch;
  if (extra) {
    if (extra.type === "conch.tool_call") {
      reply.tools.push({ id: extra.id, name: extra.name, arguments: extra.arguments });
      ui.status.textContent = "running " + extra.name + "…";
    } else if (extra.type === "conch.tool_result") {
      const tool = reply.tools.find((t) => t.id === extra.id);
      if (tool) { tool.result = extra.content; tool.is_error = extra.is_error; }
      ui.status.textContent = "thinking…";
    } else if (extra.type === "conch.prompt_progress") {
      const pct = extra.fraction == null ? "" : " " + Math.round(extra.fraction * 100) + "%";
      ui.status.textContent = extra.stage + pct;
    } else if (extra.type === "conch.prompt_eval" && extra.prompt_per_second) {
      ui.status.textContent = "prompt: " + (extra.prompt_n || 0) + " tokens at " +
        extra.prompt_per_second.toFixed(1) + " t/s";
    }
  }
  for (const choice of data.choices || []) {
    const delta = choice.delta || {};
    if (delta.content) {
      reply.content += delta.content;
      ui.status.textContent = "writing…";
    }
  }
  if (data.usage) {
    ui.status.textContent = data.usage.total_tokens + " tokens";
  }
}

async function send(text) {
  if (!current) newChat();
  if (editing) {
    const lastUser = current.messages.map((m) => m.role).lastIndexOf("user");
    current.messages.splice(lastUser);
    setEditing(false);
  }
  current.messages.push({ role: "user", content: text });
  if (current.title === "New chat") current.title = text.slice(0, 40);
  const reply = { role: "assistant", content: "", tools: [] };
  const wire = current.messages
    .filter((m) => m.content)
    .map((m) => ({ role: m.role, content: m.content }));
  current.messages.push(reply);
  save();
  controller = new AbortController();
  busy(true);
  draw();
  ui.status.textContent = "waiting for the model…";
  localStorage.setItem(MODEL_STORE, ui.model.value);
  try {
    const response = await fetch("/v1/chat/completions", {
      method: "POST",
      headers: headers(),
      body: JSON.stringify({
        model: ui.model.value || undefined,
        messages: wire,
        stream: true,
        stream_options: { include_usage: true },
      }),
      signal: controller.signal,
    });
    if (unauthorized(response)) throw new Error(AUTH_NEEDED);
    if (!response.ok) {
      let message = response.status + " " + response.statusText;
      try { message = (await response.json()).error.message; } catch (err) { /* not JSON */ }
      throw new Error(message);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const events = buffer.split(/\r?\n\r?\n/);
      buffer = events.pop();
      for (const event of events) {
        const data = event.split(/\r?\n/)
          .filter((line) => line.startsWith("data:"))
          .map((line) => line.slice(5).trimStart())
          .join("\n");
        if (!data || data === "[DONE]") continue;
        handle(JSON.parse(data), reply);
      }
      redrawLast();
    }
  } catch (err) {
    if (err.name === "AbortError") {
      reply.stopped = true;
      ui.status.textContent = "stopped";
    } else {
      reply.error = err.message;
      ui.status.textContent = "";
    }
  } finally {
    controller = null;
    busy(false);
    save();
    draw();
    ui.input.focus();
  }
}

ui.composer.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = ui.input.value.trim();
  if (!text || controller) return;
  ui.input.value = "";
  send(text);
});

ui.input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    ui.composer.requestSubmit();
  }
});

ui.stop.addEventListener("click", () => { if (controller) controller.abort(); });
$("new-chat").addEventListener("click", () => { if (!controller) newChat(); });
$("cancel-edit").addEventListener("click", () => { setEditing(false); ui.input.value = ""; });
ui.auth.textContent = AUTH_NEEDED;
ui.key.value = takeToken();
ui.key.addEventListener("change", () => {
  sessionStorage.setItem(TOKEN_STORE, ui.key.value.trim());
  loadModels();
});

current = chats[0] || null;
if (!current) newChat(); else draw();
loadModels();
