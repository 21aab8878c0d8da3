#!/usr/bin/python3
"""Check the live edition's pages in headless Chromium against the native program.

    tools/live/check.py SITE TRANSFORMER SHOT_DIR [--self-test]

Serves the web edition SITE (build/html) over http on a free port (a page fetches its wasm),
whose live pages are in SITE/live/ (make html puts them there). On lr.html
it sets the warm-up to 2000; on figures.html it moves one control of each figure (FIGURES).
Each time it reads back the data the page computed and the numbers its charts drew (the
polylines' data-x/data-y, the heat maps' rects' data-v by position) and compares them with
the native `TRANSFORMER figure-data KIND ...` for the same settings, byte for byte; the
learning-rate chart's peak must be at step 2000, no page may be wider than a 390 px phone,
and the console must stay free of errors; without JavaScript, and without WebAssembly,
figures.html must show each figure's static SVG of the web edition, loaded. Saves a
screenshot of each page or figure at 390 px to SHOT_DIR/live-NAME.png and prints the time
each figure's data took in Chromium. --self-test copies the live pages to a temporary site,
plants each fault in turn, asserts that the check fails on it, and that it passes on the
clean copy. The DevTools driver is tools/html/check.py's; the other live checks
(check-translate.py, check-copy.py) use this one's server, static check and self-test.
"""
import base64
import functools
import importlib.machinery
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time


WIDTH, HEIGHT = 390, 800   # a phone's width
TOOLS = os.path.dirname(os.path.abspath(__file__))   # tools/live: the pages' sources
WARMUP = 2000


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'html'))
import check as html_check  # noqa: E402  (the web edition's Chromium driver; its main() is not run)


class Browser(html_check.Browser):
    """The web edition's headless Chromium (tools/html/check.py), at a phone's size."""
    def __init__(self):
        super().__init__()
        self.call('Emulation.setDeviceMetricsOverride', width=WIDTH, height=HEIGHT,
                  deviceScaleFactor=1, mobile=True)


def serve(site):
    """An http server of the web edition site on a free port of 127.0.0.1: (server, the url
    of its live pages)."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    handler = functools.partial(Quiet, directory=site)
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, 'http://127.0.0.1:%d/live/' % server.server_address[1]


# Wait until the page has drawn, set one input as a reader would who types its value a
# character at a time (an input event each: the page must redraw once, after the last), wait
# for the redraw, then read back what the section computed and what its charts drew: per
# svg, the polylines' points and the heat map's values, rows by the rects' y, columns by x.
MOVE_AND_READ = r'''
(async function (scope, input, value) {
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  for (let i = 0; i < 200 && !document.querySelector('svg polyline, svg rect'); i++)
    await sleep(50);
  const root = scope ? document.getElementById(scope) : document;
  const counter = scope ? root : document.body, drawn = Number(counter.dataset.drawn);
  const control = root.querySelector(input);
  for (let n = 1; n <= value.length; n++) {
    control.value = value.slice(0, n);
    control.dispatchEvent(new Event('input', {bubbles: true}));
  }
  for (let i = 0; i < 200 && Number(counter.dataset.drawn) === drawn; i++)
    await sleep(50);
  await sleep(200);   // a redraw for each input would come now
  const charts = [...root.querySelectorAll('svg')].map(svg => {
    const lines = [...svg.querySelectorAll('polyline.series')].map(l =>
      [l.getAttribute('data-x').split(' ').map(Number), l.getAttribute('data-y').split(' ').map(Number)]);
    const rows = new Map();
    for (const r of svg.querySelectorAll('g.cells rect')) {
      const y = Number(r.getAttribute('y'));
      if (!rows.has(y)) rows.set(y, []);
      rows.get(y).push([Number(r.getAttribute('x')), Number(r.getAttribute('data-v'))]);
    }
    const cells = [...rows.keys()].sort((a, b) => a - b)
      .map(y => rows.get(y).sort((a, b) => a[0] - b[0]).map(c => c[1]));
    return {lines, cells};
  });
  return JSON.stringify({
    data: root.querySelector('.figure-data, #figure-data').textContent,
    charts,
    status: root.querySelector('.status, #status').textContent,
    ms: scope ? Number(root.dataset.ms) : null,
    redraws: Number(counter.dataset.drawn) - drawn,
    width: document.documentElement.scrollWidth});
})(%s, %s, %s)
'''

# The scaling projection starts at the step times the book measured, as its figure does.
BOOK_SCALING = subprocess.run([os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scaling-args')],
                              check=True, capture_output=True, text=True).stdout.split()

# Each live figure of figures.html: its section, the input moved and its new value, and the
# native arguments for the page's settings after the move (the others at their defaults).
FIGURES = [
    ('pe', 'd-model', '64',
     ['pe', '--positions', '100', '--d-model', '64', '--first', '4', '--count', '4']),
    ('mask-subsequent', 'size', '12', ['mask', 'subsequent', '--size', '12']),
    ('mask-batch', 'lengths', '7,4,3', ['mask', 'batch', '--lengths', '7,4,3', '--sentence', '1']),
    ('smoothing-distribution', 'epsilon', '0.2',
     ['smoothing', 'distribution', '--epsilon', '0.2', '--vocab', '5']),
    ('smoothing-confidence', 'vocab', '10',
     ['smoothing', 'confidence', '--epsilon', '0.1', '--vocab', '10']),
    ('temperature', 'dk', '16',
     ['temperature', '--dk', '16', '--keys', '10', '--tau', '1,8,16', '--rows', '2000', '--seed', '7']),
    ('scaling', 'latency-us', '100', ['scaling'] + BOOK_SCALING + ['--latency-us', '100']),
]


def native(transformer, args):
    return subprocess.run([transformer] + args, check=True, capture_output=True,
                          text=True).stdout


def table(text):
    """The data lines of figure-data's output, split into words."""
    return [l.split(' ') for l in text.splitlines() if l and not l.startswith('#')]


