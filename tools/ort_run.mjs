#!/usr/bin/env node
// ONNX Runtime (CPU, from npm's onnxruntime-node) as the peer of octet's ONNX
// import and export: runs a model on inputs given as .npy files and writes its
// outputs as .npy files; optionally saves the graph ORT optimized (for checks
// of what ORT runs, e.g. that no float Conv is left of a QDQ model; the test
// helper python/tests/ort_peer.py reads it with python's onnx).
//
//   node tools/ort_run.mjs MODEL.onnx [--input [NAME=]FILE.npy]... [--out DIR]
//        [--optimized FILE.onnx] [--level disabled|basic|extended|all] [--threads N]
//        [--sleep-idle] [--time RUNS [--warmup N]]
//
// Inputs without a NAME take the model's inputs in order; an N x C x 1 x L
// image (octet's form of a 1-D value) feeds a model input of rank 3 as N x C
// x L. Each output K is
// written to DIR/output_K.npy. Prints one JSON line: ORT's version, the
// inputs read and the outputs written (name, file, dims, type); with --time,
// also "timing": the median and fastest of RUNS timed runs (milliseconds, ORT's
// session.run on the same inputs) after N untimed ones (default 3).
// --sleep-idle: ORT's intra-op threads sleep between their tasks instead of
// spinning (ORT's default), as OpenMP's do with OMP_WAIT_POLICY=passive, so
// that a benchmark times both runtimes waiting the same way.
// onnxruntime-node is looked for in $OCTET_ORT_DIR/node_modules, else in
// .ort/node_modules of the checkout (tools/setup.sh test installs it there).
// Exit status 1 with a message on any failure, 3 when ORT is not installed.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const ortDir = process.env.OCTET_ORT_DIR || path.resolve(here, "..", ".ort");

function die(message, status = 1) {
  process.stderr.write(`ort_run: ${message}\n`);
  process.exit(status);
}

// npy dtype <-> ORT tensor type and typed array.
const NPY_TYPES = {
  "<f4": ["float32", Float32Array],
  "<f8": ["float64", Float64Array],
  "<i8": ["int64", BigInt64Array],
  "<i4": ["int32", Int32Array],
  "<i2": ["int16", Int16Array],
  "|i1": ["int8", Int8Array],
  "|u1": ["uint8", Uint8Array],
  "|b1": ["bool", Uint8Array],
};
const ORT_TO_NPY = Object.fromEntries(Object.entries(NPY_TYPES).map(([descr, [type]]) => [type, descr]));

