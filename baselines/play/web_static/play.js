/* polarzoo play page: one game per browser tab against an agent, through the JSON API of
 * polarzoo.baselines.play.web.  The board is the server's SVG (the env's render_svg); this file
 * only marks the cells a click can use (from the legal moves, i.e. the action mask). */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);
  const ui = { info: null, game: null, selected: null, hint: null };
  window.polarzoo = ui;  // for scripts and tests

  function el(tag, attributes, text) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function say(text, isError) {
    $("message").textContent = text || "";
    $("message").className = "message" + (isError ? " error" : "");
  }

  async function api(method, path, body) {
    document.body.dataset.busy = "1";
    try {
      const response = await fetch(path, {
        method: method, headers: body !== undefined ? { "Content-Type": "application/json" } : {},
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const data = await response.json().catch(() => ({ error: "HTTP " + response.status }));
      if (!response.ok) throw new Error(data.error || "HTTP " + response.status);
      return data;
    } finally {
      document.body.dataset.busy = "0";
    }
  }

  // ---- the setup form ------------------------------------------------------------------------
  function fillSeats() {
    const env = $("env").value;
    const game = ui.info.games[env];
    $("players-label").hidden = !game.players;
    const count = game.players ? Number($("players").value) : game.seats.length;
    const seats = game.players ? Array.from({ length: count }, (_, i) => "player_" + i) : game.seats;
    const previous = $("seat").value;
    $("seat").innerHTML = "";
    for (const seat of seats) $("seat").appendChild(el("option", { value: seat }, seat));
    if (seats.includes(previous)) $("seat").value = previous;
  }

  async function newGame(event) {
    if (event) event.preventDefault();
    const env = $("env").value;
    const body = { env: env, seat: $("seat").value, opponent: $("opponent").value.trim() || "random", seed: Number($("seed").value) || 0 };
    if (ui.info.games[env].players) body.players = Number($("players").value);
    say("starting...");
    try {
      show(await api("POST", "/api/games", body));
      say("");
    } catch (error) { say(error.message, true); }
  }

  // ---- showing a game ------------------------------------------------------------------------
  function show(game) {
    ui.game = game;
    ui.selected = null;
    ui.hint = null;
    sessionStorage.setItem("polarzoo-game", game.id);
    $("hint").hidden = true;
    const yours = !game.over && game.to_move === game.human;
    $("status").textContent = yours ? "your move (" + game.human + ")" + (game.view === "piles" ? ": " + game.status : "") : game.status;
    $("result").textContent = game.over ? game.result : "";
    $("undo-button").disabled = !game.can_undo;
    $("hint-button").disabled = game.over || game.to_move !== game.human;
    const moves = $("moves");
    moves.innerHTML = "";
    game.moves.forEach((move, i) => {
      const item = el("li", game.view === "piles" ? { "data-ply": String(i + 1) } : {}, move.player + ": " + move.notation);
      // Thin Ice: a move in the list shows the piles right after it
      if (game.view === "piles") item.addEventListener("click", () => showPly(i + 1));
      moves.appendChild(item);
    });
    moves.scrollTop = moves.scrollHeight;
    const pass = game.legal.find((m) => m.notation === "pass");
    $("pass-button").hidden = !pass;
    $("done-button").hidden = !game.legal.some((m) => m.kind === "done");
    if (game.view === "piles") showThinIce(game); else showBoard(game);
    document.body.dataset.version = String(game.version);
  }

  function showBoard(game) {
    $("thin-ice").hidden = true;
    $("board").innerHTML = game.svg;
    for (const cell of $("board").querySelectorAll("g.cell")) cell.addEventListener("click", () => clickCell(Number(cell.dataset.cell)));
    mark();
  }

  function mark() {
    const game = ui.game;
    const sources = new Set(game.legal.filter((m) => m.from !== undefined).map((m) => m.from));
    // a placement (a move with a target and no source) is played by clicking its target
    const placements = new Set(game.legal.filter((m) => m.from === undefined && m.to !== undefined).map((m) => m.to));
    const targets = new Set(game.legal.filter((m) => m.from === ui.selected).map((m) => m.to));
    const hinted = new Set();
    if (ui.hint && ui.hint.moves.length) {
      const best = game.legal.find((m) => m.action === ui.hint.moves[0].action);
      if (best && best.from !== undefined) hinted.add(best.from);
      if (best && best.to !== undefined) hinted.add(best.to);
    }
    for (const cell of $("board").querySelectorAll("g.cell")) {
      const id = Number(cell.dataset.cell);
      cell.classList.toggle("movable", sources.has(id));
      cell.classList.toggle("selected", id === ui.selected);
      cell.classList.toggle("target", (ui.selected !== null && targets.has(id)) || placements.has(id));
      cell.classList.toggle("hint", hinted.has(id));
    }
  }

  function clickCell(cell) {
    const game = ui.game;
    if (game.over) { say("the game is over: start a new game", true); return; }
    if (game.to_move !== game.human) return;
    const placement = game.legal.find((m) => m.from === undefined && m.to === cell);
    if (placement) { play(placement.action); return; }
    const move = game.legal.find((m) => m.from === ui.selected && m.to === cell);
    if (ui.selected !== null && move) { play(move.action); return; }
    if (game.legal.some((m) => m.from === cell)) { ui.selected = cell; say(""); mark(); return; }
    ui.selected = null;
    mark();
    const name = document.querySelector('g.cell[data-cell="' + cell + '"]').dataset.name;
    say(name + ": not a move here; " + (game.legal.some((m) => m.from !== undefined)
      ? "click one of your pieces that can move (dashed), then a green target" : "click a green cell"), true);
  }

  async function play(action) {
    try { show(await api("POST", "/api/games/" + ui.game.id + "/move", { action: action, ply: ui.game.moves.length })); say(""); }
    catch (error) { say(error.message, true); }
  }

  // ---- Thin Ice ------------------------------------------------------------------------------
  function showThinIce(game) {
    $("thin-ice").hidden = false;
    $("board").innerHTML = "";
    const picture = el("img", { class: "piles", id: "picture", alt: "every pile (MuJoCo)", src: game.picture, "data-ply": String(game.moves.length) });
    picture.addEventListener("click", () => showPly(ui.game.moves.length));
    $("board").appendChild(picture);
    const table = $("piles");
    table.innerHTML = "";
    table.appendChild(el("tr")).append(el("th", {}, "player"), el("th", {}, "pieces"), el("th", {}, "status"));
    for (const p of game.players) {
      const row = el("tr", { class: (p.out ? "out" : "") + (p.agent === game.to_move ? " turn" : "") });
      const who = p.agent + (p.agent === game.human ? " (you)" : "");
      const state = p.out ? "out (" + p.out + ": " + { T: "four pieces on the table", A: "three pieces touching nothing", N: "tip in tip" }[p.out] + ")"
        : (p.points !== null ? p.points + " points" : "in");
      row.append(el("td", {}, who), el("td", {}, p.pieces || "-"), el("td", {}, state));
      table.appendChild(row);
    }
    const calls = $("calls");
    calls.innerHTML = "";
    for (const move of game.legal.filter((m) => m.kind === "call")) {
      const button = el("button", { type: "button", "data-action": String(move.action), class: "call" }, move.notation);
      button.addEventListener("click", () => play(move.action));
      calls.appendChild(button);
    }
    const pickups = $("pickups");
    pickups.innerHTML = "";
    for (const move of game.legal.filter((m) => m.kind === "pickup")) {
      const button = el("button", { type: "button", "data-action": String(move.action), class: "pickup" }, move.notation + " (" + move.size + ")");
      button.addEventListener("click", () => play(move.action));
      pickups.appendChild(button);
    }
    const places = game.legal.filter((m) => m.kind === "place");
    $("placing").hidden = places.length === 0;
    const sizes = [...new Set(places.map((m) => m.size))];
    const orientations = [...new Set(places.map((m) => m.orientation))];
    fillSelect($("size"), sizes);
    fillSelect($("orientation"), orientations);
    drawGrid();
  }

  function showPly(ply) {
    const game = ui.game;
    const now = ply === game.moves.length;
    $("picture").src = now ? game.picture : "/api/games/" + game.id + "/picture.png?ply=" + ply + "&v=" + game.version;
    $("picture").dataset.ply = String(ply);
    for (const item of $("moves").children) item.classList.toggle("current", !now && Number(item.dataset.ply) === ply);
    say(now ? "" : "the piles after move " + ply + " (" + game.moves[ply - 1].notation + "); click the picture for now");
  }

  function fillSelect(select, values) {
    const previous = select.value;
    select.innerHTML = "";
    for (const value of values) select.appendChild(el("option", { value: value }, value));
    if (values.includes(previous)) select.value = previous;
  }

  function drawGrid() {
    const game = ui.game;
    const svg = $("grid");
    svg.innerHTML = "";
    if (!game || game.view !== "piles") return;
    const n = game.grid, size = 280 / n;
    const legal = {};
    for (const m of game.legal) if (m.kind === "place" && m.size === $("size").value && m.orientation === $("orientation").value) legal[m.cell] = m;
    const hinted = ui.hint && ui.hint.moves.length ? ui.hint.moves[0].notation.split(" ") : [];
    const ns = "http://www.w3.org/2000/svg";
    for (let row = 0; row < n; row++) {
      for (let col = 0; col < n; col++) {
        const name = String.fromCharCode(97 + col) + (row + 1);
        const rect = document.createElementNS(ns, "rect");
        rect.setAttribute("x", col * size + 1); rect.setAttribute("y", (n - 1 - row) * size + 1);
        rect.setAttribute("width", size - 2); rect.setAttribute("height", size - 2);
        rect.setAttribute("data-name", name);
        rect.setAttribute("class", "cell" + (legal[name] ? " legal" : "") + (hinted[0] === "place" && hinted[2] === name ? " hint" : ""));
        const label = document.createElementNS(ns, "title");
        label.textContent = name;
        rect.appendChild(label);
        rect.addEventListener("click", () => {
          if (legal[name]) play(legal[name].action);
          else say("place " + $("size").value + " " + name + " " + $("orientation").value + ": not a legal placement", true);
        });
        svg.appendChild(rect);
      }
    }
  }

  // ---- buttons -------------------------------------------------------------------------------
  async function hint() {
    try {
      ui.hint = await api("GET", "/api/games/" + ui.game.id + "/hint");
      const box = $("hint");
      box.innerHTML = "";
      box.appendChild(el("div", {}, "hint (" + ui.hint.by + ")" + (ui.hint.value !== null ? ", value " + ui.hint.value.toFixed(2) + " (-1 lost .. +1 won)" : "")));
      const list = el("ol");
      for (const move of ui.hint.moves) list.appendChild(el("li", {}, move.notation + (move.probability !== null ? "  " + (100 * move.probability).toFixed(1) + "%" : "")));
      box.appendChild(list);
      box.hidden = false;
      if (ui.game.view === "piles") drawGrid(); else mark();
    } catch (error) { say(error.message, true); }
  }

  async function undo() {
    try { show(await api("POST", "/api/games/" + ui.game.id + "/undo", { ply: ui.game.moves.length })); say("undone: your last move and the replies to it"); }
    catch (error) { say(error.message, true); }
  }

  function special(kind) {
    const move = ui.game.legal.find((m) => (kind === "pass" ? m.notation === "pass" : m.kind === kind));
    if (move) play(move.action);
  }

  async function start() {
    try { ui.info = await api("GET", "/api/info"); } catch (error) { say(error.message, true); return; }
    for (const [env, game] of Object.entries(ui.info.games)) $("env").appendChild(el("option", { value: env }, game.title));
    for (const spec of ui.info.opponents) $("opponents").appendChild(el("option", { value: spec }));
    if (ui.info.defaults.env) $("env").value = ui.info.defaults.env;
    if (ui.info.defaults.opponent) $("opponent").value = ui.info.defaults.opponent;
    fillSeats();
    $("env").addEventListener("change", fillSeats);
    $("players").addEventListener("change", fillSeats);
    $("setup").addEventListener("submit", newGame);
    $("hint-button").addEventListener("click", hint);
    $("undo-button").addEventListener("click", undo);
    $("pass-button").addEventListener("click", () => special("pass"));
    $("done-button").addEventListener("click", () => special("done"));
    $("size").addEventListener("change", drawGrid);
    $("orientation").addEventListener("change", drawGrid);
    const saved = sessionStorage.getItem("polarzoo-game");  // a reload keeps this tab's game
    if (saved) {
      try { show(await api("GET", "/api/games/" + saved)); return; } catch (error) { sessionStorage.removeItem("polarzoo-game"); }
    }
    await newGame();
  }

  start();
})();