def numeric(text):
    return [[float(w) for w in row] for row in table(text)]


def columns(rows, ks):
    """Lines (xs, ys): the first column against each column k of ks."""
    return [[[r[0] for r in rows], [r[k] for r in rows]] for k in ks]


def expected_charts(kind, text):
    """What the page must draw from the native output: per svg, {lines, cells}."""
    if kind == 'lr':
        return [{'lines': columns(numeric(text), [1]), 'cells': []}]
    if kind == 'pe':
        rows = numeric(text)
        dims = range(1, len(rows[0]))
        return [{'lines': columns(rows, dims), 'cells': []},
                {'lines': [], 'cells': [[r[k] for r in rows] for k in dims]}]
    if kind == 'mask-subsequent':
        return [{'lines': [], 'cells': numeric(text)}]
    if kind in ('mask-batch', 'smoothing-distribution'):   # a header row, a label column
        return [{'lines': [], 'cells': [[float(w) for w in r[1:]] for r in table(text)[1:]]}]
    if kind == 'smoothing-confidence':
        return [{'lines': columns(numeric(text), [1]), 'cells': []}]
    if kind == 'temperature':   # blocks: the weights at each temperature, the entropy curve
        first, curve = [numeric(block) for block in text.split('\n\n\n')[:2]]
        return [{'lines': columns(first, range(2, len(first[0]))), 'cells': []},
                {'lines': columns(curve, [1]), 'cells': []}]
    if kind == 'scaling':   # step time and efficiency of four settings, alternating
        rows = numeric(text)
        return [{'lines': columns(rows, [1, 3, 5, 7]), 'cells': []},
                {'lines': columns(rows, [2, 4, 6, 8]), 'cells': []}]
    raise ValueError(kind)


def screenshot(browser, selector, path):
    """A screenshot of the element (the whole page for 'body') at the phone's width."""
    box = json.loads(browser.evaluate(
        "(() => { const e = document.querySelector(%s); e.scrollIntoView();"
        " const r = e.getBoundingClientRect();"
        " return JSON.stringify([r.left + scrollX, r.top + scrollY, r.width, r.height]); })()"
        % json.dumps(selector)))
    png = browser.call('Page.captureScreenshot', format='png', captureBeyondViewport=True,
                       clip={'x': 0, 'y': box[1], 'width': WIDTH, 'height': box[3], 'scale': 1})
    with open(path, 'wb') as f:
        f.write(base64.b64decode(png['data']))


def compare(name, got, args, expected, problems):
    """The page's data and drawing against the native output for args."""
    if got['data'] != expected:
        problems.append('%s: the page computed other data than `transformer %s` (%s)'
                        % (name, ' '.join(args), got['status']))
    elif got['charts'] != expected_charts(name, expected):
        problems.append('%s: the charts drew other numbers than the native data' % name)
    if got['width'] > WIDTH:
        problems.append('%s: the page is %d px wide on a %d px phone' % (name, got['width'], WIDTH))
    if got['redraws'] != 1:
        problems.append('%s: %d redraws for one burst of input events, not 1' % (name, got['redraws']))


