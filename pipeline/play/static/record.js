// The person's record (GET /api/history): the win rate against each opponent with its Wilson 95% interval,
// drawn as a bar, and every finished game in the server's records directory, newest first.
"use strict";

const RESULT_NAMES = {win: "Win", loss: "Loss", draw: "Draw"};

function pct(x) { return `${Math.round(100 * x)}%`; }

// The win rate as a dot on a 0-100% bar, its 95% interval as the band around it, 50% marked.
function intervalBar(row) {
  const bar = document.createElement("span");
  bar.className = "ci-bar";
  bar.title = `win rate ${pct(row.win_rate)}, 95% interval ${pct(row.ci95[0])} to ${pct(row.ci95[1])}`;
  const band = document.createElement("span");
  band.className = "ci-band";
  band.style.left = pct(row.ci95[0]);
  band.style.width = `${100 * (row.ci95[1] - row.ci95[0])}%`;
  const dot = document.createElement("span");
  dot.className = "ci-dot";
  dot.style.left = pct(row.win_rate);
  bar.append(band, dot);
  return bar;
}

function recordRow(values) {
  const tr = document.createElement("tr");
  for (const v of values) {
    const td = document.createElement("td");
    td.append(v);
    tr.append(td);
  }
  return tr;
}

async function showRecord() {
  let doc;
  try {
    doc = await api("GET", "/api/history");
  } catch (e) { showError(e.message); return; }
  const n = doc.games.length;
  $("record-summary").textContent = n ? `${plural(n, "finished game")} against ${plural(doc.opponents.length,
    "opponent")}. Win rates count a draw as half a win; the interval is Wilson's 95%: with few games it is wide.`
    : "No finished games yet: a game is recorded when it ends.";
  const vs = doc.opponents.map((o) => recordRow([o.name, String(o.games), `${o.wins}-${o.losses}-${o.draws}`,
    pct(o.win_rate), `${pct(o.ci95[0])} - ${pct(o.ci95[1])}`, intervalBar(o),
    `${o.point_diff > 0 ? "+" : ""}${o.point_diff.toFixed(1)}`]));
  $("record-opponents").replaceChildren(...vs);
  $("record-opponents-table").hidden = !vs.length;
  const games = doc.games.map((g) => {
    const result = document.createElement("span");
    result.className = `result ${g.result}`;
    result.textContent = RESULT_NAMES[g.result];
    const tr = recordRow([g.ended.slice(0, 16), g.name, result, `${g.points} : ${g.opponent_points}`,
      g.rounds === g.planned ? String(g.rounds) : `${g.rounds} of ${g.planned}`]);
    tr.title = `${g.file} (opponent ${g.opponent})`;
    return tr;
  });
  $("record-games").replaceChildren(...games);
  $("record-games-table").hidden = !games.length;
  $("record-skipped").hidden = !doc.skipped.length;
  $("record-skipped").textContent = doc.skipped.length
    ? `Not counted (${plural(doc.skipped.length, "file")}): ${doc.skipped.join("; ")}` : "";
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
  $("record-dialog").showModal();
  setHash("record");
  $("record-close").focus();
}
