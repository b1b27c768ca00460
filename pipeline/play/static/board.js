// The board: draws a game state (hands, field, piles by category, yaku and progress toward them, scores), the
// preview of what a hand card would take, and the hint badges with their unit.
"use strict";

const $ = (id) => document.getElementById(id);
const CATEGORY_NAMES = {light: "Lights", seed: "Seeds", ribbon: "Ribbons", dross: "Plain"};
const STOP = 48, KOIKOI = 49;

let game = null;       // {id, state, about}: the game on the page; about: its opponent (name, rating, hint unit)
let hintOn = localStorage.getItem("koikoi.hint") === "on";  // the page remembers the Hint box
let hints = null;      // {move, kind, options}: the opponent's values for the current decision

function opponentName() { return game?.about?.name || "Opponent"; }

function who(player) { return player === game.state.you ? "You" : opponentName(); }

function ratingText(rating) {
  if (!rating) return "not rated";
  return `Elo ${Math.round(rating.elo)} [${Math.round(rating.elo_lo)}, ${Math.round(rating.elo_hi)}]`;
}

function ratingTitle(rating) {
  return rating ? `Rating from the duels (Bradley-Terry, 95% interval), ${rating.anchor} = 0`
    : "No rating: this agent was not in the duels (results/duels/ratings.json)";
}

// A hint option as a number with its unit (GET /api/games/{id}/opponent says which unit).
function hintValue(option, units) {
  if (!units || units.unit === "probability") return `${Math.round(100 * option.probability)}%`;
  const v = option.value * units.scale + units.offset;
  if (units.unit === "win_probability") return `${Math.round(100 * v)}% win`;
  if (units.unit === "q") return `Q ${v.toFixed(2)}`;
  return `${v >= 0 ? "+" : ""}${v.toFixed(1)} pts`;
}

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

// What each yaku in progress asks for (the rules of pipeline/engine/scoring.py), for its tooltip.
const YAKU_RULES = {
  "Lights": "Three Lights 5 (the Rain Man does not count), Rainy Four Lights 7, Four Lights 8, Five Lights 10",
  "Boar-Deer-Butterfly": "the Boar, the Deer and the Butterflies: 5",
  "Flower Viewing Sake": "the Curtain and the Sake Cup: 1, or 3 after a koi-koi",
  "Moon Viewing Sake": "the Moon and the Sake Cup: 1, or 3 after a koi-koi",
  "Red Ribbons": "the three red poetry ribbons: 5 (10 more with the three blue ones)",
  "Blue Ribbons": "the three blue ribbons: 5 (10 more with the three red poetry ones)",
  "Tane": "5 seed cards (animals and objects): 1, and 1 more for each further seed",
  "Tan": "5 ribbons: 1, and 1 more for each further ribbon",
  "Kasu": "10 plain cards (the Sake Cup counts too): 1, and 1 more for each further plain card",
};
const YAKU_LABELS = {Tane: "Tane (seeds)", Tan: "Tan (ribbons)", Kasu: "Kasu (plain)"};

function renderYaku(el, yaku, progress = []) {
  el.replaceChildren();
  for (const [name, pts] of yaku.yaku) {
    const item = document.createElement("span");
    item.className = "yaku-item made";
    item.textContent = `${name} ${pts}`;
    el.append(item);
  }
  if (yaku.yaku.length) {
    const total = document.createElement("b");
    total.className = "yaku-total";
    total.textContent = `= ${plural(yaku.points, "point")}`;
    el.append(total);
  }
  for (const p of progress) {
    const item = document.createElement("span");
    item.className = "yaku-item toward";
    item.textContent = `${YAKU_LABELS[p.name] || p.name} ${p.have}/${p.need}`;
    if (p.need <= 5) {  // a pip per card: filled for those taken
      const pips = document.createElement("span");
      pips.className = "pips";
      pips.setAttribute("aria-hidden", "true");
      pips.textContent = "\u25cf".repeat(p.have) + "\u25cb".repeat(p.need - p.have);
      item.append(pips);
    }
    item.title = (p.missing.length ? `${p.name}: needs ${p.missing.join(" and ")}`
      : `${p.name}: ${plural(p.need - p.have, "more card")} to go`) + `. ${YAKU_RULES[p.name] || ""}`;
    el.append(item);
  }
  if (!el.childElementCount) el.textContent = "no yaku yet";
}

function legalButtons() { return [...document.querySelectorAll("#hand .legal, #field .legal")]; }

function setScores(you, opponent) {
  $("points-you").textContent = you;
  $("points-opponent").textContent = opponent;
}

