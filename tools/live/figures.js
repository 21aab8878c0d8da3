// figures.js -- the live figures page (figures.html): each section's form names a
// figure-data kind (data-kind) and its inputs the program's options; after each burst of
// inputs (LivePlot.coalesced) the program runs with them in WebAssembly, its output is
// kept in the section's pre.figure-data and drawn by plot.js. The page computes nothing
// itself.
'use strict';
(function () {
    const WIDTH = 440;   // the charts' viewBox: text stays legible on a 390 px phone
    let program = null;  // the compiled module, fetched once for every figure

    const run = args => LiveWasi.run(program, args);

    // The lines of data (comments dropped), split into words.
    const rows = text => text.split('\n').filter(l => l && !l.startsWith('#')).map(l => l.split(' '));
    const numbers = words => words.map(Number);
    // A column of numeric rows as the points (first column, column k).
    const column = (table, k) => table.map(r => [r[0], r[k]]);

    // A table with a header row and a label column: {rowLabels, columnLabels, values}.
    function labelled(text) {
        const [header, ...body] = rows(text);
        return {columnLabels: header.slice(1), rowLabels: body.map(r => r[0]),
                values: body.map(r => numbers(r.slice(1)))};
    }

    // How each kind is drawn into its section's svgs, from the program's output and the form.
    const DRAW = {
        'pe'(text, [lines, map], option) {
            const table = rows(text).map(numbers), first = Number(option('first'));
            const dims = table[0].length - 1;
            LivePlot.lines(lines, {width: WIDTH, height: 300, xLabel: 'position', yLabel: 'value',
                series: Array.from({length: dims}, (_, k) =>
                    ({label: `dimension ${first + k}`, points: column(table, k + 1)}))});
            LivePlot.heatmap(map, {width: WIDTH, xLabel: 'position', yLabel: 'dimension',
                rowLabels: Array.from({length: dims}, (_, k) => first + k),
                values: Array.from({length: dims}, (_, k) => table.map(r => r[k + 1]))});
        },
        'mask subsequent'(text, [map]) {
            LivePlot.heatmap(map, {width: WIDTH, xLabel: 'key', yLabel: 'query',
                                   values: rows(text).map(numbers)});
        },
        'mask batch'(text, [map]) {
            LivePlot.heatmap(map, {width: WIDTH, xLabel: 'key', yLabel: 'query', ...labelled(text)});
        },
        'smoothing distribution'(text, [map]) {
            LivePlot.heatmap(map, {width: WIDTH, xLabel: 'word', yLabel: 'target', ...labelled(text)});
        },
        'smoothing confidence'(text, [lines], option) {
            LivePlot.lines(lines, {width: WIDTH, height: 300, xLabel: 'x', yLabel: 'loss',
                series: [{label: `ε ${option('epsilon')}, V ${option('vocab')}`,
                          points: column(rows(text).map(numbers), 1)}]});
        },
        'temperature'(text, [weights, entropy], option) {
            // three blocks, two blank lines apart: the first query's weights (key, score, a
            // weight per temperature), the mean entropy against tau / sqrt(d_k), the marks
            const [first, curve] = text.split('\n\n\n').map(block => rows(block).map(numbers));
            const taus = option('tau').split(',');
            LivePlot.lines(weights, {width: WIDTH, height: 300, xLabel: 'key, by score',
                yLabel: 'weight', series: taus.map((tau, t) =>
                    ({label: `τ = ${tau}`, points: column(first, t + 2)}))});
            LivePlot.lines(entropy, {width: WIDTH, height: 300, xLog2: true,
                xLabel: 'τ / √d_k (log scale)', yLabel: 'mean entropy (nats)',
                series: [{label: `mean entropy of ${option('rows')} queries`, points: curve}],
                levels: [{label: `log K, the most for ${option('keys')} keys`,
                          y: Math.log(Number(option('keys')))}]});
        },
        'scaling'(text, [time, efficiency]) {
            const table = rows(text).map(numbers);
            const names = ['base, 10 Gbit/s', 'base, 100 Gbit/s', 'Multi30k, 10 Gbit/s', 'Multi30k, 100 Gbit/s'];
            const chart = (svg, yLabel, offset) => LivePlot.lines(svg, {
                width: WIDTH, height: 300, xLabel: 'processes P', yLabel,
                series: names.map((label, k) => ({label, points: column(table, 2 * k + offset)}))});
            chart(time, 'step time (s)', 1);
            chart(efficiency, 'efficiency', 2);
        },
    };

    // The section's arguments: figure-data, its kind, then --name value for every input.
    function sectionArguments(form) {
        const args = ['figure-data', ...form.dataset.kind.split(' ')];
        for (const input of form.querySelectorAll('input'))
            args.push('--' + input.name, input.value.trim());
        return args;
    }

    function redraw(section) {
        const form = section.querySelector('form'), status = section.querySelector('.status');
        const args = sectionArguments(form), result = run(args);
        if (result.status !== 0) {   // the program's own message: an option out of range
            status.textContent = result.stderr.trim();
            return;
        }
        section.querySelector('.figure-data').textContent = result.stdout;
        const option = name => form.elements[name].value.trim();
        DRAW[form.dataset.kind](result.stdout, [...section.querySelectorAll('svg.chart')], option);
        status.textContent = `transformer ${args.join(' ')}: computed in ${result.ms.toFixed(1)} ms`;
        section.dataset.ms = result.ms.toFixed(2);
        section.dataset.drawn = Number(section.dataset.drawn || 0) + 1;
    }

    // The book's measured settings (book-settings.js, made by the build), in place of the
    // forms' values, which are figure-data's defaults: {kind: '--name value ...'}.
    function bookSettings() {
        const settings = globalThis.LIVE_BOOK_SETTINGS || {};
        for (const [kind, options] of Object.entries(settings)) {
            const form = document.querySelector(`form[data-kind="${kind}"]`), words = options.split(' ');
            for (let i = 0; i + 1 < words.length; i += 2)
                form.elements[words[i].replace(/^--/, '')].value = words[i + 1];
        }
    }

    function start() {
        bookSettings();
        for (const section of document.querySelectorAll('section')) {
            const form = section.querySelector('form');
            form.addEventListener('input', LivePlot.coalesced(() => redraw(section)));
            redraw(section);
        }
        document.getElementById('loading').hidden = true;
        document.body.dataset.ready = 'yes';
        // from the page's start to every figure drawn, the program fetched and compiled
        document.body.dataset.readyMs = performance.now().toFixed(0);
    }

    // Without the program, each section shows what its noscript holds: the static figure.
    function showStatic(why) {
        loading.textContent = why + ': the static figures of the web edition are shown instead.';
        for (const note of document.querySelectorAll('section noscript'))
            note.insertAdjacentHTML('afterend', note.textContent);   // script on: its text is HTML
    }

    const loading = document.getElementById('loading');
    if (typeof WebAssembly !== 'object') {
        showStatic('This browser runs no WebAssembly');
        return;
    }
    WebAssembly.compileStreaming(fetch('transformer.wasm')).then(module => {
        program = module;
        start();
    }).catch(e => showStatic('Could not load the program (' + e + ')'));
})();
