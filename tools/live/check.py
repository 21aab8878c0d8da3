#!/usr/bin/python3
"""Check the live edition's learning-rate page in headless Chromium.

    tools/live/check.py LIVE_DIR TRANSFORMER SHOT.png [--self-test]

Serves LIVE_DIR (build/live) over http on a free port (a page fetches its wasm), opens
lr.html, sets the warm-up to 2000, reads back the data the page computed and the numbers the
chart drew, and compares both with the native `TRANSFORMER figure-data lr` for the same
settings, byte for byte; the chart's peak must be at step 2000, and the console must stay
free of errors. Saves a screenshot to SHOT.png. --self-test copies LIVE_DIR to a temporary
directory, plants each fault in turn, asserts that the check fails on it, and that it passes
on the clean copy. The DevTools driver is the minimal part of tools/html/check.py's.
"""
import base64
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import websocket

WIDTH, HEIGHT = 900, 700
WARMUP = 2000


class Browser:
    """Headless Chromium over the DevTools protocol (as tools/html/check.py drives it)."""

    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix='check-live-')
        self.proc = subprocess.Popen(
            ['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
             '--disable-extensions', '--remote-debugging-port=0',
             '--user-data-dir=' + self.profile, '--window-size=%d,%d' % (WIDTH, HEIGHT),
             'about:blank'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, 'DevToolsActivePort')
        for _ in range(600):
            if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
                break
            time.sleep(0.1)
        else:
            raise SystemExit('check-live: chromium did not start')
        port = open(port_file).read().split()[0]
        for _ in range(50):
            try:
                targets = json.load(urllib.request.urlopen('http://127.0.0.1:%s/json/list' % port))
                page = [t for t in targets if t['type'] == 'page'][0]
                break
            except Exception:
                time.sleep(0.2)
        self.ws = websocket.create_connection(page['webSocketDebuggerUrl'], timeout=60)
        self.next_id = 0
        self.events = []
        for domain in ('Page', 'Runtime', 'Log'):
            self.call(domain + '.enable')
        self.call('Emulation.setDeviceMetricsOverride', width=WIDTH, height=HEIGHT,
                  deviceScaleFactor=1, mobile=False)

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({'id': my, 'method': method, 'params': params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get('id') == my:
                if 'error' in msg:
                    raise RuntimeError('%s: %s' % (method, msg['error']))
                return msg.get('result', {})
            self.events.append(msg)

    def evaluate(self, expr):
        r = self.call('Runtime.evaluate', expression=expr, returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in r:
            raise RuntimeError('evaluate: %s' % r['exceptionDetails'])
        return r['result'].get('value')

    def console_errors(self):
        errors = []
        for e in self.events:
            m, p = e.get('method'), e.get('params', {})
            if m == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert'):
                errors.append('console.error: ' + ' '.join(
                    str(a.get('value', a.get('description', ''))) for a in p.get('args', [])))
            elif m == 'Runtime.exceptionThrown':
                d = p['exceptionDetails']
                errors.append('exception: ' + d.get('exception', {}).get('description', d.get('text', '')))
            elif m == 'Log.entryAdded' and p['entry'].get('level') == 'error':
                errors.append('%s: %s %s' % (p['entry'].get('source'), p['entry'].get('text'),
                                             p['entry'].get('url', '')))
        self.events = []
        return errors

    def close(self):
        try:
            self.call('Browser.close')
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


def serve(directory):
    """An http server of directory on a free port of 127.0.0.1: (server, base url)."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    handler = functools.partial(Quiet, directory=directory)
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, 'http://127.0.0.1:%d/' % server.server_address[1]


# Set the warm-up as a reader would (the input event redraws), then read back what the page
# computed and what its chart drew.
MOVE_AND_READ = r'''
(async function () {
  for (let i = 0; i < 200 && !document.querySelector('#chart polyline'); i++)
    await new Promise(r => setTimeout(r, 50));
  const input = document.getElementById('warmup');
  input.value = '%d';
  input.dispatchEvent(new Event('input', {bubbles: true}));
  const line = document.querySelector('#chart polyline.series');
  return JSON.stringify({
    data: document.getElementById('figure-data').textContent,
    xs: line ? line.getAttribute('data-x').split(' ').map(Number) : [],
    ys: line ? line.getAttribute('data-y').split(' ').map(Number) : [],
    status: document.getElementById('status').textContent});
})()
''' % WARMUP


def native(transformer, page_args):
    return subprocess.run([transformer] + page_args, check=True, capture_output=True,
                          text=True).stdout


def check(live_dir, transformer, shot):
    """The problems found on live_dir's lr.html (an empty list: it passes)."""
    server, base = serve(live_dir)
    browser = Browser()
    problems = []
    try:
        browser.call('Page.navigate', url=base + 'lr.html')
        time.sleep(0.5)
        got = json.loads(browser.evaluate(MOVE_AND_READ))
        args = ['figure-data', 'lr', '--curve', 'd=512,f=1,w=%d' % WARMUP,
                '--steps', '20000', '--every', '20']
        expected = native(transformer, args)
        if got['data'] != expected:
            problems.append('the page computed other data than `transformer %s` (%s)'
                            % (' '.join(args), got['status']))
        rows = [list(map(float, l.split())) for l in expected.splitlines()
                if l and not l.startswith('#')]
        if got['xs'] != [r[0] for r in rows] or got['ys'] != [r[1] for r in rows]:
            problems.append('the chart drew other points than the native data')
        if got['ys']:
            peak = got['xs'][got['ys'].index(max(got['ys']))]
            if peak != WARMUP:
                problems.append('the chart peaks at step %g, not %d' % (peak, WARMUP))
        problems += browser.console_errors()
        if shot:
            png = browser.call('Page.captureScreenshot', format='png')['data']
            with open(shot, 'wb') as f:
                f.write(base64.b64decode(png))
    finally:
        browser.close()
        server.shutdown()
    return problems


# Each fault: (file, text, replacement) planted in a copy of the live directory.
FAULTS = [
    ('lr.html', "f=${value('factor')},w=${value('warmup')}", "f=${value('factor')},w=4000"),
    ('lr.html', ".map(l => l.split(' ').map(Number));", ".map(l => l.split(' ').map(Number)).slice(1);"),
    ('plot.js', "'data-y': s.points.map(p => p[1]).join(' '),", "'data-y': s.points.map(p => p[1] * 1.0001).join(' '),"),
    ('wasi.js', "if (fd === 1) this.stdout += text;", "if (fd === 1) this.stdout += text.replace('e-0', 'E-0');"),
    ('lr.html', "redraw();\n}).catch", "redraw(); console.error('planted');\n}).catch"),
]


def self_test(live_dir, transformer):
    with tempfile.TemporaryDirectory() as tmp:
        for name, text, replacement in FAULTS:
            copy = os.path.join(tmp, 'site')
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(live_dir, copy)
            path = os.path.join(copy, name)
            source = open(path).read()
            if text not in source:
                raise SystemExit('self-test: cannot plant the fault in %s: %r' % (name, text))
            open(path, 'w').write(source.replace(text, replacement, 1))
            if not check(copy, transformer, None):
                raise SystemExit('self-test: fault not caught: %s: %r' % (name, replacement))
        if check(live_dir, transformer, None):
            raise SystemExit('self-test: the clean page fails')
    print('check-live self-test: ok (%d faults caught)' % len(FAULTS))


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    live_dir, transformer, shot = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    if '--self-test' in sys.argv[4:]:
        self_test(live_dir, transformer)
        return
    problems = check(live_dir, transformer, shot)
    for p in problems:
        print('check-live: ' + p)
    if problems:
        sys.exit(1)
    print('check-live: lr.html computes and draws `transformer figure-data lr` with warm-up %d, '
          'peak at step %d; screenshot %s' % (WARMUP, WARMUP, shot))


if __name__ == '__main__':
    main()
