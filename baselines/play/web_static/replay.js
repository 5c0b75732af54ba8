/* polarzoo replay viewer: step through a recorded game, forwards and back.
 *
 * PolarzooReplay.mount(element, data, base) shows `data` (what polarzoo.baselines.play.replay
 * writes: {env, title, seats, lineup, result, frames: [{ply, player, notation, status, svg | picture}]});
 * picture URLs are resolved against `base`.  Static pages need no server:
 * `python -m polarzoo.baselines.play.replay export games.jsonl --name game` writes game.json,
 * game.js (the data as a script that calls PolarzooReplay.register(name, data, document.currentScript.src)),
 * game.html, replay.js and style.css; a page plays it with
 *   <div class="polarzoo-replay" data-replay="game"></div>
 *   <script src="replay.js"></script><script src="game.js"></script>
 * (game.html is that page; the documentation site's env pages do the same).
 */
(function () {
  "use strict";
  const registered = {};

  function el(tag, attributes, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function mount(container, data, base) {
    container.innerHTML = "";
    container.classList.add("polarzoo", "replay");
    const frames = data.frames;
    let current = 0;
    const title = el("div", { class: "replay-title" }, data.title + " (" + data.lineup.map((who, i) => data.seats[i] + ": " + who).join(", ") + ")");
    const board = el("div", { class: "replay-board" });
    const controls = el("div", { class: "replay-controls" });
    const buttons = {};
    for (const [name, label] of [["first", "|\u25c0"], ["back", "\u25c0"], ["forward", "\u25b6"], ["last", "\u25b6|"]]) {
      buttons[name] = el("button", { type: "button", class: "replay-" + name, title: name }, label);
      controls.appendChild(buttons[name]);
    }
    const slider = el("input", { type: "range", min: "0", max: String(frames.length - 1), value: "0", class: "replay-slider" });
    const label = el("span", { class: "frame-label" });
    controls.append(slider, label);
    const status = el("div", { class: "status replay-status" });
    const table = el("table", { class: "piles" });
    const moves = el("ol", { class: "moves" });
    frames.slice(1).forEach((frame, i) => {
      const item = el("li", { "data-ply": String(i + 1) }, frame.player + ": " + frame.notation);
      item.addEventListener("click", () => show(i + 1));
      moves.appendChild(item);
    });
    const result = el("div", { class: "result" }, data.result);
    container.append(title, controls, board, status, table, moves, result);

    function show(index) {
      current = Math.max(0, Math.min(frames.length - 1, index));
      const frame = frames[current];
      if (frame.svg) board.innerHTML = frame.svg;
      else if (frame.picture) {
        board.innerHTML = "";
        board.appendChild(el("img", { class: "piles", alt: "the piles after move " + current, src: new URL(frame.picture, base).href }));
      }
      table.innerHTML = "";
      if (frame.players) {
        table.appendChild(el("tr")).append(el("th", {}, "player"), el("th", {}, "pieces in the pile"), el("th", {}, "status"));
        for (const p of frame.players) {
          const row = el("tr", { class: p.out ? "out" : "" });
          const state = p.out ? "out (" + p.out + ")" : (p.points !== null ? p.points + " points" : "in");
          row.append(el("td", {}, p.agent), el("td", {}, p.pieces || "-"), el("td", {}, state));
          table.appendChild(row);
        }
      }
      status.textContent = frame.status;
      label.textContent = current === 0 ? "start (" + (frames.length - 1) + " moves)" : "move " + current + "/" + (frames.length - 1) + ": " + frame.player + " " + frame.notation;
      slider.value = String(current);
      container.dataset.ply = String(current);
      for (const item of moves.children) item.classList.toggle("current", Number(item.dataset.ply) === current);
      buttons.first.disabled = buttons.back.disabled = current === 0;
      buttons.forward.disabled = buttons.last.disabled = current === frames.length - 1;
      result.hidden = current !== frames.length - 1;
    }
    buttons.first.addEventListener("click", () => show(0));
    buttons.back.addEventListener("click", () => show(current - 1));
    buttons.forward.addEventListener("click", () => show(current + 1));
    buttons.last.addEventListener("click", () => show(frames.length - 1));
    slider.addEventListener("input", () => show(Number(slider.value)));
    container.tabIndex = 0;
    container.addEventListener("keydown", (event) => {
      if (event.key === "ArrowRight") { show(current + 1); event.preventDefault(); }
      if (event.key === "ArrowLeft") { show(current - 1); event.preventDefault(); }
    });
    show(0);
    return { show: show };
  }

  function register(name, data, base) {
    registered[name] = { data: data, base: base || location.href };
    mountAll();
  }

  function mountAll() {
    for (const node of document.querySelectorAll(".polarzoo-replay[data-replay]")) {
      const entry = registered[node.dataset.replay];
      if (entry && !node.dataset.mounted) {
        node.dataset.mounted = "1";
        mount(node, entry.data, entry.base);
      }
    }
  }

  window.PolarzooReplay = { mount: mount, register: register };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", mountAll);
  else mountAll();
})();