function render() {
  const s = game.state;
  $("round").textContent = s.round;
  $("rounds").textContent = s.rounds;
  $("turn").textContent = s.turn;
  setScores(s.points.you, s.points.opponent);
  $("opponent-name").textContent = opponentName();
  $("opponent-title").textContent = opponentName();
  $("opponent-rating").textContent = ratingText(game.about?.rating);
  $("opponent-rating").title = ratingTitle(game.about?.rating);
  $("stock-count").textContent = plural(s.stock_count, "card");
  for (const side of ["you", "opponent"]) {
    $(`dealer-${side}`).hidden = (s.dealer === s.you) !== (side === "you");
    const k = s.koikoi[side];
    $(`koikoi-${side}`).hidden = !k;
    $(`koikoi-${side}`).textContent = `koi-koi x${k}`;
    renderPile($(`pile-${side}`), s.piles[side]);
    renderYaku($(`yaku-${side}`), s.yaku[side], s.progress[side]);
  }
  const backs = $("opponent-hand");
  backs.replaceChildren();
  for (let i = 0; i < s.opponent_hand_count; i++) backs.append(Cards.back());
  const count = document.createElement("span");
  count.className = "count";
  count.textContent = plural(s.opponent_hand_count, "card");
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
      if (where === "hand") {
        card.addEventListener("mouseenter", () => preview(c));
        card.addEventListener("focus", () => { if (card.matches(":focus-visible")) preview(c); });  // keyboard only
        card.addEventListener("mouseleave", () => preview(null));
        card.addEventListener("blur", () => preview(null));
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
    discard: "Your turn: play a card from your hand (hover to see what it takes; keys 1-8, or arrows and Enter).",
    pick: "Pick the field card to take (keys 1-2).",
    koikoi: "Koi-koi or stop?",
    over: "Game over.",
    round: `Round ${s.round} over.`,
    wait: `${opponentName()} is playing...`,
  };
  $("prompt").textContent = prompts[s.decision] || "";
  $("hint-toggle").disabled = !s.hint_available;
  $("hint-toggle").parentElement.title = s.hint_available ? "Show the opponent's view of your moves (key H)"
    : `${opponentName()} has no values to hint with (only model opponents do)`;
  preview(null);
  renderHints();
}

// What playing a hand card would take: the field cards of its month (1 taken, 2 a choice, 3 all, 0 none).
function preview(card) {
  document.querySelectorAll("#field .card.would-take").forEach((el) => el.classList.remove("would-take"));
  document.querySelectorAll("#hand .card.previewing").forEach((el) => el.classList.remove("previewing"));
  const box = $("preview");
  if (!card || !game) { box.replaceChildren(); box.hidden = true; return; }
  const matches = game.state.field.filter((c) => c[0] === card[0]);
  for (const c of matches) document.querySelector(`#field .card[data-card="${c.join(",")}"]`)?.classList.add("would-take");
  document.querySelector(`#hand .card[data-card="${card.join(",")}"]`)?.classList.add("previewing");
  const what = matches.length === 0 ? ["has no match: it stays on the field"]
    : matches.length === 1 ? ["takes ", cardList(matches), ` ${Cards.short(matches[0])}`]
    : matches.length === 2 ? ["takes ", cardList(matches), ` ${matches.map(Cards.short).join(" or ")} (you choose)`]
    : ["takes all three ", cardList(matches)];
  box.replaceChildren(cardList([card]), ` ${Cards.short(card)} `, ...what);
  box.hidden = false;
}

function renderHints() {
  document.querySelectorAll(".hint-badge.on-card").forEach((b) => b.remove());
  document.querySelectorAll("#koikoi-dialog .hint-badge").forEach((b) => { b.textContent = ""; });
  document.querySelectorAll(".best").forEach((b) => b.classList.remove("best"));
  const units = game?.about?.hint;
  const legend = $("hint-legend");
  legend.hidden = !(hintOn && units);
  if (units) legend.textContent = `Hint: ${units.what}.`;
  if (!hintOn || !hints || hints.move !== game.state.move) return;
  const best = Math.max(...hints.options.map((o) => o.value));
  for (const o of hints.options) {
    const target = o.action >= STOP ? $(o.action === STOP ? "stop-button" : "koikoi-button")
      : document.querySelector(`#hand .legal[data-action="${o.action}"], #field .legal[data-action="${o.action}"]`);
    if (!target) continue;
    let badge = target.querySelector(".hint-badge");
    if (!badge) {
      badge = document.createElement("span");
      badge.className = "hint-badge on-card";
      target.append(badge);
    }
    badge.textContent = hintValue(o, units);
    badge.title = units ? units.what : "";
    if (o.value === best) target.classList.add("best");
  }
}