function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.length < 10 || bytes.toString("latin1", 0, 6) !== "\x93NUMPY") die(`${file} is not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = bytes.toString("latin1", start, start + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header)?.[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
  if (!descr || shape === undefined) die(`${file}: unreadable .npy header ${header.trim()}`);
  if (/'fortran_order':\s*True/.test(header)) die(`${file}: Fortran order is not supported`);
  if (!NPY_TYPES[descr]) die(`${file}: dtype ${descr} is not supported (${Object.keys(NPY_TYPES).join(", ")})`);
  const dims = shape.split(",").map((s) => s.trim()).filter((s) => s.length).map(Number);
  const [type, Array_] = NPY_TYPES[descr];
  const count = dims.reduce((a, b) => a * b, 1);
  const offset = start + headerLength;
  if (bytes.length - offset !== count * Array_.BYTES_PER_ELEMENT)
    die(`${file}: ${bytes.length - offset} data bytes for shape (${dims})`);
  // A copy: the typed array needs its own aligned buffer.
  const data = new Array_(bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + bytes.length));
  return { type: type === "bool" ? "bool" : type, data, dims };
}

function writeNpy(file, tensor) {
  const descr = ORT_TO_NPY[tensor.type];
  if (!descr) die(`output of type ${tensor.type} cannot be written as .npy`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(", ")})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  header += " ".repeat(63 - ((10 + header.length) % 64)) + "\n";  // total a multiple of 64
  const prefix = Buffer.alloc(10);
  prefix.write("\x93NUMPY", 0, "latin1");
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, "latin1"),
                                        Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

function parseArgs(argv) {
  const args = { model: null, inputs: [], out: ".", optimized: null, level: "all", threads: 0, time: 0, warmup: 3,
                 sleepIdle: false };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : die(`${a} needs a value`));
    if (a === "--input") args.inputs.push(value());
    else if (a === "--out") args.out = value();
    else if (a === "--optimized") args.optimized = value();
    else if (a === "--level") args.level = value();
    else if (a === "--threads") args.threads = Number(value());
    else if (a === "--time") args.time = Number(value());
    else if (a === "--warmup") args.warmup = Number(value());
    else if (a === "--sleep-idle") args.sleepIdle = true;
    else if (a === "-h" || a === "--help") {
      process.stdout.write(fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\nimport ")[0] + "\n");
      process.exit(0);
    } else if (a.startsWith("--")) die(`unknown option ${a}`);
    else if (!args.model) args.model = a;
    else die(`a second model ${a}`);
  }
  if (!args.model) die("no model given (--help)");
  for (const name of ["threads", "time", "warmup"])
    if (!Number.isInteger(args[name]) || args[name] < 0) die(`--${name} ${args[name]}: a whole number >= 0`);
  if (args.time > 0 && !args.inputs.length) die("--time needs --input");
  if (!["disabled", "basic", "extended", "all"].includes(args.level))
    die(`--level ${args.level}: disabled, basic, extended or all`);
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let ort;
  try {
    ort = createRequire(path.join(ortDir, "index.js"))("onnxruntime-node");
  } catch (e) {
    die(`onnxruntime-node is not installed in ${ortDir}/node_modules (tools/setup.sh test installs it; ` +
        `or: npm install --prefix ${ortDir} --ignore-scripts onnxruntime-node): ${e.message.split("\n")[0]}`, 3);
  }
  // Warnings off: saving an "all"-level graph warns that it holds this CPU's layouts.
  const options = { graphOptimizationLevel: args.level, executionProviders: ["cpu"], logSeverityLevel: 3 };
  if (args.optimized) options.optimizedModelFilePath = path.resolve(args.optimized);
  if (args.threads > 0) options.intraOpNumThreads = args.threads;
  if (args.sleepIdle) options.extra = { session: { intra_op: { allow_spinning: "0" } } };
  const session = await ort.InferenceSession.create(args.model, options);
  const feeds = {};
  const inputs = [];
  args.inputs.forEach((spec, k) => {
    const eq = spec.indexOf("=");
    const named = eq > 0 && !spec.slice(0, eq).includes("/");
    const name = named ? spec.slice(0, eq) : session.inputNames[k];
    const file = named ? spec.slice(eq + 1) : spec;
    if (name === undefined) die(`input ${k} (${file}): the model has only ${session.inputNames.length} inputs`);
    const t = readNpy(file);
    const declared = session.inputMetadata?.find((m) => m.name === name)?.shape;
    if (declared?.length === 3 && t.dims.length === 4 && t.dims[2] === 1) t.dims = [t.dims[0], t.dims[1], t.dims[3]];
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
    inputs.push({ name, file, dims: t.dims, type: t.type });
  });
  const outputs = [];
  if (args.inputs.length) {
    const results = await session.run(feeds);
    fs.mkdirSync(args.out, { recursive: true });
    session.outputNames.forEach((name, k) => {
      const file = path.join(args.out, `output_${k}.npy`);
      writeNpy(file, results[name]);
      outputs.push({ name, file, dims: results[name].dims, type: results[name].type });
    });
  }
  const summary = { onnxruntime: ort.env.versions.node ?? ort.env.versions.common, level: args.level,
                    sleep_idle: args.sleepIdle, inputs, outputs };
  if (args.time > 0) {
    for (let k = 0; k < args.warmup; ++k) await session.run(feeds);
    const ms = [];
    for (let k = 0; k < args.time; ++k) {
      const start = process.hrtime.bigint();
      await session.run(feeds);
      ms.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    ms.sort((a, b) => a - b);
    const mid = ms.length >> 1;
    summary.timing = { runs: ms.length, warmup: args.warmup, threads: args.threads,
                       median_ms: ms.length % 2 ? ms[mid] : (ms[mid - 1] + ms[mid]) / 2, fastest_ms: ms[0] };
  }
  if (args.optimized) summary.optimized = path.resolve(args.optimized);
  process.stdout.write(JSON.stringify(summary) + "\n");
}

main().catch((e) => die(e.message ?? String(e)));
