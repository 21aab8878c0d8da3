#!/usr/bin/python3
"""Check the live copy task (copy.html) in headless Chromium against the native program.

    tools/live/check-copy.py SITE TRANSFORMER SHOT_DIR [--quick] [--self-test]

Serves SITE (build/html, its live pages in live/) as tools/live/check.py does. Trains two
epochs of the book's small recipe in the page: the log the program wrote in the page must equal the native program's on the
reference path (TRANSFORMER_KERNELS=reference TRANSFORMER_MATMUL=reference, one thread) but
for its times, the first epoch's losses to 1e-5, and the curves drawn must hold the losses
of the epochs run. Then Stop must stop a run. Then (not with --quick) the whole recipe must
decode 1..10 exactly. No console error, no page wider than a phone, the static figure
without JavaScript and without WebAssembly. Saves build/live-copy.png and prints the times in Chromium and
natively. --self-test plants each fault of FAULTS in a copy of SITE and asserts that
the quick check fails on it, and passes on the clean copy.
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import importlib.util

_spec = importlib.util.spec_from_file_location(
    'live_check', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'check.py'))
live_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live_check)

REFERENCE = {'TRANSFORMER_KERNELS': 'reference', 'TRANSFORMER_MATMUL': 'reference',
             'OMP_NUM_THREADS': '1'}
TIMES = ('seconds', 'tokens_per_second')   # the log's columns that are times, not results

# Open copy.html?epochs=N, press Train (or Stop after the first epoch), wait for the end.
TRAIN_AND_READ = r'''
(async function (stop) {
  for (let i = 0; i < 200 && !document.getElementById('start'); i++) await new Promise(r => setTimeout(r, 50));
  document.getElementById('settings').requestSubmit();
  for (let i = 0; i < 6000 && !document.body.dataset.done; i++) {
    if (stop && document.querySelector('#chart polyline.series')) document.getElementById('stop').click();
    await new Promise(r => setTimeout(r, 50));
  }
  const points = () => [...document.querySelectorAll('#chart polyline.series')].map(l =>
    l.getAttribute('data-y').split(' ').map(Number));
  const curves = points();
  if (stop) await new Promise(r => setTimeout(r, 4000));   // a stopped run draws no more
  return JSON.stringify({done: document.body.dataset.done || '', ms: Number(document.body.dataset.ms),
    curves, later: points(), log: document.getElementById('decoded').dataset.log || '',
    decoded: document.getElementById('decoded').textContent,
    status: document.getElementById('status').textContent,
    width: document.documentElement.scrollWidth});
})(%s)
'''


def settings(site):
    text = open(os.path.join(site, 'live', 'copy-settings.js')).read()
    return json.loads(text[text.index('args: ') + 6:text.index(', nativeSeconds')])


def native_log(transformer, args):
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, 'log.csv')
        started = time.time()
        subprocess.run([transformer, 'copy'] + args + ['--log', log], capture_output=True,
                       env=dict(os.environ, **REFERENCE))
        return open(log).read(), (time.time() - started) * 1000


def rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def train(browser, base, epochs, stop=False):
    browser.call('Page.navigate', url=base + 'copy.html?epochs=%d' % epochs)
    time.sleep(0.5)
    return json.loads(browser.evaluate(TRAIN_AND_READ % json.dumps(stop)))


def check_epochs(browser, base, transformer, args, problems, times):
    got = train(browser, base, 2)
    want, ms = native_log(transformer, args + ['--epochs', '2'])
    page, here = rows(got['log']), rows(want)
    if len(page) != 2:
        problems.append('two epochs: the page ran %d (%s)' % (len(page), got['status']))
        return
    for key in ('train_loss', 'validation_loss'):
        if abs(float(page[0][key]) - float(here[0][key])) > 1e-5:
            problems.append('epoch 1 %s: %s in the page, %s natively' % (key, page[0][key], here[0][key]))
    strip = lambda rs: [{k: v for k, v in r.items() if k not in TIMES} for r in rs]
    if strip(page) != strip(here):
        problems.append('the page\'s log differs from the native reference\'s beyond its times')
    drawn = [[round(float(r[k]), 4) for r in page] for k in ('train_loss', 'validation_loss')]
    if got['curves'] != drawn:
        problems.append('the curves drew %s, not the losses %s' % (got['curves'], drawn))
    if got['width'] > live_check.WIDTH:
        problems.append('copy.html is %d px wide on a %d px phone' % (got['width'], live_check.WIDTH))
    times['two epochs'] = (got['ms'], ms)


def check_stop(browser, base, problems):
    got = train(browser, base, 20, stop=True)
    if got['done'] != 'stopped' or 'stopped' not in got['status'] or got['later'] != got['curves']:
        problems.append('Stop did not stop the run (%s)' % got['status'])


def check_whole(browser, base, transformer, args, problems, times):
    got = train(browser, base, 20)
    ones = '  source  1  2  3  4  5  6  7  8  9 10  decoded  1  2  3  4  5  6  7  8  9 10  exact'
    if got['done'] != '0' or ones not in got['decoded'].split('\n'):
        problems.append('the whole recipe in the page did not decode 1..10 exactly (%s)' % got['status'])
    times['the whole recipe'] = (got['ms'], native_log(transformer, args)[1])


def check(site, transformer, shots, quick):
    server, base = live_check.serve(site)
    browser = live_check.Browser()
    problems, times, args = [], {}, settings(site)
    try:
        check_epochs(browser, base, transformer, args, problems, times)
        if shots:
            live_check.screenshot(browser, 'body', os.path.join(shots, 'live-copy.png'))
        check_stop(browser, base, problems)
        if not quick:
            check_whole(browser, base, transformer, args, problems, times)
        problems += ['copy.html: ' + e for e in browser.console_errors()]
        live_check.check_static(browser, base, 'copy.html', 1, 'WebAssembly', problems)
    finally:
        browser.close()
        server.shutdown()
    return problems, times


FAULTS = [
    ('copy-settings.js', '"--heads", "2"', '"--heads", "4"'),            # not the book's recipe
    ('copy.js', "epochs.map(e => [e.epoch, e.validation])", "epochs.map(e => [e.epoch, e.train])"),
    ('copy.js', "        worker.terminate();\n        finish(false);", "        finish(false);"),  # Stop: no stop
    ('copy-worker.js', "if (fd !== 1) return;", "if (fd !== 2) return;"),  # no curve as it trains
    ('copy.js', "shown.innerHTML = fallback.textContent;", "0;"),
]


def self_test(site, transformer):
    live_check.plant_each(site, FAULTS, lambda copy: check(copy, transformer, None, True)[0], 'check-copy')


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    site, transformer, shots = (os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]),
                                    sys.argv[3])
    if '--self-test' in sys.argv[4:]:
        self_test(site, transformer)
        return
    problems, times = check(site, transformer, shots, '--quick' in sys.argv[4:])
    for p in problems:
        print('check-copy: ' + p)
    if problems:
        sys.exit(1)
    print('check-copy: two epochs in the page log what the native reference logs (first epoch'
          ' to 1e-5, every column but the times equal); Stop stops; the curves hold the losses')
    for what, (page, here) in times.items():
        print('check-copy: %s: %.0f ms in Chromium, %.0f ms natively (reference, one thread)'
              % (what, page, here))


if __name__ == '__main__':
    main()
