// The rules page draws the cards of each yaku (an inline script would break the page's CSP).
  "use strict";
  fetch("/api/cards").then((r) => r.json()).then((deck) => {
    Cards.deck = deck;
    for (const row of document.querySelectorAll("#yaku tr[data-cards]")) {
      const cards = row.dataset.cards.split(" ").map((c) => c.split(",").map(Number));
      row.querySelector(".cards").append(...cards.map((c) => Cards.element(c, {small: true})));
    }
  });