def check_lr(browser, base, transformer, shots, problems):
    browser.call('Page.navigate', url=base + 'lr.html')
    time.sleep(0.5)
    got = json.loads(browser.evaluate(MOVE_AND_READ % ('null', '"#warmup"', json.dumps(str(WARMUP)))))
    args = ['figure-data', 'lr', '--curve', 'd=512,f=1,w=%d' % WARMUP,
            '--steps', '20000', '--every', '20']
    compare('lr', got, args, native(transformer, args), problems)
    lines = got['charts'][0]['lines'] if got['charts'] else []
    if lines and lines[0][1]:
        xs, ys = lines[0]
        peak = xs[ys.index(max(ys))]
        if peak != WARMUP:
            problems.append('lr: the chart peaks at step %g, not %d' % (peak, WARMUP))
    problems += ['lr.html: ' + e for e in browser.console_errors()]
    if shots:
        screenshot(browser, 'body', os.path.join(shots, 'live-lr.png'))
    return got['status']


def check_figures(browser, base, transformer, shots, problems):
    """Each figure of figures.html moved and compared: {section: ms its data took}."""
    browser.call('Page.navigate', url=base + 'figures.html')
    time.sleep(0.5)
    times = {}
    for section, name, value, args in FIGURES:
        got = json.loads(browser.evaluate(MOVE_AND_READ % (
            json.dumps(section), json.dumps('input[name="%s"]' % name), json.dumps(value))))
        compare(section, got, ['figure-data'] + args, native(transformer, ['figure-data'] + args),
                problems)
        times[section] = got['ms']
        if shots:
            screenshot(browser, '#' + section, os.path.join(shots, 'live-%s.png' % section))
    problems += ['figures.html: ' + e for e in browser.console_errors()]
    times['page ready, every figure drawn'] = float(browser.evaluate('document.body.dataset.readyMs'))
    return times


# The static figures a page shows: images of the web edition's fig/ that are visible and
# loaded (None while one is still loading), and the page's text.
STATIC_SHOWN = r'''
JSON.stringify({
  figures: [...document.querySelectorAll('img')].some(i => !i.complete) ? null :
    [...document.querySelectorAll('img')].filter(i => /^[.][.]\/fig\/fig-[0-9]+[.]svg$/.test(
      i.getAttribute('src')) && i.getClientRects().length && i.naturalWidth > 0).length,
  text: document.body.innerText})
'''


def static_shown(browser, url, without):
    """What the page at url shows without 'JavaScript' or without 'WebAssembly'."""
    if without == 'JavaScript':
        browser.call('Emulation.setScriptExecutionDisabled', value=True)
    else:
        script = browser.call('Page.addScriptToEvaluateOnNewDocument',
                              source='delete globalThis.WebAssembly;')
    browser.call('Page.navigate', url=url)
    time.sleep(0.5)
    for _ in range(50):
        got = json.loads(browser.evaluate(STATIC_SHOWN))
        if got['figures'] is not None:
            break
        time.sleep(0.1)
    if without == 'JavaScript':
        browser.call('Emulation.setScriptExecutionDisabled', value=False)
    else:
        browser.call('Page.removeScriptToEvaluateOnNewDocument', identifier=script['identifier'])
    return got


def check_static(browser, base, page, figures, note, problems):
    """The page without JavaScript, then without WebAssembly: the book's static figures
    (as many as figures), loaded, note in its text, and no console error."""
    browser.console_errors()
    for without in ('JavaScript', 'WebAssembly'):
        got = static_shown(browser, base + page, without)
        if got['figures'] != figures:
            problems.append('without %s %s shows %s static figures of the book, not %d'
                            % (without, page, got['figures'], figures))
        if note not in got['text']:
            problems.append('without %s %s does not say %r' % (without, page, note))
        problems += ['%s without %s: %s' % (page, without, e) for e in browser.console_errors()]


def check(site, transformer, shots):
    """The problems found on site's live pages (an empty list: they pass), and the times."""
    server, base = serve(site)
    browser = Browser()
    problems = []
    try:
        lr_status = check_lr(browser, base, transformer, shots, problems)
        times = check_figures(browser, base, transformer, shots, problems)
        check_static(browser, base, 'lr.html', 1, 'WebAssembly', problems)
        check_static(browser, base, 'figures.html', len(FIGURES), 'WebAssembly', problems)
    finally:
        browser.close()
        server.shutdown()
    return problems, lr_status, times


