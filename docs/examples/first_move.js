// A polarzoo process agent in JavaScript (Node.js): answers every turn with its first legal move,
// by its notation.  proc:node docs/examples/first_move.js
const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const turn = JSON.parse(line);
  process.stdout.write(JSON.stringify({ move: turn.legal_moves[0].notation }) + "\n");
});
