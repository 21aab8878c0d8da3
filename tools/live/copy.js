// copy.js -- the live copy task (copy.html): the book's small recipe (copy-settings.js,
// made by make live from the Makefile's COPY_LOSS_RUN and the recorded run
// figures/copy-loss.csv) trained in copy-worker.js; each epoch line of the program redraws
// the loss curves (plot.js), Stop terminates the worker, and the end shows the decoded
// sequences and the time beside the recorded native run's.
'use strict';
(function () {
    const $ = id => document.getElementById(id);
    const {args, nativeSeconds} = globalThis.LIVE_COPY;
    let worker = null, epochs = [];

    $('recipe').textContent = `transformer copy ${args.join(' ')}; the book's run of it took`
        + ` ${nativeSeconds} s natively`;

    function draw() {
        LivePlot.lines($('chart'), {
            series: [{label: 'training loss', points: epochs.map(e => [e.epoch, e.train])},
                     {label: 'validation loss', points: epochs.map(e => [e.epoch, e.validation])}],
            xLabel: 'epoch', yLabel: 'loss', width: 440, height: 300});
    }

    // "epoch 3  step 60  loss 2.3514  validation 2.1054 ...": a point of each curve.
    function line(text) {
        const m = /^epoch (\d+)\s+step \d+\s+loss ([\d.]+)\s+validation ([\d.]+)/.exec(text);
        if (m) {
            epochs.push({epoch: Number(m[1]), train: Number(m[2]), validation: Number(m[3])});
            $('status').textContent = text;
            draw();
        } else if (/^\s+source/.test(text) || /^evaluation/.test(text)) {
            $('decoded').textContent += text + '\n';
        }
    }

    function finish(running) {
        $('start').disabled = running;
        $('stop').disabled = !running;
    }

    function start() {
        epochs = [];
        $('decoded').textContent = '';
        $('status').textContent = 'training…';
        delete document.body.dataset.done;
        finish(true);
        worker = new Worker('copy-worker.js');
        worker.onmessage = ({data}) => {
            if ('line' in data) return line(data.line);
            finish(false);
            const seconds = data.ms / 1000;
            $('status').textContent = `${epochs.length} epochs in ${seconds.toFixed(1)} s in this`
                + ` page; the book's run took ${nativeSeconds} s natively`
                + (data.status === 0 ? '' : ` (status ${data.status}: ${data.stderr.trim()
                   || 'not every sequence decoded exactly'})`);
            Object.assign(document.body.dataset, {done: String(data.status), ms: data.ms.toFixed(0)});
            $('decoded').dataset.log = data.log;
            worker.terminate();
        };
        worker.postMessage({args: [...args, '--epochs', $('epochs').value]});
    }

    $('settings').addEventListener('submit', event => { event.preventDefault(); start(); });
    $('stop').addEventListener('click', () => {
        worker.terminate();
        finish(false);
        $('status').textContent = `stopped after ${epochs.length} epochs`;
        document.body.dataset.done = 'stopped';
    });
    const asked = new URLSearchParams(location.search).get('epochs');   // copy.html?epochs=2
    if (asked) $('epochs').value = asked;
    if (typeof WebAssembly === 'undefined') {   // the static figure of the web edition instead
        const fallback = document.querySelector('noscript'), shown = document.createElement('div');
        shown.innerHTML = fallback.textContent;
        fallback.after(shown);
        $('start').disabled = true;
        $('status').textContent = 'this browser has no WebAssembly: the static figure is shown';
    }
})();
