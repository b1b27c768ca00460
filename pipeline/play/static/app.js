// The play page's flow: games, the opponent's moves one by one, decisions, dialogs and keys. It talks to
// the JSON API only (docs/play.md); board.js draws the state, record.js the person's record, analysis.js the
// analysis after a game.
// The address holds the game: `?game=ID` reopens it from the server (a reload, or a game made through the
// API). `?delay=MS` sets the pause between the opponent's moves (default 700; the browser test uses 0).
"use strict";

const DELAY = Number(new URLSearchParams(location.search).get("delay") ?? 700);

// `#record` in the address while the record is open, so that a reload shows it again.
function setHash(hash) {
  const url = new URL(location.href);
  url.hash = hash;
  history.replaceState(null, "", url);
}

// The game's id in the address, so that a reload (or a shared link) reopens it.
function setAddress(id) {
  const url = new URL(location.href);
  if (id) url.searchParams.set("game", id);
  else url.searchParams.delete("game");
  history.replaceState(null, "", url);
}

// ------------------------------------------------------------------ API
async function api(method, path, body) {
  const init = {method, headers: {}};
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const data = await r.json();
  if (!r.ok) throw new Error(data.error || `${r.status}`);
  return data;
}

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

function setBusy(busy) { document.body.dataset.busy = String(busy); }

// "thinking" by the opponent's name while a request that lets it move is out: a search agent takes up to its
// think budget per searched decision. Shown after a moment, so that a quick reply does not flicker.
async function whileThinking(request) {
  const timer = setTimeout(() => { $("thinking").hidden = false; }, 150);
  try {
    return await request;
  } finally {
    clearTimeout(timer);
    $("thinking").hidden = true;
  }
}

function showError(message) {
  $("error").textContent = message;
  $("error").hidden = !message;
}

async function refreshHints() {
  hints = null;
  renderHints();  // the legend at once, the badges when the model has answered
  const s = game.state;
  if (hintOn && s.hint_available && s.decision !== "over") {
    try {
      hints = await api("GET", `/api/games/${game.id}/hint`);
    } catch (e) { showError(e.message); }
  }
  renderHints();
}

// ------------------------------------------------------------------ events, one by one
function logLine(...parts) {
  const li = document.createElement("li");
  li.append(...parts);
  $("log").prepend(li);
  return li;
}

function turnParts(e) {
  const parts = [`${who(e.player)} played `, cardList([e.discard])];
  if (e.captured.length) parts.push(" and took ", cardList(e.captured));
  if (e.draw) {
    parts.push("; drew ", cardList([e.draw]));
    if (e.captured2.length) parts.push(" and took ", cardList(e.captured2));
  }
  if (e.koikoi === true) parts.push(": koi-koi!");
  if (e.koikoi === false) parts.push(": stop.");
  return parts;
}

async function showTurn(e) {
  const parts = turnParts(e);
  const li = logLine(`R${e.round} T${e.turn} `, ...parts);
  li.classList.add(e.player === game.state.you ? "mine" : "theirs");
  $("last-move").classList.remove("pending");
  $("last-move").replaceChildren(...parts.map((p) => (typeof p === "string" ? p : p.cloneNode(true))));
  await sleep(e.player === game.state.you ? DELAY / 2 : DELAY);
}

function roundText(r) {
  if (r.winner === null) return "Nobody stopped: the dealer takes 1 point (Dealer's Priority).";
  const yaku = r.yaku.map(([n, p]) => `${n} ${p}`).join(", ");
  const pts = Math.abs(r.points.you);
  return `${who(r.winner)} ${r.winner === game.state.you ? "win" : "wins"} ${pts} point${pts === 1 ? "" : "s"}: ${yaku}.`;
}

function modal(id, buttonId) {
  return new Promise((done) => {
    const dialog = $(id);
    const finish = () => { dialog.removeEventListener("close", finish); done(); };
    dialog.addEventListener("close", finish);
    dialog.showModal();
    if (buttonId) $(buttonId).focus();
  });
}

function totalsText(r) { return `Points: you ${r.totals.you}, ${opponentName()} ${r.totals.opponent}.`; }

// ------------------------------------------------------------------ the board, event by event
// A reply carries the events since the last one and the state after them all. The board is drawn after every
// event, by moving the event's cards on a copy of the board as it was drawn, so that a round's end dialog comes
// after the round's last capture is drawn (the next round's deal is known only from the reply's state). Moving
// a card is idempotent: the person's own turn may be half drawn already (a pick, or the koi-koi decision).
const sameCard = (a) => (b) => Cards.id(a) === Cards.id(b);

