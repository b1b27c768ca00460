// The analysis after a game (GET /api/games/{id}/analysis, docs/analysis.md): polled while the server judges the
// person's decisions round by round, then the win-probability graph (SVG, the rounds marked, the flagged moves
// coloured), the flagged moves in a list, and a click on one shows the board at that decision with the move
// played and the best one side by side.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const GRAPH = {w: 700, h: 200, pad: 28};

function svgEl(tag, attrs, text) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

const winPct = (p) => `${(100 * p).toFixed(1)}%`;

// A move as shown: its card (a token below 48 is a card id), or stop / koi-koi.
function moveElement(action) {
  return action < STOP ? Cards.element(Cards.deck[action].card) : cell(action === STOP ? "stop" : "koi-koi", "b");
}

// The graph: P(you win) at each round's start (the win-probability table) and after each of your judged moves.
function analysisGraph(report) {
  const pts = report.graph.points;
  const {w, h, pad} = GRAPH;
  const x = (i) => pad + (i * (w - 2 * pad)) / Math.max(1, pts.length - 1);
  const y = (p) => h - pad - p * (h - 2 * pad);
  const svg = svgEl("svg", {viewBox: `0 0 ${w} ${h}`, role: "img", "aria-label": "your win probability"});
  svg.append(svgEl("line", {x1: pad, x2: w - pad, y1: y(0.5), y2: y(0.5), class: "half"}));
  for (const [p, t] of [[0, "0%"], [0.5, "50%"], [1, "100%"]]) {
    svg.append(svgEl("text", {x: 2, y: y(p) + 4, class: "axis"}, t));
  }
  pts.forEach((p, i) => {
    if (p.kind !== "start") return;
    svg.append(svgEl("line", {x1: x(i), x2: x(i), y1: pad - 10, y2: h - pad, class: "round-line"}));
    svg.append(svgEl("text", {x: x(i) + 3, y: pad - 14, class: "axis"}, `R${p.round}`));
  });
  svg.append(svgEl("polyline", {points: pts.map((p, i) => `${x(i)},${y(p.p)}`).join(" "), class: "curve"}));
  pts.forEach((p, i) => {
    const d = p.kind === "move" ? report.decisions[p.decision] : null;
    if (!d || !d.label) return;
    const dot = svgEl("circle", {cx: x(i), cy: y(p.p), r: 6, class: `mark ${d.label}`, "data-decision": d.index});
    dot.append(svgEl("title", {}, flaggedText(d)));
    dot.addEventListener("click", () => showDecision(report, d));
    svg.append(dot);
  });
  return svg;
}

function flaggedText(d) {
  return `R${d.round} T${d.turn} ${d.decision}: ${d.label}, ${(100 * d.cost).toFixed(1)} points of P(win)`;
}

// The board as it was at decision d, from your side: the move played and the best one, then hand, field, piles.
function showDecision(report, d) {
  document.querySelectorAll("#analysis-moves li.selected").forEach((li) => li.classList.remove("selected"));
  document.querySelector(`#analysis-moves li[data-decision="${d.index}"]`)?.classList.add("selected");
  const b = d.board;
  $("analysis-where").textContent = `Round ${d.round}, turn ${d.turn}, your ${d.decision}; points ${b.points[0]} : `
    + `${b.points[1]}` + (b.yaku_points ? `, your yaku ${b.yaku_points}` : "") + ".";
  for (const [side, action, value] of [["chosen", d.chosen, d.value], ["best", d.best, d.best_value]]) {
    $(`analysis-${side}`).replaceChildren(moveElement(action), cell(`P(win) ${winPct(value)}`, "div"));
  }
  $("analysis-cost").textContent = `Cost ${(100 * d.cost).toFixed(1)} points of P(win), 95% interval `
    + `${(100 * d.ci95[0]).toFixed(1)} to ${(100 * d.ci95[1]).toFixed(1)}`;
  const cards = (list) => list.map((c) => Cards.element(c, {small: true}));
  $("analysis-pending").replaceChildren(...(b.pending ? ["to match: ", Cards.element(b.pending, {small: true})] : []));
  $("analysis-hand").replaceChildren(...cards(b.hand));
  $("analysis-field").replaceChildren(...cards(b.field));
  $("analysis-pile").replaceChildren(...(b.pile.length ? cards(b.pile) : ["nothing"]));
  $("analysis-opponent-pile").replaceChildren(...(b.opponent_pile.length ? cards(b.opponent_pile) : ["nothing"]));
  $("analysis-board").hidden = false;
}

function renderAnalysis(report) {
  const me = report.players[String(report.graph.perspective)];
  const flagged = report.decisions.filter((d) => d.label);
  $("analysis-status").textContent = `Your accuracy ${me.accuracy ?? "-"} over ${plural(me.decisions, "decision")} `
    + `with a choice: ${plural(me.blunder, "blunder")}, ${plural(me.mistake, "mistake")}, `
    + `${plural(me.inaccuracy, "inaccuracy", "inaccuracies")}. Judged by ${report.judge.spec} on `
    + `${report.judge.deals} deals a decision.`;
  $("analysis-graph").replaceChildren(analysisGraph(report));
  $("analysis-moves").replaceChildren(...flagged.map((d) => {
    const li = document.createElement("li");
    li.dataset.decision = d.index;
    li.className = d.label;
    const button = document.createElement("button");
    button.type = "button";
    button.append(`R${d.round} T${d.turn} ${d.decision}: ${d.chosen_name}, best ${d.best_name}: `
      + `${d.label}, ${(100 * d.cost).toFixed(1)} points`);
    button.addEventListener("click", () => showDecision(report, d));
    li.append(button);
    return li;
  }));
  $("analysis-none").hidden = flagged.length > 0;
  $("analysis-progress").hidden = true;
  $("analysis-result").hidden = false;
}

async function showAnalysis() {
  if (!game || game.state.decision !== "over") return;
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
  $("analysis-result").hidden = true;
  $("analysis-board").hidden = true;
  $("analysis-progress").hidden = false;
  $("analysis-progress").removeAttribute("value");
  $("analysis-status").textContent = "Judging your moves...";
  $("analysis-dialog").showModal();
  const id = game.id;
  try {
    for (;;) {
      const r = await api("GET", `/api/games/${id}/analysis`);
      if (game?.id !== id || !$("analysis-dialog").open) return;
      if (r.status === "done") { renderAnalysis(r); return; }
      if (r.total) {
        $("analysis-progress").max = r.total;
        $("analysis-progress").value = r.done;
        $("analysis-status").textContent = `Judging your moves: ${r.done} of ${plural(r.total, "round")} done...`;
      }
      await sleep(300);
    }
  } catch (e) {
    $("analysis-progress").hidden = true;
    $("analysis-status").textContent = e.message;
  }
}
