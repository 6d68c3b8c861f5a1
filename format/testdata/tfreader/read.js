// Reads every .tfrecord file named on the command line with the npm tfrecord
// package (which checks both masked CRC32Cs of every record) and prints one
// JSON object per file: its records' features, bytes as UTF-8 text except
// image/encoded, given as its length and sha256.
const crypto = require('crypto');
const tfrecord = require('tfrecord');

async function readFile(path) {
  const reader = await tfrecord.createReader(path);
  const records = [];
  let example;
  while ((example = await reader.readExample())) {
    const out = {};
    for (const [key, f] of Object.entries(example.features.feature)) {
      if (f.bytesList) {
        out[key] = f.bytesList.value.map((v) => key === 'image/encoded'
          ? `${v.length}:${crypto.createHash('sha256').update(v).digest('hex')}`
          : Buffer.from(v).toString('utf8'));
      } else if (f.floatList) {
        out[key] = Array.from(f.floatList.value);
      } else if (f.int64List) {
        out[key] = f.int64List.value.map((v) => Number(v.toString()));
      } else {
        out[key] = null;
      }
    }
    records.push(out);
  }
  return { file: path, records };
}

(async () => {
  const files = [];
  for (const path of process.argv.slice(2)) files.push(await readFile(path));
  process.stdout.write(JSON.stringify(files));
})().catch((err) => {
  console.error(err.stack || String(err));
  process.exit(1);
});
