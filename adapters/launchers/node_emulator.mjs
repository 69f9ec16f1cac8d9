// Serves an SQS emulator installed from npm on 127.0.0.1 only: both emulators' own entry points either bind
// every interface (fauxqs' CLI) or need a host argument, so the suite starts them through this file.
// Usage: <node> node_emulator.mjs <fauxqs|local-aws-sqs> <folder holding node_modules> <port>
// The Node is the system's, or the one installed into the emulator's folder (the npm package `node`, for a release
// that needs a newer one): once listening, it prints one line of JSON naming the package's version and the Node's.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [name, folder, portText] = process.argv.slice(2);
const port = Number.parseInt(portText, 10);
const host = "127.0.0.1";
const load = (path) => import(pathToFileURL(join(folder, "node_modules", path)).href);

if (name === "fauxqs") {
  const { buildApp } = await load("fauxqs/dist/app.js");
  const app = buildApp({ logger: false }); // queue URLs then name the host the client used
  await app.listen({ port, host });
} else if (name === "local-aws-sqs") {
  const { createSqsServer } = (await load("local-aws-sqs/dist/index.js")).default;
  await createSqsServer({ port, hostname: host });
} else {
  console.error(`unknown emulator ${name}`);
  process.exit(2);
}
const { version } = JSON.parse(await readFile(join(folder, "node_modules", name, "package.json"), "utf8"));
console.log(JSON.stringify({ serving: name, version, node: process.version, url: `http://${host}:${port}` }));
