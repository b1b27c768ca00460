// The deck page (deck.html): the 48 cards month by month (a file of its own: the page's CSP runs no inline script).
"use strict";
const KINDS = {light: "light", seed: "seed", dross: "plain"};
fetch("/api/cards").then((r) => r.json()).then((deck) => {
  Cards.deck = deck;
  for (let m = 1; m <= 12; m++) {
    const box = document.createElement("section");
    box.className = "month";
    const title = document.createElement("h2");
    const plant = deck[4 * (m - 1)].month;
    title.textContent = `${m} ${MONTHS[m - 1]}: ${plant === "Grass" ? "Susuki grass (pampas)" : plant}`;
    const row = document.createElement("div");
    row.className = "cards";
    for (let i = 1; i <= 4; i++) {
      const c = deck[4 * (m - 1) + i - 1];
      const entry = document.createElement("div");
      entry.className = "entry";
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = Cards.short([m, i]);
      const kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = c.category === "ribbon" ? `${c.ribbon === "poetry" ? "poetry" : c.ribbon} ribbon`
        : m === 9 && i === 1 ? "seed & plain" : KINDS[c.category];
      entry.append(Cards.element([m, i]), name, kind);
      row.append(entry);
    }
    box.append(title, row);
    document.getElementById("months").append(box);
  }
});
