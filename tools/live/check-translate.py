#!/usr/bin/python3
"""Check the live translator (translate.html) in headless Chromium against the native program.

    tools/live/check-translate.py SITE TRANSFORMER SHOT_DIR [--quick] [--self-test]

Serves SITE (build/html, its live pages in live/) as tools/live/check.py does, waits for
the model, types SENTENCE and asks for a greedy translation, then a beam search: each must equal the native
program's on its reference path (TRANSFORMER_KERNELS=reference TRANSFORMER_MATMUL=reference,
one thread: what the browser's build computes), and the heat maps drawn must hold the numbers
of the native `transformer attention --head all` for that sentence, head by head. Then the
first LINES lines of test2016 translated greedily in the page must equal the native
reference's in at least MIN_EQUAL lines (the differing ones are printed); --quick leaves
this out. No console error, no page wider than a phone; without JavaScript, and without
WebAssembly, the page shows the book's static maps, loaded. Saves build/live-translate.png and prints
the times: the model's loading, a sentence greedily and by beam in Chromium and natively.
--self-test plants each fault of FAULTS in a copy of SITE and asserts that the quick
check fails on it, and passes on the clean copy.
"""
import json
import os
import subprocess
import sys
import time

# tools/live/check.py (Browser, serve, screenshot), by its path: its own name is the web
# edition's driver's, which it imports as check.
import importlib.util  # noqa: E402
_spec = importlib.util.spec_from_file_location(
    'live_check', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'check.py'))
live_check = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live_check)

SENTENCE = 'Ein Hund läuft über eine Wiese.'
TEST = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'data', 'multi30k',
                    'test2016.de')
LINES, MIN_EQUAL = 100, 98
REFERENCE = {'TRANSFORMER_KERNELS': 'reference', 'TRANSFORMER_MATMUL': 'reference',
             'OMP_NUM_THREADS': '1'}

# Wait for the model and the first translation; then type text, choose the decoding, ask
# (the submit handler runs the program before it returns) and read back what is shown.
TRANSLATE_AND_READ = r'''
(async function (text, beam) {
  for (let i = 0; i < 200 && !globalThis.LiveTranslator; i++) await new Promise(r => setTimeout(r, 50));
  await LiveTranslator.loaded;
  for (let i = 0; i < 600 && !document.getElementById('time').dataset.ms; i++)
    await new Promise(r => setTimeout(r, 50));
  document.getElementById('german').value = text;
  document.getElementById('decoding').value = beam;
  document.getElementById('settings').requestSubmit();
  const maps = [...document.querySelectorAll('#maps svg.map')].map(svg => {
    const rows = new Map();
    for (const r of svg.querySelectorAll('g.cells rect')) {
      const y = Number(r.getAttribute('y'));
      if (!rows.has(y)) rows.set(y, []);
      rows.get(y).push([Number(r.getAttribute('x')), Number(r.getAttribute('data-v'))]);
    }
    return {title: svg.getAttribute('aria-label'),
            cells: [...rows.keys()].sort((a, b) => a - b)
                     .map(y => rows.get(y).sort((a, b) => a[0] - b[0]).map(c => c[1]))};
  });
  const time = document.getElementById('time');
  return JSON.stringify({english: document.getElementById('english').textContent, maps,
                         ms: Number(time.dataset.ms), status: time.textContent,
                         loadMs: (await LiveTranslator.loaded).modelMs,
                         width: document.documentElement.scrollWidth});
})(%s, %s)
'''


def native(transformer, args, text):
    """The native program's output and wall time (ms), on the reference path."""
    started = time.time()
    out = subprocess.run([transformer] + args, input=text, check=True, capture_output=True,
                         text=True, env=dict(os.environ, **REFERENCE)).stdout
    return out, (time.time() - started) * 1000


def native_maps(text):
    """`attention --head all`'s blocks: [{title, cells}] as the page must draw them."""
    maps = []
    for block in [b for b in text.split('\n\n\n') if b.strip()]:
        lines = [l for l in block.split('\n') if l]
        maps.append({'title': lines[0][2:],
                     'cells': [[float(w) for w in l.split(' ')[1:]] for l in lines[2:]]})
    return maps


def translate(browser, text, beam):
    return json.loads(browser.evaluate(TRANSLATE_AND_READ % (json.dumps(text), json.dumps(beam))))


