// copy-worker.js -- the copy task trained in a Web Worker (copy.html): compiles the program,
// runs `transformer copy ARGS --log /log.csv` through tools/live/wasi.js, and posts each line
// of its standard output as it is written ({line}), then the end ({status, ms, log}, log the
// CSV the program wrote). The page stops a run by terminating the worker.
'use strict';
importScripts('wasi.js');

onmessage = async ({data: {args}}) => {
    const program = await WebAssembly.compileStreaming(fetch('transformer.wasm'));
    let pending = '';
    const onWrite = (fd, text) => {
        if (fd !== 1) return;
        const lines = (pending + text).split('\n');
        pending = lines.pop();
        for (const line of lines) postMessage({line});
    };
    const files = {};
    const wasi = new LiveWasi({args: ['transformer', 'copy', ...args, '--log', '/log.csv'],
                               files, onWrite});
    const started = performance.now();
    const instance = new WebAssembly.Instance(program, {wasi_snapshot_preview1: wasi.imports});
    const status = wasi.start(instance);
    if (pending) postMessage({line: pending});
    postMessage({status, ms: performance.now() - started, stderr: wasi.stderr,
                 log: files['/log.csv'] ? new TextDecoder().decode(files['/log.csv']) : ''});
};
