// run.js -- run a wasm32-wasi program in node through the project's shim (wasi.js):
//   node tools/live/run.js [--file /PATH=LOCAL]... PROGRAM.wasm [ARGUMENTS...] [< INPUT]
// (--file puts the local file LOCAL in the program's read-only file system as /PATH; the
// program reads run.js's standard input, whole, as its own)
// prints what the program wrote to its standard output and error, and exits with its status,
// so its output can be compared byte for byte with the native program's.
'use strict';
const fs = require('fs');
const path = require('path');
const {LiveWasi} = require('./wasi.js');

async function main() {
    let words = process.argv.slice(2);
    const files = {};
    while (words[0] === '--file' && words.length > 1) {
        const [virtual, local] = words[1].split('=');
        files[virtual] = new Uint8Array(fs.readFileSync(local));
        words = words.slice(2);
    }
    const [wasmPath, ...args] = words;
    if (!wasmPath) {
        process.stderr.write('usage: node tools/live/run.js [--file /PATH=LOCAL]... PROGRAM.wasm'
                             + ' [ARGUMENTS...] [< INPUT]\n');
        process.exit(2);
    }
    const stdin = process.stdin.isTTY ? '' : new Uint8Array(fs.readFileSync(0));
    const wasi = new LiveWasi({args: [path.basename(wasmPath, '.wasm'), ...args], files, stdin});
    const {instance} = await WebAssembly.instantiate(fs.readFileSync(wasmPath),
                                                     {wasi_snapshot_preview1: wasi.imports});
    const status = wasi.start(instance);
    process.stdout.write(wasi.stdout);
    process.stderr.write(wasi.stderr);
    process.exitCode = status;
}

main();