def check_sentence(browser, transformer, problems, times):
    """The sentence greedily (with its maps) and by beam, against the native reference."""
    for beam in ('1', '4'):
        got = translate(browser, SENTENCE, beam)
        want, ms = native(transformer, ['translate', '--beam', beam, '--batch', '1'], SENTENCE + '\n')
        if got['english'] != want:
            problems.append('beam %s: the page translated %r as %r, the native program as %r (%s)'
                            % (beam, SENTENCE, got['english'], want, got['status']))
        times['sentence, beam %s' % beam] = (got['ms'], ms)
        if got['width'] > live_check.WIDTH:
            problems.append('the page is %d px wide on a %d px phone' % (got['width'], live_check.WIDTH))
    times['model loaded'] = (got['loadMs'], None)
    want = native_maps(native(transformer, ['attention', '--head', 'all'], SENTENCE + '\n')[0])
    if got['maps'] != want:
        problems.append('the page drew %d maps, not the %d of `transformer attention --head all`,'
                        ' or other numbers' % (len(got['maps']), len(want)))


def check_test_lines(browser, transformer, problems, times):
    """test2016's first LINES lines, greedily, in the page and natively: the lines that differ."""
    text = ''.join(open(TEST, encoding='utf-8').readlines()[:LINES])
    got = translate(browser, text, '1')
    want, ms = native(transformer, ['translate', '--beam', '1', '--batch', '32'], text)
    pairs = list(zip(got['english'].split('\n'), want.split('\n')))[:LINES]
    differ = [(n + 1, g, w) for n, (g, w) in enumerate(pairs) if g != w]
    equal = len(pairs) - len(differ)
    for n, g, w in differ:
        print('check-translate: test2016 line %d: page %r, native %r' % (n, g, w))
    if equal < MIN_EQUAL:
        problems.append('%d of test2016\'s first %d lines equal the native reference\'s, not %d'
                        % (equal, LINES, MIN_EQUAL))
    times['test2016, %d lines greedily' % LINES] = (got['ms'], ms)
    return equal


def check(site, transformer, shots, quick):
    """The problems found (an empty list: the page passes), the times, the equal lines."""
    server, base = live_check.serve(site)
    browser = live_check.Browser()
    problems, times, equal = [], {}, None
    try:
        browser.call('Page.navigate', url=base + 'translate.html')
        check_sentence(browser, transformer, problems, times)
        if shots:
            live_check.screenshot(browser, 'body', os.path.join(shots, 'live-translate.png'))
        if not quick:
            equal = check_test_lines(browser, transformer, problems, times)
        problems += ['translate.html: ' + e for e in browser.console_errors()]
        live_check.check_static(browser, base, 'translate.html', 1, 'WebAssembly', problems)
    finally:
        browser.close()
        server.shutdown()
    return problems, times, equal


# Each fault: (file, text, replacement) planted in a copy of the live pages.
FAULTS = [
    ('translate.js', "'--beam', beam, '--batch'", "'--beam', '2', '--batch'"),  # not the decoding asked
    ('translate.js', "values.push(words.slice(1).map(Number));",
     "values.push(words.slice(1).map(Number).reverse());"),               # maps drawn wrongly
    ('translate.js', "'--head', 'all'];", "'--head', 'mean'];"),          # one map, not each head's
    ('wasi.js', "const input = typeof stdin === 'string' ? this.encoder.encode(stdin) : stdin;",
     "const input = new Uint8Array(0);"),                                # no standard input
    ('translate.js', "$('translate').disabled = false;",
     "$('translate').disabled = false; console.error('planted');"),
    ('translate.html', 'minmax(18rem, 1fr)', 'minmax(40rem, 1fr)'),     # wider than a phone
    ('translate.html', '<img src="{{svg fig:attention-heads}}"', '<img hidden src="{{svg fig:attention-heads}}"'),
    ('translate.js', "shown.innerHTML = fallback.textContent;", "0;"),  # no static maps without wasm
    ('translate.js', "$('english').textContent = result.stdout;",
     "$('english').textContent = result.stdout.toLowerCase();"),        # not what the program said
]


def self_test(site, transformer):
    live_check.plant_each(site, FAULTS, lambda copy: check(copy, transformer, None, True)[0], 'check-translate')


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    site, transformer, shots = (os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]),
                                    sys.argv[3])
    if '--self-test' in sys.argv[4:]:
        self_test(site, transformer)
        return
    problems, times, equal = check(site, transformer, shots, '--quick' in sys.argv[4:])
    for p in problems:
        print('check-translate: ' + p)
    if problems:
        sys.exit(1)
    print('check-translate: %r greedily and by beam equals the native reference; each head\'s'
          ' map equals `transformer attention --head all`\'s' % SENTENCE)
    if equal is not None:
        print('check-translate: %d of test2016\'s first %d lines equal the native reference\'s'
              % (equal, LINES))
    for what, (page, here) in times.items():
        print('check-translate: %s: %.0f ms in Chromium%s' % (
            what, page, '' if here is None else ', %.0f ms natively (reference, one thread)' % here))


if __name__ == '__main__':
    main()
