// Card elements: the hanafuda face (hanafuda.js), a short label under table-size cards, and a tooltip with the
// card's full name, month and kind. Names and categories come from GET /api/cards.
"use strict";

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December"];
// Short labels that fit under a card; the tooltip has the full name.
const PLANTS = ["Pine", "Plum", "Cherry", "Wisteria", "Iris", "Peony", "Clover", "Susuki", "Mum", "Maple", "Willow",
                "Paulownia"];
const SPECIAL_LABELS = {
  "1,1": "Crane", "2,1": "Warbler", "3,1": "Curtain", "4,1": "Cuckoo", "5,1": "Bridge", "6,1": "Butterflies",
  "7,1": "Boar", "8,1": "Moon", "8,2": "Geese", "9,1": "Sake cup", "10,1": "Deer", "11,1": "Rain man",
  "11,2": "Swallow", "11,4": "Lightning", "12,1": "Phoenix",
};
const RIBBON_LABELS = {poetry: "Poetry", blue: "Blue", red: "Ribbon"};
const KIND_NAMES = {light: "light", seed: "seed (animal)", dross: "plain (kasu)"};

function plural(n, word, many = `${word}s`) { return `${n} ${n === 1 ? word : many}`; }

const Cards = {
  deck: [],  // by card id, from GET /api/cards

  id(card) { return 4 * (card[0] - 1) + (card[1] - 1); },

  info(card) { return Cards.deck[Cards.id(card)]; },

  short(card) {
    const c = Cards.info(card);
    return SPECIAL_LABELS[card.join(",")] || RIBBON_LABELS[c.ribbon] || PLANTS[card[0] - 1];
  },

  label(card) {
    const c = Cards.info(card);
    const kind = c.category === "ribbon" ? `${c.ribbon === "poetry" ? "red poetry" : c.ribbon} ribbon`
      : c.card[0] === 9 && c.card[1] === 1 ? "seed, also plain (kasu)" : KIND_NAMES[c.category];
    return `${c.name}: ${c.month}, month ${card[0]} (${MONTHS[card[0] - 1]}), ${kind}`;
  },

  // A card element: a focusable button when it can be played, else a plain figure; table cards get a label.
  element(card, {button = false, small = false} = {}) {
    const el = document.createElement(button ? "button" : "div");
    if (button) el.type = "button";
    el.className = "card" + (small ? " small" : "");
    el.dataset.card = card.join(",");
    el.dataset.month = String(card[0]);
    el.dataset.action = String(Cards.id(card));
    el.dataset.category = Cards.info(card).category;
    el.title = Cards.label(card);
    el.setAttribute("aria-label", Cards.label(card));
    el.innerHTML = Hanafuda.svg(card[0], card[1], {numbers: true});
    if (!small) {
      const label = document.createElement("span");
      label.className = "card-label";
      label.textContent = Cards.short(card);
      el.append(label);
    }
    return el;
  },

  back() {
    const el = document.createElement("div");
    el.className = "card back";
    return el;
  },
};
