// Runs Material for MkDocs' own search worker (from a built site) in node, so the
// tests can ask the very code the browser runs.
//   node tests/material_search.js SITE_ROOT < queries.json > results.json
// queries.json: ["query", ...]; results.json: one list per query of result groups
// (one group per page, in Material's order), each a list of locations.
const fs = require("fs"), path = require("path"), vm = require("vm");
const site = process.argv[2];
const js = path.join(site, "assets/javascripts/workers");
const worker = fs.readdirSync(js).find(f => /^search\..*\.min\.js$/.test(f));
let handler = null;
const out = [];
// The worker expects a Web Worker global: self, importScripts, addEventListener, postMessage.
global.self = global;
global.addEventListener = (type, fn) => { handler = fn; };
global.postMessage = m => out.push(m);
global.importScripts = (...urls) => {
  for (const u of urls) vm.runInThisContext(fs.readFileSync(path.join(js, u), "utf8"));
};
vm.runInThisContext(fs.readFileSync(path.join(js, worker), "utf8"));
(async () => {
  const index = JSON.parse(fs.readFileSync(path.join(site, "search/search_index.json"), "utf8"));
  await handler({ data: { type: 0 /* SETUP */, data: { ...index, options: { suggest: false } } } });
  const queries = JSON.parse(fs.readFileSync(0, "utf8"));
  const results = [];
  for (const q of queries) {
    await handler({ data: { type: 2 /* QUERY */, data: q } });
    results.push(out.pop().data.items.map(group => group.map(doc => doc.location)));
  }
  process.stdout.write(JSON.stringify(results));
})().catch(e => { console.error(e); process.exit(1); });
