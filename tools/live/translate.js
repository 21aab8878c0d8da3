// translate.js -- the live translator (translate.html): the shipped model fetched once, with
// a progress bar, into the read-only file system of tools/live/wasi.js; each translation is
// one run of the program, `transformer translate --model /model.safetensors --beam K` with
// the reader's lines as its standard input, and the maps one run of `transformer attention
// --head all`, each head's matrix drawn by plot.js as a heat map. The page can be read and
// typed in while the model loads; the button waits for it.
'use strict';
(function () {
    const MODEL = 'multi30k-de-en.safetensors', MODEL_PATH = '/model.safetensors';
    const $ = id => document.getElementById(id);
    let program = null, files = null;   // the compiled module; {MODEL_PATH: the model's bytes}

    function megabytes(n) { return (n / 1e6).toFixed(1) + ' MB'; }

    // The model's bytes, read as they arrive so that the bar moves.
    async function fetchModel() {
        const started = performance.now();
        const response = await fetch(MODEL);
        if (!response.ok) throw new Error(`${MODEL}: ${response.status} ${response.statusText}`);
        const total = Number(response.headers.get('Content-Length')) || 0;
        const reader = response.body.getReader(), chunks = [];
        let received = 0;
        for (;;) {
            const {done, value} = await reader.read();
            if (done) break;
            chunks.push(value);
            received += value.length;
            if (total) $('model-progress').value = received / total;
            $('model-status').textContent = `loading the model: ${megabytes(received)}`
                                            + (total ? ` of ${megabytes(total)}` : '');
        }
        const bytes = new Uint8Array(received);
        let at = 0;
        for (const chunk of chunks) bytes.set(chunk, at), at += chunk.length;
        return {bytes, ms: performance.now() - started};
    }

    function run(args, stdin) {
        return LiveWasi.run(program, args, files, stdin);
    }

    // Translate the textarea's lines: one run of the program for all of them.
    function translate() {
        const text = $('german').value.replace(/\s+$/, '') + '\n';
        const beam = $('decoding').value;
        const lines = text.split('\n').filter(l => l.trim()).length;
        // a batch no larger than the lines: the program prepares its buffers for a whole batch
        const batch = String(Math.min(Math.max(lines, 1), 32));
        const result = run(['translate', '--model', MODEL_PATH, '--beam', beam, '--batch', batch], text);
        $('english').textContent = result.stdout;
        const each = lines ? result.ms / lines : 0;
        $('time').textContent = (result.status === 0 ? '' : result.stderr.trim() + ' ')
            + `${lines} line${lines === 1 ? '' : 's'} in ${result.ms.toFixed(0)} ms`
            + ` (${each.toFixed(0)} ms a sentence, the model read from memory each time),`
            + ` ${beam === '1' ? 'greedy' : 'beam search of ' + beam}`;
        if (result.status === 0 && result.stderr) $('time').textContent += '; ' + result.stderr.trim();
        Object.assign($('time').dataset, {ms: result.ms.toFixed(1), lines: String(lines)});
        drawMaps();
        return result;
    }

    // The blocks of `attention --head all`: [{title, columns, rows, values}] per head.
    function parseMaps(stdout) {
        return stdout.split('\n\n\n').filter(b => b.trim()).map(block => {
            const lines = block.split('\n').filter(l => l);
            const title = lines[0].replace(/^# /, '');
            const columns = lines[1].split(' ').slice(1);
            const rows = [], values = [];
            for (const line of lines.slice(2)) {
                const words = line.split(' ');
                rows.push(words[0]);
                values.push(words.slice(1).map(Number));
            }
            return {title, columns, rows, values};
        });
    }

    // The layer menu holds 0 .. the last layer, which the first map's title names.
    function offerLayers(title) {
        const last = Number((/layer (\d+)/.exec(title) || [])[1]);
        const menu = $('layer');
        if (menu.options.length || !(last >= 0)) return;
        for (let l = 0; l <= last; l++) menu.add(new Option(String(l), String(l), false, l === last));
    }

    function drawMaps() {
        const line = $('german').value.split('\n').find(l => l.trim());
        const box = $('maps');
        box.textContent = '';
        if (!line) return;
        const args = ['attention', '--model', MODEL_PATH, '--kind', $('kind').value, '--head', 'all'];
        if ($('layer').value !== '') args.push('--layer', $('layer').value);
        const result = run(args, line + '\n');
        if (result.status !== 0) {
            $('map-time').textContent = result.stderr.trim();
            return;
        }
        const maps = parseMaps(result.stdout);
        offerLayers(maps[0].title);
        maps.forEach((map, head) => {
            const figure = document.createElement('figure');
            const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
            svg.setAttribute('class', 'map');
            svg.setAttribute('data-head', String(head));
            svg.setAttribute('role', 'img');
            svg.setAttribute('aria-label', map.title);
            figure.appendChild(svg);
            const caption = document.createElement('figcaption');
            caption.textContent = `head ${head}`;
            figure.appendChild(caption);
            box.appendChild(figure);
            LivePlot.heatmap(svg, {values: map.values, rowLabels: map.rows, columnLabels: map.columns,
                                   xLabel: 'key', yLabel: 'query', width: 360});
        });
        $('map-time').textContent = `${maps.length} heads of ${maps[0].title.replace(/, head.*/, '')}`
            + ` in ${result.ms.toFixed(0)} ms`;
        $('map-time').dataset.ms = result.ms.toFixed(1);
    }

    $('settings').addEventListener('submit', event => {
        event.preventDefault();
        if (program && files) translate();
    });
    $('map-settings').addEventListener('change', () => { if (program && files) drawMaps(); });

    // The program and the model load together; the page is usable meanwhile.
    const loaded = Promise.resolve()   // a browser without WebAssembly rejects, not throws
        .then(() => Promise.all([WebAssembly.compileStreaming(fetch('transformer.wasm')),
                                 fetchModel()]))
        .then(([module, model]) => {
            program = module;
            files = {[MODEL_PATH]: model.bytes};
            $('model-progress').value = 1;
            $('model-status').textContent = `the model (${megabytes(model.bytes.length)}) loaded`
                                            + ` in ${(model.ms / 1000).toFixed(1)} s`;
            $('translate').disabled = false;
            // the model's fetch, and the page's start to the program and model ready
            return {modelMs: model.ms, modelBytes: model.bytes.length, readyMs: performance.now()};
        });
    // Without the program, the page shows what its noscript holds: the book's static maps.
    loaded.then(() => translate()).catch(e => {
        $('model-status').textContent = 'could not load: ' + e.message
            + '; the static figure of the web edition is shown instead.';
        const fallback = document.querySelector('noscript'), shown = document.createElement('div');
        shown.className = 'static';
        shown.innerHTML = fallback.textContent;
        fallback.after(shown);
    });
    // For tools/live/check-translate.py: resolves when the first translation is shown.
    globalThis.LiveTranslator = {loaded};
})();
