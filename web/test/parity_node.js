// Answers a list of [command, request] pairs (JSON on stdin) with the WebAssembly module's
// request(); prints the answers as a JSON list (web/test/parity.py).
"use strict";
const createGpusim = require(process.argv[2] + "/gpusim.js");
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
createGpusim().then((m) => {
  const out = input.map(([command, request]) => m.request(command, JSON.stringify(request)));
  process.stdout.write(JSON.stringify(out));
});
