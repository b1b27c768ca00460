// The board: draws a game state (hands, field, piles by category, yaku, scores) and the hint badges.
"use strict";

const $ = (id) => document.getElementById(id);
const CATEGORY_NAMES = {light: "Lights", seed: "Seeds", ribbon: "Ribbons", dross: "Dross"};
const STOP = 48, KOIKOI = 49;

let game = null;       // {id, state}: the game on the page
let hintOn = false;
let hints = null;      // {move, kind, options}: the opponent's values for the current decision

function who(player) { return player === game.state.you ? "You" : "Opponent"; }

function cardList(cards) {
  const span = document.createElement("span");
  span.className = "card-list";
  for (const c of cards) span.append(Cards.element(c, {small: true}));
  if (!cards.length) span.append("nothing");
  return span;
}

function renderPile(el, pile) {
  el.replaceChildren();
  for (const [cat, cards] of Object.entries(pile)) {
    const group = document.createElement("div");
    group.className = `pile-group ${cat}`;
    group.dataset.category = cat;
    const label = document.createElement("div");
    label.className = "pile-label";
    label.textContent = `${CATEGORY_NAMES[cat]} ${cards.length}`;
    const row = document.createElement("div");
    row.className = "pile-cards";
    for (const c of cards) row.append(Cards.element(c, {small: true}));
    group.append(label, row);
    el.append(group);
  }
}

function renderYaku(el, yaku) {
  el.replaceChildren();
  if (!yaku.yaku.length) { el.textContent = "no yaku"; return; }
  for (const [name, pts] of yaku.yaku) {
    const item = document.createElement("span");
    item.className = "yaku-item";
    item.textContent = `${name} ${pts}`;
    el.append(item);
  }
  const total = document.createElement("b");
  total.textContent = ` = ${yaku.points}`;
  el.append(total);
}

function legalButtons() { return [...document.querySelectorAll("#hand .legal, #field .legal")]; }

function render() {
  const s = game.state;
  $("round").textContent = s.round;
  $("rounds").textContent = s.rounds;
  $("turn").textContent = s.turn;
  $("points-you").textContent = s.points.you;
  $("points-opponent").textContent = s.points.opponent;
  $("opponent-name").textContent = `(${s.opponent})`;
  $("stock-count").textContent = s.stock_count;
  for (const side of ["you", "opponent"]) {
    $(`dealer-${side}`).hidden = (s.dealer === s.you) !== (side === "you");
    const k = s.koikoi[side];
    $(`koikoi-${side}`).hidden = !k;
    $(`koikoi-${side}`).textContent = `koi-koi x${k}`;
    renderPile($(`pile-${side}`), s.piles[side]);
    renderYaku($(`yaku-${side}`), s.yaku[side]);
  }
  const backs = $("opponent-hand");
  backs.replaceChildren();
  for (let i = 0; i < s.opponent_hand_count; i++) backs.append(Cards.back());
  const count = document.createElement("span");
  count.className = "count";
  count.textContent = `${s.opponent_hand_count} cards`;
  backs.append(count);

  const legal = new Set(s.legal_actions);
  const active = s.decision === "discard" ? "hand" : s.decision === "pick" ? "field" : null;
  for (const where of ["hand", "field"]) {
    const el = $(where);
    el.replaceChildren();
    el.classList.toggle("choosing", where === active);
    for (const c of s[where]) {
      const playable = where === active && legal.has(Cards.id(c));
      const card = Cards.element(c, {button: playable});
      if (playable) {
        card.classList.add("legal");
        card.addEventListener("click", () => act(Cards.id(c)));
      }
      el.append(card);
    }
  }
  $("last-move").classList.toggle("pending", Boolean(s.pending));
  if (s.pending) {
    $("last-move").replaceChildren(`You ${s.pending_from_draw ? "drew" : "played"} `, cardList([s.pending]),
      ": two field cards match, take one.");
  }
  const prompts = {
    discard: "Your turn: play a highlighted card from your hand (keys 1-8, or arrows and Enter).",
    pick: "Pick the field card to take (keys 1-2).",
    koikoi: "Koi-koi or stop?",
    over: "Game over.",
  };
  $("prompt").textContent = prompts[s.decision] || "";
  $("hint-toggle").disabled = !s.hint_available;
  renderHints();
}

function renderHints() {
  document.querySelectorAll(".hint-badge.on-card").forEach((b) => b.remove());
  document.querySelectorAll("#koikoi-dialog .hint-badge").forEach((b) => { b.textContent = ""; });
  document.querySelectorAll(".best").forEach((b) => b.classList.remove("best"));
  if (!hintOn || !hints || hints.move !== game.state.move) return;
  const best = Math.max(...hints.options.map((o) => o.value));
  for (const o of hints.options) {
    const text = hints.kind === "rl" ? o.value.toFixed(2) : `${Math.round(100 * o.probability)}%`;
    let target = o.action >= STOP ? $(o.action === STOP ? "stop-button" : "koikoi-button")
      : document.querySelector(`#hand .legal[data-action="${o.action}"], #field .legal[data-action="${o.action}"]`);
    if (!target) continue;
    let badge = target.querySelector(".hint-badge");
    if (!badge) {
      badge = document.createElement("span");
      badge.className = "hint-badge on-card";
      target.append(badge);
    }
    badge.textContent = text;
    badge.title = `value ${o.value}, probability ${o.probability}`;
    if (o.value === best) target.classList.add("best");
  }
}
