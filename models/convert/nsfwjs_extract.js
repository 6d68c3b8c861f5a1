// Extract nsfwjs's graph model from its UMD bundles: model.min.js exports the model.json object,
// each group*-shard*.min.js exports one weight shard as a base64 string.
//
//   node nsfwjs_extract.js MODEL_DIR OUT_DIR  ->  OUT_DIR/model.json, OUT_DIR/weights.bin
//
// The modules run in a bare vm context with only `module`/`exports`: they are data wrappers, and
// this keeps them from seeing the package's "type": "module" or anything of Node's.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

function loadUmd(file) {
  const sandbox = { module: { exports: {} } };
  sandbox.exports = sandbox.module.exports;
  vm.runInNewContext(fs.readFileSync(file, "utf8"), sandbox, { filename: file, timeout: 60000 });
  return sandbox.module.exports;
}

const [modelDir, outDir] = process.argv.slice(2);
if (!modelDir || !outDir) {
  console.error("usage: node nsfwjs_extract.js MODEL_DIR OUT_DIR");
  process.exit(2);
}
const model = loadUmd(path.join(modelDir, "model.min.js"));
if (model.format !== "graph-model" || !Array.isArray(model.weightsManifest)) {
  throw new Error("model.min.js did not export a TF.js graph model");
}
const shards = [];
for (const group of model.weightsManifest) {
  for (const p of group.paths) {
    const data = loadUmd(path.join(modelDir, `${p}.min.js`));
    if (typeof data !== "string") throw new Error(`${p}.min.js did not export a base64 string`);
    shards.push(Buffer.from(data, "base64"));
  }
}
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, "model.json"), JSON.stringify(model));
fs.writeFileSync(path.join(outDir, "weights.bin"), Buffer.concat(shards));
console.log(`nsfwjs: ${shards.length} shards, ${Buffer.concat(shards).length} bytes`);