function onBoard(s, card) {
  return s.field.some(sameCard(card)) || (s.pending && sameCard(card)(s.pending))
    || Object.values(s.piles).some((pile) => Object.values(pile).some((cards) => cards.some(sameCard(card))));
}

function applyTurn(s, e) {
  const side = e.player === s.you ? "you" : "opponent";
  const take = (cards) => {
    for (const c of cards) {
      const group = s.piles[side][Cards.info(c).category];
      if (!group.some(sameCard(c))) group.push(c);
    }
  };
  const place = (played, captured) => {
    if (captured.length) {
      s.field = s.field.filter((c) => !captured.some(sameCard(c)) && !sameCard(played)(c));
      take([played, ...captured]);
    } else if (!s.field.some(sameCard(played))) s.field.push(played);
  };
  if (side === "you") s.hand = s.hand.filter((c) => !sameCard(e.discard)(c));
  else if (!onBoard(s, e.discard)) s.opponent_hand_count = Math.max(0, s.opponent_hand_count - 1);
  place(e.discard, e.captured);
  if (e.draw) {
    if (!onBoard(s, e.draw)) s.stock_count = Math.max(0, s.stock_count - 1);
    place(e.draw, e.captured2);
  }
  if (e.koikoi === true) s.koikoi[side] += 1;
  Object.assign(s, {turn: e.turn, pending: null, legal_actions: [], decision: "wait"});
}

function applyRoundEnd(s, r) {
  if (r.winner !== null) {
    const side = r.winner === s.you ? "you" : "opponent";
    s.yaku[side] = {yaku: r.yaku, points: Math.abs(r.points.you)};
    const made = new Set(r.yaku.map(([name]) => name));
    s.progress[side] = s.progress[side].filter((p) => !made.has(p.name));
  }
  s.points = {...r.totals};
  s.decision = "round";
}

async function showRound(r) {
  logLine(`Round ${r.round}: `, roundText(r)).classList.add("round-end");
  setScores(r.totals.you, r.totals.opponent);  // the header shows the points the dialog reports
  $("round-title").textContent = `Round ${r.round} over`;
  $("round-body").replaceChildren(roundText(r), document.createElement("br"), totalsText(r));
  await modal("round-dialog", "round-continue");
}

async function play(events, state) {
  setBusy(true);
  // the board as drawn (a new game's is the reply's own state, its events drawn already); null once a round
  // has ended in this reply
  let board = game.state === state ? null : structuredClone(game.state);
  for (const e of events) {
    if (e.type === "turn") {
      if (board) {
        applyTurn(board, e);
        game.state = board;
        render();
      }
      await showTurn(e);
    } else if (e.type === "round") {
      if (board) {
        applyRoundEnd(board, e);
        game.state = board;
        render();
      }
      board = null;  // the next round's deal comes with the reply's state
      await showRound(e);
    }
  }
  game.state = state;
  render();
  if (state.decision === "over") showOver();
  else {
    await refreshHints();
    if (state.decision === "koikoi") showKoikoi();
    else legalButtons()[0]?.focus();
  }
  setBusy(false);
}

// ------------------------------------------------------------------ decisions
async function act(action) {
  if (document.body.dataset.busy === "true") return;
  setBusy(true);
  showError("");
  document.querySelector(`button.legal[data-action="${action}"]`)?.classList.add("played");
  try {
    const r = await whileThinking(api("POST", `/api/games/${game.id}/actions`, {action, move: game.state.move}));
    await play(r.events, r.state);
  } catch (e) {
    showError(e.message);
    setBusy(false);
  }
}

function showKoikoi() {
  const s = game.state;
  const yaku = document.createElement("div");
  renderYaku(yaku, s.yaku.you);
  $("koikoi-yaku").replaceChildren(yaku);
  $("koikoi-stop-points").textContent = plural(s.yaku.you.points, "point");
  $("koikoi-dialog").showModal();
  $("stop-button").focus();
  renderHints();
}

function chooseKoikoi(action) {
  $("koikoi-dialog").close();
  act(action);
}

// ------------------------------------------------------------------ game over, review, new game
function cell(text, tag = "td") {
  const el = document.createElement(tag);
  el.textContent = String(text);
  return el;
}

