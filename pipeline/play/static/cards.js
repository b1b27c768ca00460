// Hanafuda cards drawn as SVG: the month's colour and number on top, a motif for the category
// (a sun for a light, a diamond for a seed, a ribbon, leaves for dross), the card's name, and a
// category stripe at the bottom. Names and categories come from GET /api/cards.
"use strict";

const MONTH_COLOURS = ["#2e6b3a", "#c2185b", "#e97fa5", "#7b4fa6", "#3949ab", "#b0306e",
                       "#8e3b5c", "#a98a2c", "#d4a017", "#d2451e", "#5a7d6a", "#6a4a8a"];
const CATEGORY_COLOURS = {light: "#d9a400", seed: "#3f8f4f", ribbon: "#c0392b", dross: "#8a8a8a"};
const RIBBON_COLOURS = {poetry: "#c0392b", red: "#d9463b", blue: "#2c5aa0"};

const Cards = {
  deck: [],  // by card id

  id(card) { return 4 * (card[0] - 1) + (card[1] - 1); },

  info(card) { return Cards.deck[Cards.id(card)]; },

  label(card) {
    const c = Cards.info(card);
    return `${c.name} (${c.month}, ${c.category})`;
  },

  motif(c, colour) {
    switch (c.category) {
      case "light":
        return `<circle cx="30" cy="46" r="15" fill="#d6392f" stroke="${CATEGORY_COLOURS.light}" stroke-width="4"/>`;
      case "seed":
        return `<polygon points="30,27 46,46 30,65 14,46" fill="${colour}" stroke="${CATEGORY_COLOURS.seed}"
                 stroke-width="3"/>`;
      case "ribbon": {
        const fill = RIBBON_COLOURS[c.ribbon] || RIBBON_COLOURS.red;
        const lines = c.ribbon === "poetry"
          ? '<line x1="30" y1="32" x2="30" y2="44" stroke="#fff" stroke-width="2"/>' +
            '<line x1="30" y1="48" x2="30" y2="58" stroke="#fff" stroke-width="2"/>' : "";
        return `<path d="M23 24 H37 V68 L30 62 L23 68 Z" fill="${fill}"/>${lines}`;
      }
      default:
        return `<ellipse cx="22" cy="50" rx="5" ry="11" fill="${colour}" transform="rotate(-25 22 50)"/>
                <ellipse cx="30" cy="44" rx="5" ry="12" fill="${colour}"/>
                <ellipse cx="38" cy="50" rx="5" ry="11" fill="${colour}" transform="rotate(25 38 50)"/>`;
    }
  },

  svg(card) {
    const c = Cards.info(card);
    const colour = MONTH_COLOURS[card[0] - 1];
    const name = c.name.length > 12 ? c.name.slice(0, 11) + "…" : c.name;
    return `<svg viewBox="0 0 60 96" role="img" aria-hidden="true" xmlns="http://www.w3.org/2000/svg">
      <rect x="1" y="1" width="58" height="94" rx="6" fill="#fffaf0" stroke="#3b2f2f" stroke-width="1.5"/>
      <path d="M1 7 a6 6 0 0 1 6 -6 H53 a6 6 0 0 1 6 6 V18 H1 Z" fill="${colour}"/>
      <text x="5" y="13" font-size="10" font-weight="bold" fill="#fff">${card[0]}</text>
      <text x="55" y="13" font-size="7" fill="#fff" text-anchor="end">${c.month.slice(0, 9)}</text>
      ${Cards.motif(c, colour)}
      <text x="30" y="82" font-size="8" text-anchor="middle" fill="#3b2f2f">${name}</text>
      <rect x="1" y="87" width="58" height="6" fill="${CATEGORY_COLOURS[c.category]}"/>
    </svg>`;
  },

  // A card element: a focusable button when it can be played, else a plain figure.
  element(card, {button = false, small = false} = {}) {
    const el = document.createElement(button ? "button" : "div");
    if (button) el.type = "button";
    el.className = "card" + (small ? " small" : "");
    el.dataset.card = card.join(",");
    el.dataset.action = String(Cards.id(card));
    el.title = Cards.label(card);
    el.setAttribute("aria-label", Cards.label(card));
    el.innerHTML = Cards.svg(card);
    return el;
  },

  back() {
    const el = document.createElement("div");
    el.className = "card back";
    return el;
  },
};
