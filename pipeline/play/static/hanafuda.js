// Hanafuda card faces drawn as SVG, one function per card (our own drawing): each month's plant, and the
// lights, animals, objects and ribbons on top. Hanafuda.svg(month, index) returns a whole <svg> string;
// the card ids, months and categories follow pipeline/engine/cards.py (index 1 the most valuable card).
"use strict";

const Hanafuda = (() => {
  const C = {
    ink: "#1d1a16", cream: "#f4e9cf", paper: "#fbf5e6", red: "#c9302c", deep: "#8e1c1c", sky: "#d4452e",
    green: "#2f7a3c", dark: "#1e4a2a", leaf: "#4a9a3f", blue: "#24408e", navy: "#1b2a5c", purple: "#6a3d9c",
    lilac: "#9a7bd3", yellow: "#f2b705", gold: "#d89a17", pink: "#f0a2bd", rose: "#e0507a", white: "#fffdf6",
    brown: "#7b4a27", tan: "#b98a4e", olive: "#7f8b2b", orange: "#e4661d", grey: "#8d8a82",
  };
  const W = 60, H = 96;

  // ---------------------------------------------------------------- primitives
  const f = (n) => +n.toFixed(2);
  const circle = (cx, cy, r, fill, extra = "") => `<circle cx="${f(cx)}" cy="${f(cy)}" r="${f(r)}" fill="${fill}" ${extra}/>`;
  const ellipse = (cx, cy, rx, ry, fill, rot = 0, extra = "") =>
    `<ellipse cx="${f(cx)}" cy="${f(cy)}" rx="${f(rx)}" ry="${f(ry)}" fill="${fill}"` +
    `${rot ? ` transform="rotate(${rot} ${f(cx)} ${f(cy)})"` : ""} ${extra}/>`;
  const path = (d, fill, extra = "") => `<path d="${d}" fill="${fill}" ${extra}/>`;
  const line = (d, stroke, w, extra = "") =>
    `<path d="${d}" fill="none" stroke="${stroke}" stroke-width="${w}" stroke-linecap="round" ${extra}/>`;
  const outline = (w = 0.8) => `stroke="${C.ink}" stroke-width="${w}" stroke-linejoin="round"`;
  const group = (body, transform) => `<g transform="${transform}">${body}</g>`;
  const rot = (deg, x, y) => `rotate(${deg} ${x} ${y})`;
  const polar = (cx, cy, r, deg) => [cx + r * Math.cos(deg * Math.PI / 180), cy + r * Math.sin(deg * Math.PI / 180)];

  function petals(cx, cy, r, n, fill, centre, start = -90, extra = "") {
    let out = "";
    for (let i = 0; i < n; i++) {
      const [x, y] = polar(cx, cy, r * 0.62, start + 360 * i / n);
      out += circle(x, y, r * 0.5, fill, extra);
    }
    return out + circle(cx, cy, r * 0.3, centre);
  }

  // A ribbon (tanzaku) hanging from (x, y), tilted by deg: red poetry (with writing), plain red or blue.
  function ribbon(kind, x, y, deg = 0, len = 44) {
    const fill = kind === "blue" ? C.blue : C.red;
    let body = path(`M-5 0 H5 V${len} L0 ${len - 5} L-5 ${len} Z`, fill, outline(0.9));
    body += line(`M-5 3 H5`, C.ink, 0.6);
    if (kind === "poetry") {  // brush strokes standing for the written verse
      body += line(`M-1.5 8 q3 2 0 5 q-2.5 2 1 4 M1.5 20 q-3 1 -1 4 q2 2 -1 4 M-1 31 l2.5 3 l-2.5 2`, C.ink, 1.3);
    } else if (kind === "blue") {
      body += line(`M0 6 V${len - 9}`, "#4f6cc4", 1.2);
    }
    return group(body, `translate(${x} ${y}) rotate(${deg})`);
  }

  // ---------------------------------------------------------------- plants
  function pineClump(cx, cy, s) {
    let out = ellipse(cx, cy, 12 * s, 6 * s, C.dark, 0, outline(0.7));
    for (let i = -4; i <= 4; i++) {  // needles fanning up from the clump's base
      const [x, y] = polar(cx, cy + 5 * s, 11 * s, -90 + i * 15);
      out += line(`M${f(cx)} ${f(cy + 5 * s)} L${f(x)} ${f(y)}`, C.leaf, 0.7 * s);
    }
    return out;
  }

  function pine(v) {
    const trunk = [
      "M8 94 C14 74 6 60 18 46 C26 36 22 22 34 12",
      "M52 94 C44 78 52 62 40 50 C32 40 40 26 28 14",
      "M30 94 C24 80 36 66 28 52 C22 42 30 30 26 18",
    ][v];
    const clumps = [[[34, 16, 1.1], [16, 40, 1.0], [40, 52, 0.9], [18, 74, 0.8]], [[28, 18, 1.1], [46, 46, 1.0], [20, 60, 0.8],
      [44, 80, 0.7]],
      [[20, 24, 1.0], [42, 36, 1.0], [22, 62, 0.9], [42, 74, 0.8]]][v];
    let out = line(trunk, C.brown, 4) + line(trunk, C.ink, 0.6, `stroke-dasharray="2 5"`);
    for (const [x, y, s] of clumps) out += pineClump(x, y, s);
    return out;
  }

  function plumBranch(v) {
    const d = ["M4 70 L22 52 L18 36 L36 20 L50 8 M22 52 L44 58 M18 36 L8 24",
      "M56 76 L38 58 L42 40 L24 26 L10 10 M38 58 L16 64 M42 40 L54 30",
      "M6 30 L26 40 L38 30 L56 36 M26 40 L30 66 L20 84 M30 66 L48 76"][v];
    let out = line(d, C.ink, 3) + line(d, C.brown, 1.4);
    const flowers = [[[36, 20], [22, 52], [8, 24], [44, 58], [48, 9], [14, 62]],
      [[24, 26], [38, 58], [54, 30], [16, 64], [12, 11], [46, 70]],
      [[26, 40], [38, 30], [56, 36], [20, 84], [48, 76], [12, 32]]][v];
    flowers.forEach(([x, y], i) => { out += petals(x, y, i % 2 ? 4.2 : 5, 5, C.red, C.yellow, -90, outline(0.4)); });
    return out;
  }

  function cherryBlossoms(y0, many = true) {
    const spots = many ? [[12, 10], [28, 8], [46, 12], [20, 22], [38, 24], [52, 28], [8, 32], [30, 36]]
      : [[12, 10], [30, 12], [48, 10], [22, 24], [40, 26]];
    let out = path(`M2 2 H58 V${y0} Q30 ${y0 + 8} 2 ${y0} Z`, "#f7d3de");
    spots.forEach(([x, y], i) => { out += petals(x, y + (y0 - 40) / 2, 6, 5, i % 3 ? C.pink : C.white, C.rose, -90, outline(0.4)); });
    return out;
  }

  function cherry(v) {
    const hills = v === 0 ? path("M2 94 V70 Q18 58 34 68 Q46 60 58 66 V94 Z", C.dark)
      : path("M2 94 V76 Q28 62 58 74 V94 Z", C.purple);
    return cherryBlossoms(44, true) + hills + (v === 0 ? cherryTrunk("M44 94 C40 70 50 56 42 40") :
      cherryTrunk("M14 94 C20 74 10 58 20 40"));
  }
  const cherryTrunk = (d) => line(d, C.ink, 3.4) + line(d, C.brown, 1.6);

  function wisteriaCluster(x, y, len) {
    let out = line(`M${x} ${y - 4} V${y}`, C.ink, 0.8);
    for (let i = 0; i < 7; i++) {
      const t = i / 6;
      out += ellipse(x + (i % 2 ? 1.5 : -1.5), y + t * len, 4.6 * (1 - t * 0.6), 2.6, i % 2 ? C.purple : C.lilac, 0,
        outline(0.35));
    }
    return out;
  }

  function wisteria(v) {
    const vine = ["M2 6 Q20 14 34 4 Q46 0 58 8", "M2 10 Q22 2 36 10 Q48 16 58 6", "M2 4 Q30 16 58 4"][v];
    let out = line(vine, C.ink, 2.4) + line(vine, C.brown, 1);
    const clusters = [[[12, 12, 30], [28, 10, 40], [46, 8, 28]], [[10, 10, 38], [30, 10, 30], [50, 11, 42]],
      [[16, 10, 44], [38, 11, 36]]][v];
    for (const [x, y, len] of clusters) out += wisteriaCluster(x, y, len);
    const leaves = [[20, 10, 30], [38, 6, -20], [54, 12, 40], [6, 10, -40]];
    for (const [x, y, r] of leaves) out += ellipse(x, y, 5, 2, C.green, r, outline(0.3));
    return out;
  }

  function irisFlower(x, y) {
    return line(`M${x} ${y + 6} V${y + 40}`, C.green, 1.6) +
      ellipse(x - 4, y + 3, 5, 2.4, C.purple, 40, outline(0.4)) + ellipse(x + 4, y + 3, 5, 2.4, C.purple, -40, outline(0.4)) +
      ellipse(x, y - 2, 2.4, 5, C.blue, 0, outline(0.4)) + circle(x, y + 3, 1.2, C.yellow);
  }

  function iris(v, blades = true) {
    let out = "";
    const bladeAt = [[8, -4], [16, 3], [26, -2], [36, 4], [46, -3], [54, 2]];
    for (const [x, lean] of blades ? bladeAt : []) {
      out += path(`M${x - 2} 94 Q${x + lean} 60 ${x + lean * 2} ${36 + (x % 7)} Q${x + lean + 2} 60 ${x + 2} 94 Z`, C.green,
        outline(0.4));
    }
    const flowers = [[[16, 30], [40, 22], [30, 50]], [[20, 22], [44, 34], [12, 52]], [[28, 20], [14, 42], [46, 48]]][v];
    for (const [x, y] of flowers) out += irisFlower(x, y);
    return out;
  }

  function peonyFlower(cx, cy, r) {
    let out = "";
    for (let i = 0; i < 8; i++) {
      const [x, y] = polar(cx, cy, r * 0.55, i * 45);
      out += circle(x, y, r * 0.5, i % 2 ? C.rose : C.red, outline(0.4));
    }
    return out + circle(cx, cy, r * 0.5, C.pink, outline(0.4)) + circle(cx, cy, r * 0.2, C.yellow);
  }

  function peonyLeaves(y) {
    let out = "";
    for (const [x, dy, r] of [[10, 0, -30], [22, 6, 10], [38, 2, -10], [50, 8, 30], [30, 14, 0]]) {
      out += ellipse(x, y + dy, 9, 4, C.dark, r, outline(0.4)) + line(`M${x - 7} ${y + dy} L${x + 7} ${y + dy}`, C.leaf, 0.5,
        `transform="${rot(r, x, y + dy)}"`);
    }
    return out;
  }

  function peony(v) {
    const at = [[[30, 52, 14]], [[22, 40, 11], [42, 62, 10]], [[38, 36, 10], [20, 62, 12]]][v];
    let out = peonyLeaves(78);
    for (const [x, y, r] of at) out += peonyFlower(x, y, r);
    return out;
  }

  function cloverStem(d, flowers) {
    let out = line(d, C.ink, 1.8);
    flowers.forEach(([x, y], i) => {  // a spray of small flowers and rounded leaves along the arching stem
      out += ellipse(x + 4, y + 3, 4.2, 2.2, C.dark, 30 + i * 25, outline(0.3));
      out += ellipse(x - 4, y + 4, 3.6, 1.9, C.green, -35 + i * 10, outline(0.3));
      out += circle(x, y, 2.5, i % 2 ? C.rose : C.red, outline(0.4)) + circle(x + 2.6, y - 1.6, 1.9, C.rose, outline(0.3)) +
        circle(x - 2.2, y - 2, 1.7, C.red, outline(0.3));
    });
    return out;
  }

  function clover(v) {
    const stems = [
      ["M4 94 Q10 40 52 12", [[12, 66], [16, 48], [24, 34], [34, 24], [46, 16]]],
      ["M56 94 Q50 40 8 12", [[48, 66], [44, 48], [36, 34], [26, 24], [14, 16]]],
      ["M2 56 Q30 6 58 44", [[9, 44], [18, 32], [30, 26], [42, 28], [52, 36]]],
    ];
    const picks = [[0, 2], [1, 2], [1]][v];
    const ground = v === 2 ? path("M2 94 V80 Q30 70 58 80 V94 Z", C.deep) : "";
    return ground + picks.map((i) => cloverStem(stems[i][0], stems[i][1])).join("");
  }

  function susukiHill(top = 58) {
    let out = path(`M2 94 V${top + 8} Q30 ${top - 14} 58 ${top + 8} V94 Z`, C.ink);
    for (let x = 6; x <= 54; x += 4) {  // white pampas blades on the black hill
      const y = top + 8 - Math.sin((x - 2) / 56 * Math.PI) * 14;
      out += line(`M${x} 94 Q${x + 1} ${y + 10} ${x + ((x % 8) - 4)} ${y - 4}`, C.white, 0.7);
    }
    return out;
  }

  function plume(x, y, deg) {
    let out = line(`M0 0 Q2 -14 0 -26`, C.ink, 0.8);
    for (let j = 0; j < 5; j++) out += ellipse(j % 2 ? 1.6 : -1.6, -24 + j * 3, 2.6, 1, C.white, j % 2 ? 30 : -30, outline(0.25));
    return group(out, `translate(${x} ${y}) rotate(${deg})`);
  }

  function susuki(v) {
    if (v === 1) {  // a pale sky, a high hill and three plumes
      return path("M2 2 H58 V40 H2 Z", "#f1c9a2") + plume(16, 46, -12) + plume(30, 40, 4) + plume(44, 46, 16) + susukiHill(44);
    }
    return path("M2 2 H58 V94 H2 Z", "#f7e6b8") + path("M-4 16 H40 a4 4 0 0 1 0 8 H-4 Z M20 32 H64 V40 H20 a4 4 0 0 1 0 -8 Z",
      C.sky, outline(0.6)) + susukiHill(58);
  }

  function chrysanthemumFlower(cx, cy, r, fill) {
    let out = "";
    for (let i = 0; i < 16; i++) {
      const [x, y] = polar(cx, cy, r * 0.6, i * 22.5);
      out += ellipse(x, y, r * 0.42, r * 0.13, fill, i * 22.5, outline(0.3));
    }
    return out + circle(cx, cy, r * 0.32, C.orange, outline(0.3));
  }

  function chrysanthemum(v, leaves = true) {
    const stems = ["M14 94 Q18 70 16 50 M40 94 Q38 60 44 34", "M30 94 Q26 70 20 44 M30 94 Q36 66 44 54",
      "M10 94 Q16 60 24 30 M50 94 Q46 70 40 60"][v];
    let out = line(stems, C.green, 1.6);
    const leafAt = [[[20, 78], [38, 80], [52, 70]], [[10, 82], [50, 84], [30, 74]], [[28, 84], [8, 70], [50, 78]]][v];
    for (const [x, y] of leaves ? leafAt : []) out += ellipse(x, y, 7, 3, C.green, -20, outline(0.4));
    const flowers = [[[16, 44, 11, C.yellow], [44, 28, 9, C.red]], [[20, 38, 10, C.red], [44, 50, 11, C.yellow]],
      [[24, 26, 10, C.yellow], [40, 56, 9, C.white]]][v];
    for (const [x, y, r, fill] of flowers) out += chrysanthemumFlower(x, y, r, fill);
    return out;
  }

  function mapleLeaf(cx, cy, r, deg, fill) {
    let d = "";
    for (let i = 0; i < 7; i++) {  // seven pointed lobes, a notch between each
      const a = -90 + (i - 3) * 34;
      const [x, y] = polar(0, 0, r, a);
      const [nx, ny] = polar(0, 0, r * 0.45, a + 17);
      d += `${i ? "L" : "M"}${f(x)} ${f(y)} L${f(nx)} ${f(ny)} `;
    }
    d += `L0 ${f(r * 0.35)} Z`;
    return group(path(d, fill, outline(0.4)) + line(`M0 ${f(r * 0.35)} L0 ${f(r * 0.9)}`, C.ink, 0.6), `translate(${f(cx)} ${f(cy)}) rotate(${deg})`);
  }

  function maple(v) {
    const branch = ["M2 20 Q24 30 58 14", "M58 30 Q30 40 2 24", "M2 10 Q30 20 40 50 Q46 70 58 80"][v];
    let out = line(branch, C.ink, 1.8);
    const leaves = [[[12, 24, 9, -20], [30, 30, 10, 10], [48, 20, 9, 30], [20, 44, 8, -40], [42, 46, 8, 20]],
      [[50, 30, 9, 20], [30, 38, 10, -10], [10, 28, 9, -30], [40, 56, 8, 40], [18, 58, 8, -20]],
      [[10, 14, 8, -10], [28, 24, 9, 20], [38, 46, 10, -30], [50, 72, 9, 10], [22, 66, 8, 30]]][v];
    leaves.forEach(([x, y, r, d], i) => { out += mapleLeaf(x, y, r, d, i % 3 === 1 ? C.orange : C.red); });
    return out;
  }

  function willowStrands(xs, stem = C.green, leaf = C.leaf) {
    let out = "";
    for (const x of xs) {
      out += line(`M${x} 2 Q${x + 6} 30 ${x - 2} 64`, stem, 1.4);
      for (let y = 10; y < 60; y += 9) out += ellipse(x + 3 - y / 20, y, 3.2, 1.2, leaf, 70);
    }
    return out;
  }

  function paulowniaLeaf(cx, cy, s, deg) {
    const body = path("M0 -12 C10 -12 14 0 8 8 C4 12 -4 12 -8 8 C-14 0 -10 -12 0 -12 Z", C.green, outline(0.6)) +
      line("M0 -10 V10 M0 0 L6 -6 M0 0 L-6 -6 M0 5 L6 2 M0 5 L-6 2", C.dark, 0.6);
    return group(body, `translate(${cx} ${cy}) rotate(${deg}) scale(${s})`);
  }

  function paulowniaFlowers(x, y, n = 3) {
    let out = line(`M${x} ${y + 14} V${y - 2}`, C.ink, 0.9);
    for (let i = 0; i < n; i++) {
      const dx = (i - (n - 1) / 2) * 6;
      for (let j = 0; j < 4; j++) out += ellipse(x + dx, y - j * 4.4, 2.4, 2.2, j % 2 ? C.purple : C.lilac, 0, outline(0.3));
    }
    return out;
  }

  function paulownia(v) {
    const leaves = [[[16, 74, 1.3, -20], [44, 76, 1.3, 20], [30, 84, 1.1, 0]], [[30, 76, 1.6, 0], [10, 86, 1, -40]],
      [[14, 80, 1.2, -30], [46, 70, 1.4, 30]], [[30, 80, 1.5, 10], [50, 88, 1, 40]]][v];
    let out = "";
    if (v === 1) out += path("M2 62 H58 V94 H2 Z", C.yellow);  // the coloured Paulownia dross
    for (const [x, y, s, d] of leaves) out += paulowniaLeaf(x, y, s, d);
    const flowers = [[[30, 36, 3]], [[30, 24, 3], [16, 44, 2]], [[22, 30, 3], [44, 46, 2]], [[18, 40, 2], [40, 28, 3]]][v];
    for (const [x, y, n] of flowers) out += paulowniaFlowers(x, y, n);
    return out;
  }

  // ---------------------------------------------------------------- lights and animals
  const sun = (cx, cy, r) => circle(cx, cy, r, C.red, outline(0.8));

  function crane() {
    const body = ellipse(30, 66, 13, 8, C.white, -18, outline(0.9)) +
      path("M38 60 Q50 56 54 66 Q46 66 40 72 Z", C.ink) +  // black tail feathers
      line("M22 62 Q12 52 18 36", C.ink, 4.6) + line("M22 62 Q12 52 18 36", C.white, 3) +
      circle(18, 34, 3.2, C.white, outline(0.8)) + circle(18.6, 32.2, 1.6, C.red) +
      line("M15.5 34 L6 38", C.olive, 1.2) + line("M28 72 L26 90 M33 72 L34 90", C.ink, 1);
    return path("M2 78 H58 V94 H2 Z", "#a7c48a") + sun(40, 24, 13) + pineClump(14, 14, 0.9) + pineClump(46, 48, 0.8) + body;
  }

  function warbler() {
    return plumBranch(0) + group(
      ellipse(0, 0, 8, 5, C.olive, -10, outline(0.8)) + circle(-7, -3, 3.4, C.olive, outline(0.8)) +
      circle(-8, -4, 0.8, C.ink) + path("M-10 -3 L-14 -2 L-10 -1 Z", C.ink) + path("M6 -1 L16 4 L6 3 Z", C.ink) +
      ellipse(1, 1, 4, 2, "#a5b33f", -10), "translate(36 44)");
  }

  function curtain() {
    let stripes = "";
    for (let x = 6; x < 58; x += 8) stripes += path(`M${x} 52 H${x + 4} V86 H${x} Z`, C.white);
    return cherryBlossoms(46, true) +
      path("M2 52 H58 V84 Q44 90 30 84 Q16 90 2 84 Z", C.red, outline(0.9)) + stripes +
      line("M2 51 H58", C.ink, 1.6) + circle(30, 68, 8, C.white, outline(0.8)) + petals(30, 68, 5.4, 5, C.purple, C.white) +
      path("M2 86 H58 V94 H2 Z", C.dark);
  }

  function cuckoo() {
    const moon = circle(46, 54, 10, C.red, outline(0.8)) + circle(50.5, 50.5, 8.6, C.cream);  // a red crescent
    const bird = group(path("M-12 0 Q-2 -3 8 -1 L14 -4 L10 1 Q0 5 -12 0 Z", C.ink) +
      path("M-2 -1 Q4 -14 12 -16 Q6 -6 4 -1 Z", C.ink) + path("M-12 0 L-16 -1 L-12 1.5 Z", C.yellow) +
      circle(-9, -0.5, 0.7, C.white), "translate(26 72) rotate(-15) scale(1.35)");
    return wisteria(2) + moon + bird;
  }

  function bridge() {
    const plank = (x, y, deg) => group(path("M-14 -4 H14 V4 H-14 Z", C.tan, outline(0.8)) +
      line("M-14 0 H14", C.brown, 0.6), `translate(${x} ${y}) rotate(${deg})`);
    return iris(0, false) + path("M2 70 H58 V94 H2 Z", C.navy) +
      line("M4 78 Q12 74 20 78 T36 78 T52 78 M8 88 Q16 84 24 88 T40 88 T56 88", "#6f8fd6", 0.8) +
      plank(18, 64, 25) + plank(42, 64, -25) + line("M8 58 V76 M30 62 V80 M52 58 V76", C.ink, 1.4);
  }

  function butterfly(x, y, deg, wing) {
    return group(
      ellipse(-5, -4, 5.5, 4, wing, -20, outline(0.6)) + ellipse(5, -4, 5.5, 4, wing, 20, outline(0.6)) +
      ellipse(-4, 3, 3.6, 3, C.yellow, 20, outline(0.6)) + ellipse(4, 3, 3.6, 3, C.yellow, -20, outline(0.6)) +
      ellipse(0, 0, 1.2, 6, C.ink) + line("M0 -5 L-3 -10 M0 -5 L3 -10", C.ink, 0.6), `translate(${x} ${y}) rotate(${deg})`);
  }

  function butterflies() {
    return peonyLeaves(78) + peonyFlower(30, 60, 12) +
      butterfly(18, 22, -15, C.blue) + butterfly(42, 32, 20, C.purple);
  }

  function boar() {
    const body = ellipse(0, 0, 15, 8.5, C.brown, 0, outline(0.9)) + path("M12 -6 Q22 -4 24 2 L14 6 Z", C.brown, outline(0.8)) +
      circle(24, 2, 1.6, C.tan, outline(0.5)) + circle(16, -3, 0.9, C.ink) + path("M10 -7 L12 -12 L14 -6 Z", C.ink) +
      line("M-10 -8 L-6 -11 M-4 -9 L0 -12 M2 -9 L6 -11", C.ink, 1) + line("M-8 7 L-12 14 M-2 8 L0 15 M6 7 L4 14 M11 5 L14 12",
      C.ink, 2) + line("M-15 -2 Q-20 -4 -19 2", C.ink, 1);
    return clover(0) + group(body, "translate(27 70) scale(1.25)");
  }

  function moon() {
    return path("M2 2 H58 V62 H2 Z", C.sky) + circle(30, 28, 17, C.cream, outline(1)) + susukiHill(54);
  }

  function geese() {
    const goose = (x, y, s) => group(path("M-7 0 Q0 -2 7 0 L9 -1 L8 1 Q0 3 -7 0 Z", C.ink) +
      path("M-1 -1 L-6 -8 L3 -1 Z M-1 1 L-5 7 L3 1 Z", C.ink), `translate(${x} ${y}) scale(${s})`);
    return path("M2 2 H58 V52 H2 Z", C.sky) + goose(16, 14, 1.2) + goose(36, 22, 1.2) + goose(24, 34, 1.1) + susukiHill(48);
  }

  function sakeCup() {
    return chrysanthemum(0, false) +
      ellipse(34, 66, 16, 5.5, C.red, 0, outline(1)) + path("M18 66 Q34 90 50 66 Z", C.red, outline(1)) +
      path("M28 82 H40 L42 88 H26 Z", C.red, outline(0.9)) + ellipse(34, 66, 12, 3.6, C.gold) +
      line("M30 64 H38 M34 62 V69 M31 68 H37", C.deep, 0.9);
  }

  function deer() {
    const body = ellipse(0, 0, 14, 7, C.tan, 0, outline(0.9)) +
      [-8, -3, 3, 8].map((x, i) => circle(x, (i % 2) - 2, 1.1, C.white)).join("") +
      line("M-9 6 L-10 20 M-4 6 L-4 20 M6 6 L7 20 M10 5 L12 19", C.ink, 1.8) +
      path("M10 -4 Q14 -14 14 -18 L19 -17 Q18 -10 14 -3 Z", C.tan, outline(0.8)) +  // neck turned back
      ellipse(17, -19, 5, 3.4, C.tan, 15, outline(0.8)) + circle(15.5, -20, 0.9, C.ink) +
      line("M14 -22 L10 -30 L6 -32 M10 -30 L12 -35 M18 -22 L20 -31 L24 -34 M20 -31 L17 -35", C.brown, 1.3) +
      line("M-14 -2 L-17 -5", C.ink, 1.4);
    return maple(0) + group(body, "translate(28 68)");
  }

  function rainman() {
    let rain = "";
    for (let x = 4; x < 60; x += 7) rain += line(`M${x} 2 L${x - 6} 30`, "#9fa6b4", 0.7);
    const umbrella = path("M6 34 Q16 14 38 18 Z", C.yellow, outline(0.8)) + line("M22 22 L30 50", C.ink, 1.2) +
      line("M10 31 L22 22 L36 19 M15 26 L22 22", C.gold, 0.6);
    const man = circle(27, 38, 4, C.cream, outline(0.8)) + path("M23 37 Q27 31 31 37 Z", C.ink) +
      path("M22 44 L34 44 L38 70 L18 70 Z", C.red, outline(0.9)) + line("M24 48 L36 66 M20 58 L34 52", C.yellow, 1.2) +
      line("M22 70 L20 80 M32 70 L36 80", C.ink, 2);
    const frog = ellipse(48, 80, 5, 3.4, C.green, 0, outline(0.7)) + circle(46, 77.5, 1.2, C.yellow, outline(0.4)) +
      circle(50, 77.5, 1.2, C.yellow, outline(0.4));
    return path("M2 2 H58 V94 H2 Z", "#3a3f52") + rain + willowStrands([44, 54]) + path("M2 84 H58 V94 H2 Z", C.navy) +
      line("M2 88 Q14 84 26 88 T50 88", "#6f8fd6", 0.8) + umbrella + man + frog;
  }

  function swallow() {
    const bird = group(path("M-14 -2 Q-4 -4 6 -1 L12 -5 L10 -1 Q0 4 -14 -2 Z", C.ink) +
      path("M-2 -2 L-10 -14 L4 -2 Z M0 0 L-4 10 L6 0 Z", C.ink) + path("M8 -2 L12 -1 L8 0 Z", C.red) +
      path("M-14 -2 L-20 -6 M-14 -2 L-20 1", C.ink, `stroke="${C.ink}" stroke-width="1.2"`),
    "translate(30 50) rotate(28)");
    return willowStrands([10, 24, 48]) + path("M2 80 H58 V94 H2 Z", C.ink) +
      line("M4 86 Q14 82 24 86 T44 86 T58 86", C.grey, 0.8) + bird;
  }

  function lightning() {
    const drum = (x, y) => circle(x, y, 4.2, C.ink, `stroke="${C.gold}" stroke-width="0.8"`) + circle(x, y, 1.6, C.gold);
    return path("M2 2 H58 V94 H2 Z", C.red) +
      path("M2 2 H58 V20 Q44 30 30 22 Q16 14 2 26 Z", C.ink) +
      path("M34 26 L22 52 L32 52 L20 80 L42 46 L32 46 L44 26 Z", C.ink, `stroke="${C.yellow}" stroke-width="1"`) +
      drum(10, 40) + drum(50, 38) + drum(12, 70) + drum(48, 74) + willowStrands([6], C.ink, C.ink);
  }

  function phoenix() {
    const tail = line("M30 44 Q46 58 52 80", C.green, 4) + line("M30 44 Q40 60 38 84", C.yellow, 3.4) +
      line("M30 44 Q24 62 30 86", C.red, 3.4) + line("M30 44 Q50 48 56 64", C.purple, 3);
    const body = ellipse(30, 40, 9, 6, C.red, -20, outline(0.9)) +
      path("M24 36 Q10 20 4 28 Q12 30 16 42 Z", C.green, outline(0.8)) +
      path("M34 34 Q48 14 56 22 Q46 28 40 42 Z", C.yellow, outline(0.8)) +
      line("M22 38 Q16 30 18 22", C.red, 3) + circle(18, 20, 3.4, C.red, outline(0.8)) +
      path("M18 17 L20 11 L22 17 Z", C.yellow) + circle(17, 19.5, 0.9, C.ink) + path("M15 21 L11 22 L15 23 Z", C.gold);
    return path("M2 2 H58 V40 Q30 52 2 40 Z", "#f3c46b") + paulowniaLeaf(12, 76, 1.3, -20) + paulowniaLeaf(48, 78, 1.3, 20) +
      paulowniaFlowers(30, 62, 2) + tail + body;
  }

  // ---------------------------------------------------------------- the 48 cards
  const MOTIFS = [
    [crane, () => pine(0) + ribbon("poetry", 24, 30, -8, 46), () => pine(1), () => pine(2)],
    [warbler, () => plumBranch(1) + ribbon("poetry", 32, 32, 8, 46), () => plumBranch(2), () => plumBranch(0)],
    [curtain, () => cherry(0) + ribbon("poetry", 30, 38, -6, 42), () => cherry(1), () => cherryBlossoms(62, false) +
      cherryTrunk("M30 94 C26 80 34 70 30 60")],
    [cuckoo, () => wisteria(0) + ribbon("red", 30, 46, 10, 40), () => wisteria(1), () => wisteria(2)],
    [bridge, () => iris(1) + ribbon("red", 30, 30, -10, 42), () => iris(2), () => iris(0)],
    [butterflies, () => peony(1) + ribbon("blue", 30, 24, 6, 44), () => peony(2), () => peony(0)],
    [boar, () => clover(0) + ribbon("red", 32, 30, -6, 46), () => clover(1), () => clover(2)],
    [moon, geese, () => susuki(1), () => susuki(2)],
    [sakeCup, () => chrysanthemum(1) + ribbon("blue", 30, 26, -8, 44), () => chrysanthemum(2), () => chrysanthemum(0)],
    [deer, () => maple(1) + ribbon("blue", 30, 28, 8, 44), () => maple(2), () => maple(0)],
    [rainman, swallow, () => willowStrands([8, 20, 50]) + ribbon("red", 34, 26, -10, 44), lightning],
    [phoenix, () => paulownia(1), () => paulownia(2), () => paulownia(3)],
  ];

  function svg(month, index, {numbers = true} = {}) {
    const clip = `hf-clip-${month}-${index}`;
    const tag = numbers ? circle(9, 9, 5.4, C.paper, outline(0.7)) +
      `<text x="9" y="11.6" font-size="${month > 9 ? 6.4 : 7.4}" font-weight="700" text-anchor="middle" fill="${C.ink}" ` +
      `font-family="Georgia, serif">${month}</text>` : "";
    return `<svg viewBox="0 0 ${W} ${H}" xmlns="http://www.w3.org/2000/svg" aria-hidden="true" class="hanafuda">` +
      `<defs><clipPath id="${clip}"><rect x="2" y="2" width="56" height="92" rx="2.5"/></clipPath></defs>` +
      `<rect x="0.5" y="0.5" width="59" height="95" rx="4" fill="${C.ink}"/>` +
      `<rect x="2" y="2" width="56" height="92" rx="2.5" fill="${C.cream}"/>` +
      `<g clip-path="url(#${clip})">${MOTIFS[month - 1][index - 1]()}</g>${tag}</svg>`;
  }

  return {svg, MOTIFS};
})();

if (typeof module !== "undefined") module.exports = Hanafuda;  // node, for a quick check of all 48
