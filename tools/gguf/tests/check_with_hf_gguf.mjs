// An independent reader's view of `memra-gguf synth` output: Hugging Face's @huggingface/gguf
// (npm) parses the file, and every tensor's name, type, shape and offset, the data section's
// start and the model's metadata must be what memra-gguf says it wrote (inspect --json), and the
// file must end exactly at the last tensor's data (padded).
//
// usage: node check_with_hf_gguf.mjs MEMRA_GGUF_TOOL WORK_DIR NODE_MODULES_DIR
// Exit 0 pass, 1 mismatch, 77 skipped (the package is not installed there, or node is older than
// the package supports: nothing is downloaded).
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [tool, workDir, nodeModules] = process.argv.slice(2);
const entry = join(nodeModules ?? "", "@huggingface", "gguf", "dist", "index.mjs");
if (!existsSync(entry)) {
  console.log(`SKIPPED: @huggingface/gguf is not installed in ${nodeModules} (packaging/fetch-test-peers BUILD_DIR installs it)`);
  process.exit(77);
}
// The package declares "engines": {"node": ">=20"}, but the version packaging/fetch-test-peers
// pins (0.4.6) reads local files on Debian 12's own nodejs, 18.20, as it does on 20 (checked with
// this script: every field agrees). Older nodes are not tried.
const nodeMajor = Number(process.versions.node.split(".")[0]);
if (nodeMajor < 18) {
  console.log(`SKIPPED: @huggingface/gguf needs node >= 18, this is ${process.versions.node}`);
  process.exit(77);
}
const { gguf } = await import(pathToFileURL(entry).href);

const dir = mkdtempSync(join(workDir, "hf-gguf-"));
let failures = 0;
function expectEqual(what, got, want) {
  if (String(got) !== String(want)) {
    console.log(`MISMATCH ${what}: @huggingface/gguf says ${got}, memra-gguf says ${want}`);
    ++failures;
  }
}

// Mixed formats (one of each block size: 256, 64, 256-with-16-value-scales) at a non-default
// alignment, so that offsets and padding are exercised.
const cases = [
  ["tiny-q4K.gguf", ["--arch", "tiny"]],
  ["mixed-a64.gguf", ["--n-embd", "256", "--n-ff", "512", "--n-expert", "3", "--layers", "2", "--qtype-gate", "iq3_s",
                      "--qtype-up", "nvfp4", "--qtype-down", "q6_K", "--qtype", "q8_0", "--alignment", "64"]],
  ["plain.gguf", ["--n-embd", "64", "--n-ff", "32", "--n-expert", "2", "--layers", "1", "--qtype", "bf16",
                  "--qtype-down", "q4_0"]],
];
try {
  for (const [name, args] of cases) {
    const file = join(dir, name);
    execFileSync(tool, ["synth", file, ...args], { stdio: ["ignore", "ignore", "inherit"] });
    const ours = JSON.parse(execFileSync(tool, ["inspect", file, "--json"]).toString());
    const theirs = await gguf(file, { allowLocalFile: true });

    expectEqual(`${name} data offset`, theirs.tensorDataOffset, ours.data_offset);
    expectEqual(`${name} tensor count`, theirs.tensorInfos.length, ours.tensors.length);
    expectEqual(`${name} kv count`, Object.keys(theirs.metadata).length - 3, ours.kv_count);  // + version, tensor_count, kv_count
    for (const kv of ours.kvs) {
      if (typeof kv.value !== "object") expectEqual(`${name} kv ${kv.key}`, theirs.metadata[kv.key], kv.value);
    }
    let end = 0;
    ours.tensors.forEach((t, i) => {
      const h = theirs.tensorInfos[i];
      if (!h) return;
      expectEqual(`${name} tensor ${i} name`, h.name, t.name);
      expectEqual(`${t.name} type id`, h.dtype, t.type_id);
      expectEqual(`${t.name} shape`, h.shape.map(String).join(","), t.shape.join(","));
      expectEqual(`${t.name} offset`, h.offset, t.offset);
      end = Math.max(end, Number(h.offset) + t.bytes);
    });
    const alignment = Number(theirs.metadata["general.alignment"] ?? 32);
    const paddedEnd = Number(theirs.tensorDataOffset) + Math.ceil(end / alignment) * alignment;
    expectEqual(`${name} file size`, statSync(file).size, paddedEnd);
    console.log(`${name}: ${theirs.tensorInfos.length} tensors, data at ${theirs.tensorDataOffset}, checked`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failures) {
  console.log(`${failures} mismatches`);
  process.exit(1);
}
console.log("@huggingface/gguf agrees with memra-gguf");
