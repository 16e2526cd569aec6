// Test-only preload (`node -r ./loopback.cjs ...`): the npm "everything" server's Streamable
// HTTP transport listens on every interface (`app.listen(PORT)`, no host option); servers in
// this suite listen on 127.0.0.1 only. Every listen without a host is given 127.0.0.1, the
// bound address is printed as "listening on http://127.0.0.1:PORT/mcp" on stdout, and each
// HTTP DELETE (a client ending its session) and each JSON-RPC "tools/call" request the server
// parses (its transport reads every POST body with JSON.parse) is appended to $MOORING_PEER_LOG
// as a JSON line.
"use strict";
const fs = require("fs");
const net = require("net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    args = [Number(args[0]), "127.0.0.1", ...args.slice(1).filter((a) => typeof a === "function")];
  } else if (args[0] && typeof args[0] === "object" && args[0].host === undefined) {
    args = [{ ...args[0], host: "127.0.0.1" }, ...args.slice(1)];
  }
  this.once("listening", () => {
    const address = this.address();
    if (address && typeof address === "object") {
      process.stdout.write(`listening on http://127.0.0.1:${address.port}/mcp\n`);
    }
  });
  if (process.env.MOORING_PEER_LOG && typeof this.on === "function") {
    this.on("request", (req) => {
      if (req.method === "DELETE") {
        const line = { method: "http:DELETE", session: req.headers["mcp-session-id"] || "" };
        fs.appendFileSync(process.env.MOORING_PEER_LOG, JSON.stringify(line) + "\n");
      }
    });
  }
  return listen.apply(this, args);
};

if (process.env.MOORING_PEER_LOG) {
  const parse = JSON.parse;
  JSON.parse = function (...args) {
    const value = parse.apply(this, args);
    for (const message of Array.isArray(value) ? value : [value]) {
      if (message && message.jsonrpc === "2.0" && message.method === "tools/call" && "id" in message) {
        const line = { method: "tools/call", tool: (message.params || {}).name || "" };
        fs.appendFileSync(process.env.MOORING_PEER_LOG, JSON.stringify(line) + "\n");
      }
    }
    return value;
  };
}