function showOver() {
  const s = game.state;
  const title = s.winner === null ? "Draw" : s.winner === s.you ? "You win!" : "You lose";
  $("over-title").textContent = `${title} ${s.points.you} : ${s.points.opponent}`;
  const head = document.createElement("tr");
  for (const h of ["round", "dealer", "winner", "you", "yaku", "points"]) head.append(cell(h, "th"));
  const rows = s.results.map((r) => {
    const tr = document.createElement("tr");
    tr.append(cell(r.round), cell(who(r.dealer)), cell(r.winner === null ? "dealer's priority" : who(r.winner)),
      cell(`${r.points.you > 0 ? "+" : ""}${r.points.you}`), cell(r.yaku.map(([n, p]) => `${n} ${p}`).join(", ")),
      cell(`${r.totals.you} : ${r.totals.opponent}`));
    return tr;
  });
  $("over-rounds").replaceChildren(head, ...rows);
  $("record-link").href = `/api/games/${game.id}/record`;
  $("review-button").disabled = false;
  $("over-dialog").showModal();
  $("over-new-game").focus();
}

async function showReview() {
  let review;
  try {
    review = await api("GET", `/api/games/${game.id}/review`);
  } catch (e) { showError(e.message); return; }
  const units = game.about?.hint;
  const name = opponentName();
  const what = {
    probability: `how likely ${name} was to make each move (the softmax of its outputs over its legal moves)`,
    points: `${name}'s estimate of the points it would win (+) or lose (-) in the round with each move (its Q value)`,
    win_probability: `${name}'s estimate of its chance to win the game with each move (its Q value)`,
    q: `${name}'s Q value of each move, in its training units`,
  };
  $("review-note").textContent = units ? `Under each option: ${what[units.unit]}. The move it made is marked.`
    : `${name} has no values: its choices only, the one it made marked.`;
  const list = $("review-list");
  list.replaceChildren();
  for (const d of review.decisions) {
    const li = document.createElement("li");
    li.append(`R${d.round} T${d.turn} ${d.decision}: `);
    if (d.pending) li.append("take with ", cardList([d.pending]), ": ");
    for (const o of d.options) {
      const opt = document.createElement("span");
      opt.className = "option" + (o.action === d.action ? " chosen" : "");
      opt.append(o.card ? Cards.element(o.card, {small: true}) : (o.action === STOP ? "stop" : "koi-koi"));
      if (o.value !== undefined) {
        const v = document.createElement("small");
        v.textContent = hintValue(o, units);
        opt.append(v);
      }
      li.append(opt);
    }
    list.append(li);
  }
  $("over-dialog").close();
  $("review-dialog").showModal();
}

async function openNewGame() {
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
  $("new-game-error").hidden = true;
  $("new-game-dialog").showModal();
  $("start-button").focus();
}

async function startGame() {
  const custom = $("opponent-custom").value.trim();
  const body = {opponent: custom || $("opponent-select").value, rounds: Number($("rounds-input").value),
                points: Number($("points-input").value)};
  if ($("seed-input").value !== "") body.seed = Number($("seed-input").value);
  setBusy(true);
  try {
    const r = await whileThinking(api("POST", "/api/games", body));  // the opponent moves first when it deals
    $("new-game-dialog").close();
    game = {id: r.id, state: r.state, about: await api("GET", `/api/games/${r.id}/opponent`)};
    setAddress(r.id);
    $("log").replaceChildren();
    $("last-move").replaceChildren();
    logLine(`New game against ${opponentName()}.`);
    render();
    await play(r.events, r.state);
  } catch (e) {
    $("new-game-error").textContent = e.message;
    $("new-game-error").hidden = false;
    if (!$("new-game-dialog").open) $("new-game-dialog").showModal();
    setBusy(false);
  }
}

// A game the server holds, by its id (from the address): the board, this round's moves and past rounds in
// the log, and the dialog its decision needs.
async function openGame(id) {
  setBusy(true);
  try {
    const r = await api("GET", `/api/games/${encodeURIComponent(id)}`);
    game = {id: r.id, state: r.state, about: await api("GET", `/api/games/${r.id}/opponent`)};
  } catch (e) {
    setAddress(null);
    setBusy(false);
    showError(`Game ${id}: ${e.message}`);
    openNewGame();
    return;
  }
  const s = game.state;
  $("log").replaceChildren();
  logLine(`Game against ${opponentName()}, reopened at round ${s.round}, turn ${s.turn}.`);
  for (const r of s.results) logLine(`Round ${r.round}: `, roundText(r)).classList.add("round-end");
  s.history.forEach((t, i) => {
    if (t.draw) logLine(`R${s.round} T${i + 1} `, ...turnParts(t)).classList.add(t.player === s.you ? "mine" : "theirs");
  });
  render();
  await play([], s);
}