# Each fault: (file, text, replacement) planted in a copy of the live pages; at least one
# for each figure, one for the drawing module, the shim, the phone's width and the console.
FAULTS = [
    ('lr.html', "f=${value('factor')},w=${value('warmup')}", "f=${value('factor')},w=4000"),
    ('lr.html', ".map(l => l.split(' ').map(Number));", ".map(l => l.split(' ').map(Number)).slice(1);"),
    ('plot.js', "'data-y': s.points.map(p => p[1]).join(' '),", "'data-y': s.points.map(p => p[1] * 1.0001).join(' '),"),
    ('wasi.js', "if (fd === 1) this.stdout += text;", "if (fd === 1) this.stdout += text.replace('e-0', 'E-0');"),
    ('lr.html', "redraw();\n    }).catch", "redraw(); console.error('planted');\n    }).catch"),
    ('figures.js', "points: column(table, k + 1)}))});", "points: column(table, k)}))});"),
    ('figures.js', "values: rows(text).map(numbers)});", "values: rows(text).map(numbers).reverse()});"),
    ('figures.html', 'min="1" max="8" value="1"', 'min="1" max="8" value="2"'),
    ('figures.html', 'min="4" max="64" value="5"', 'min="4" max="64" value="6"'),
    ('figures.html', 'step="0.05" value="0.1"', 'step="0.05" value="0.15"'),
    ('figures.js', "chart(efficiency, 'efficiency', 2);", "chart(efficiency, 'efficiency', 1);"),
    ('figures.js', "points: column(first, t + 2)}))});", "points: column(first, t + 1)}))});"),
    ('plot.js', "y: (top + i * cellH).toFixed(2),", "y: (top + (rows - 1 - i) * cellH).toFixed(2),"),
    ('figures.html', 'svg { display: block; width: 100%;', 'svg { display: block; width: 600px;'),
    ('figures.js', "document.body.dataset.ready = 'yes';", "document.body.dataset.ready = 'yes'; console.error('planted');"),
    ('figures.html', '<img src="{{svg fig:mask-batch}}"', '<img hidden src="{{svg fig:mask-batch}}"'),
    ('figures.js', "note.insertAdjacentHTML('afterend', note.textContent);", "0;"),
    ('figures.html', '<script src="book-settings.js"></script>', ''),
    ('plot.js', "            if (pending) return;\n", ""),            # every input redrawn
    ('lr.html', "showStatic('This browser runs no WebAssembly');", "0;"),  # no static figure
]


def site_copy(site, copy):
    """A site at copy whose live/ is a copy of site's and whose other files are site's (linked)."""
    os.mkdir(copy)
    for name in os.listdir(site):
        if name != 'live':
            os.symlink(os.path.join(site, name), os.path.join(copy, name))
    shutil.copytree(os.path.join(site, 'live'), os.path.join(copy, 'live'))


def placed(site):
    """A function that fills a text's references to figures ({{svg LABEL}}) as tools/live/place
    filled the site's pages: a fault names a figure by its label, not by its number."""
    place = importlib.machinery.SourceFileLoader('place', os.path.join(TOOLS, 'place')).load_module()
    stats = os.path.join(os.path.dirname(site), 'html-fig', 'stats.json')
    return lambda text: place.fill_all(text, json.load(open(stats))['figure_files'], 'a fault')


def plant_each(site, faults, fails, what):
    """Plant each fault (file, text, replacement) in turn in a copy of site's live pages
    and assert that fails(copy) returns problems; then that the clean site gives none. The
    self-test of every live page's check."""
    fill = placed(site)
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, replacement in faults:
            text, replacement = fill(text), fill(replacement)
            copy = os.path.join(tmp, 'site')
            shutil.rmtree(copy, ignore_errors=True)
            site_copy(site, copy)
            path = os.path.join(copy, 'live', name)
            source = open(path).read()
            if source.count(text) != 1:
                raise SystemExit('self-test: cannot plant the fault in %s: %r' % (name, text))
            open(path, 'w').write(source.replace(text, replacement, 1))
            try:
                problems = fails(copy)
            except RuntimeError as e:   # the page never answered: caught as well
                problems = [str(e)]
            if not problems:
                raise SystemExit('self-test: fault not caught: %s: %r' % (name, replacement))
            print('self-test: %s: %r caught: %s' % (name, replacement, problems[0][:160]))
        if fails(site):
            raise SystemExit('self-test: the clean pages fail')
    print('%s self-test: ok (%d faults caught)' % (what, len(faults)))


def self_test(site, transformer):
    plant_each(site, FAULTS, lambda copy: check(copy, transformer, None)[0], 'check-live')


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    site, transformer, shots = (os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]),
                                sys.argv[3])
    if '--self-test' in sys.argv[4:]:
        self_test(site, transformer)
        return
    problems, lr_status, times = check(site, transformer, shots)
    for p in problems:
        print('check-live: ' + p)
    if problems:
        sys.exit(1)
    print('check-live: lr.html computes and draws `transformer figure-data lr` with warm-up %d, '
          'peak at step %d (%s)' % (WARMUP, WARMUP, lr_status))
    ready = times.pop('page ready, every figure drawn')
    for section, ms in times.items():
        print('check-live: figures.html#%s equals the native figure-data; its data took %.1f ms'
              % (section, ms))
    print('check-live: figures.html ready, the program compiled and every figure drawn, '
          '%.0f ms after it started' % ready)
    print('check-live: screenshots at %d px in %s/live-*.png' % (WIDTH, shots))


if __name__ == '__main__':
    main()