// ------------------------------------------------------------------ keyboard
function onKey(e) {
  if (e.target.matches("input, select") || e.ctrlKey || e.metaKey || e.altKey) return;
  const key = e.key.toLowerCase();
  const open = document.querySelector("dialog[open]");
  if (open && open.id === "koikoi-dialog") {
    if (key === "k") chooseKoikoi(KOIKOI);
    if (key === "s") chooseKoikoi(STOP);
    return;
  }
  if (key === "n" && (!open || open.id !== "new-game-dialog")) { e.preventDefault(); openNewGame(); return; }
  if (key === "r" && game && game.state.decision === "over") { showReview(); return; }
  if (key === "a" && game && game.state.decision === "over") { showAnalysis(); return; }
  if (key === "y" && (!open || open.id === "over-dialog")) { e.preventDefault(); showRecord(); return; }
  if (open) return;  // Enter and Escape work on the dialog itself
  if (key === "h" && !$("hint-toggle").disabled) {
    $("hint-toggle").checked = !$("hint-toggle").checked;
    $("hint-toggle").dispatchEvent(new Event("change"));
    return;
  }
  const buttons = legalButtons();
  if (/^[1-9]$/.test(key) && buttons[Number(key) - 1]) { buttons[Number(key) - 1].click(); return; }
  if (key === "arrowleft" || key === "arrowright") {
    const i = buttons.indexOf(document.activeElement);
    const next = key === "arrowright" ? (i + 1) % buttons.length : (i - 1 + buttons.length) % buttons.length;
    buttons[Math.max(next, 0)]?.focus();
    e.preventDefault();
  }
}

// ------------------------------------------------------------------ start
async function main() {
  Cards.deck = await api("GET", "/api/cards");
  const [opponents, about] = await Promise.all([api("GET", "/api/opponents"), api("GET", "/api/opponents/about")]);
  for (const a of about) {
    const opt = document.createElement("option");
    opt.value = a.spec;
    opt.textContent = a.rating ? `${a.name} (${ratingText(a.rating)})` : a.name;
    opt.title = a.spec;
    opt.selected = a.spec === opponents.default;
    $("opponent-select").append(opt);
  }
  if (!opponents.choices.includes(opponents.default)) $("opponent-custom").value = opponents.default;
  $("new-game-form").addEventListener("submit", (e) => { e.preventDefault(); startGame(); });
  $("new-game-button").addEventListener("click", openNewGame);
  $("over-new-game").addEventListener("click", openNewGame);
  $("review-button").addEventListener("click", showReview);
  $("review-close").addEventListener("click", () => $("review-dialog").close());
  $("analysis-button").addEventListener("click", showAnalysis);
  $("analysis-close").addEventListener("click", () => $("analysis-dialog").close());
  $("record-button").addEventListener("click", showRecord);
  $("over-record").addEventListener("click", showRecord);
  $("record-close").addEventListener("click", () => $("record-dialog").close());
  $("record-dialog").addEventListener("close", () => {
    setHash("");
    if (!game) openNewGame();
  });
  window.addEventListener("hashchange", () => { if (location.hash === "#record") showRecord(); });
  $("round-continue").addEventListener("click", () => $("round-dialog").close());
  $("stop-button").addEventListener("click", () => chooseKoikoi(STOP));
  $("koikoi-button").addEventListener("click", () => chooseKoikoi(KOIKOI));
  $("koikoi-dialog").addEventListener("cancel", (e) => e.preventDefault());  // a decision is required
  $("new-game-dialog").addEventListener("cancel", (e) => { if (!game) e.preventDefault(); });
  $("hint-toggle").checked = hintOn;
  $("hint-toggle").addEventListener("change", () => {
    hintOn = $("hint-toggle").checked;
    localStorage.setItem("koikoi.hint", hintOn ? "on" : "off");
    refreshHints();
  });
  document.addEventListener("keydown", onKey);
  setBusy(false);
  const id = new URLSearchParams(location.search).get("game");
  if (id) await openGame(id);
  else openNewGame();
  if (location.hash === "#record") showRecord();
}

main().catch((e) => showError(e.message));
