#!/usr/bin/python3
"""make check-html: open every page of the web edition in headless Chromium (Debian's
chromium, driven over the DevTools protocol with python3-websocket) and fail on a console
error, an image that does not load, an internal link or anchor that does not resolve, raw
TeX left in the text, a formula the build did not typeset (KaTeX, when the site is built),
or a page wider than the 1280 px window. Saves three screenshots under build/.

Usage: check.py SITE SHOTDIR
"""
import base64
import glob
import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import websocket

SITE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else None
SHOTS = sys.argv[2] if len(sys.argv) > 2 else None
WIDTH, HEIGHT = 1280, 900
# (page, element to scroll to, file): the big picture's architecture figure, attention's
# first equations and chunks, the translator's Results.
SCREENSHOTS = [('intro.html', 'fig:architecture', 'html-big-picture.png'),
               ('attention.html', 'sec-1', 'html-attention.png'),
               ('translate.html', 'sec:translate-results', 'html-results.png')]

LOAD_IMAGES_JS = r'''
Promise.all(Array.from(document.images, function (i) {
  i.loading = 'eager';
  return i.decode().catch(function () { return 0; });
})).then(function () { return 1; })
'''

CHECK_JS = r'''
(function () {
  var out = {brokenImages: [], rawTex: [], untypeset: 0, mathErrors: [], equations: 0,
             links: [], ids: [], images: 0, width: document.documentElement.scrollWidth};
  var imgs = document.images;
  out.images = imgs.length;
  for (var i = 0; i < imgs.length; i++)
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) out.brokenImages.push(imgs[i].getAttribute('src'));
  var maths = document.querySelectorAll('span.formula');
  out.equations = maths.length;
  for (var i = 0; i < maths.length; i++) {
    var err = maths[i].querySelector('.katex-error');
    if (!maths[i].querySelector('.katex')) out.untypeset++;
    if (err) out.mathErrors.push(err.getAttribute('title') + ' in ' + err.textContent.slice(0, 80));
  }
  var anchors = document.querySelectorAll('a[href]');
  for (var i = 0; i < anchors.length; i++) out.links.push(anchors[i].getAttribute('href'));
  var withId = document.querySelectorAll('[id]');
  for (var i = 0; i < withId.length; i++) out.ids.push(withId[i].id);
  var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: function (n) {
      for (var e = n.parentElement; e; e = e.parentElement) {
        var t = e.tagName;
        if (t === 'PRE' || t === 'CODE' || t === 'SCRIPT' || t === 'STYLE' ||
            e.classList.contains('katex')) return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    }});
  var re = /\$|\\(ref|eqref|cite|label|begin|end|emph|texttt|textbf|mathrm|frac)\b|\[\[|\]\]/;
  for (var n = walker.nextNode(); n; n = walker.nextNode()) {
    var m = re.exec(n.nodeValue);
    if (m) out.rawTex.push(n.nodeValue.slice(Math.max(0, m.index - 40), m.index + 40));
  }
  return JSON.stringify(out);
})()
'''


class Browser:
    def __init__(self):
        self.profile = tempfile.mkdtemp(prefix='check-html-')
        self.proc = subprocess.Popen(
            ['chromium', '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
             '--disable-extensions', '--remote-debugging-port=0', '--allow-file-access-from-files',
             '--user-data-dir=' + self.profile, '--window-size=%d,%d' % (WIDTH, HEIGHT),
             'about:blank'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, 'DevToolsActivePort')
        for _ in range(600):   # a first start on a fresh machine can be slow
            if os.path.exists(port_file) and os.path.getsize(port_file) > 0:
                break
            time.sleep(0.1)
        else:
            raise SystemExit('check-html: chromium did not start')
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

    def wait_event(self, name, timeout=60):
        end = time.time() + timeout
        while time.time() < end:
            for n, e in enumerate(self.events):
                if e.get('method') == name:
                    del self.events[n]
                    return e
            self.ws.settimeout(max(0.1, end - time.time()))
            try:
                self.events.append(json.loads(self.ws.recv()))
            except websocket.WebSocketTimeoutException:
                break
        raise RuntimeError('no %s within %d s' % (name, timeout))

    def open(self, page):
        """Load a page of the site (its math is typeset already: no script to wait for)."""
        self.call('Page.navigate', url='file://' + os.path.join(SITE, page))
        self.wait_event('Page.loadEventFired')
        return True

    def evaluate(self, expr):
        r = self.call('Runtime.evaluate', expression=expr, returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in r:
            raise RuntimeError('evaluate: %s' % r['exceptionDetails'])
        return r['result'].get('value')

    def console_errors(self):
        errs = []
        keep = []
        for e in self.events:
            m = e.get('method')
            p = e.get('params', {})
            if m == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'assert'):
                errs.append('console.error: ' + ' '.join(str(a.get('value', a.get('description', ''))) for a in p.get('args', [])))
            elif m == 'Runtime.exceptionThrown':
                errs.append('exception: ' + p['exceptionDetails'].get('exception', {}).get('description', p['exceptionDetails'].get('text', '')))
            elif m == 'Log.entryAdded' and p['entry'].get('level') == 'error':
                errs.append('%s: %s %s' % (p['entry'].get('source'), p['entry'].get('text'), p['entry'].get('url', '')))
            else:
                keep.append(e)
        self.events = []
        return errs

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


class PageLinks(html.parser.HTMLParser):
    """The ids, links and images of a page read as text, not run: the live edition's pages
    (live/*.html), which fetch their program over http and are run by make check-live."""
    def __init__(self):
        super().__init__()
        self.ids, self.links, self.images = set(), [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if 'id' in a:
            self.ids.add(a['id'])
        if tag == 'a' and 'href' in a:
            self.links.append(a['href'])
        if tag == 'img' and 'src' in a:
            self.images.append(a['src'])


def main():
    pages = sorted(os.path.basename(p) for p in glob.glob(os.path.join(SITE, '*.html')))
    b = Browser()
    failures = []
    ids = {}
    links = {}
    totals = {'pages': 0, 'links': 0, 'images': 0, 'equations': 0}
    start = time.time()
    try:
        for page in pages:
            b.events = []
            b.open(page)
            b.evaluate(LOAD_IMAGES_JS)   # the figures are loading="lazy": load them all first
            r = json.loads(b.evaluate(CHECK_JS))
            for e in b.console_errors():
                failures.append('%s: %s' % (page, e))
            for src in r['brokenImages']:
                failures.append('%s: image does not load: %s' % (page, src))
            for t in r['rawTex'][:10]:
                failures.append('%s: raw TeX in the text: ...%s...' % (page, t.replace('\n', ' ')))
            if r['untypeset']:
                failures.append('%s: %d equations not typeset' % (page, r['untypeset']))
            for m in r['mathErrors'][:10]:
                failures.append('%s: KaTeX: %s' % (page, m))
            if r['width'] > WIDTH:
                failures.append('%s: page %d px wide, wider than the %d px window' % (page, r['width'], WIDTH))
            ids[page] = set(r['ids'])
            links[page] = r['links']
            totals['pages'] += 1
            totals['links'] += len(r['links'])
            totals['images'] += r['images']
            totals['equations'] += r['equations']
        for page, anchor, name in SCREENSHOTS:
            b.open(page)
            b.evaluate("document.fonts.ready.then(function () { return 1; })")
            for _ in range(2):
                b.evaluate("(function(){var e=document.getElementById(%s); if (e) e.scrollIntoView(); "
                           "return 1;})()" % json.dumps(anchor))
                time.sleep(0.5)
            shot = b.call('Page.captureScreenshot', format='png')
            os.makedirs(SHOTS, exist_ok=True)
            with open(os.path.join(SHOTS, name), 'wb') as fh:
                fh.write(base64.b64decode(shot['data']))
    finally:
        b.close()
    # the live edition's pages, read (make check-live runs them): their links back to the
    # chapters and their static figures are checked here with every other link
    for path in sorted(glob.glob(os.path.join(SITE, 'live', '*.html'))):
        page = 'live/' + os.path.basename(path)
        parsed = PageLinks()
        parsed.feed(open(path, encoding='utf-8').read())
        ids[page], links[page] = parsed.ids, parsed.links
        for src in parsed.images:
            if not os.path.isfile(os.path.join(SITE, 'live', src)):
                failures.append('%s: image does not load: %s' % (page, src))
        totals['pages'] += 1
        totals['links'] += len(parsed.links)
    # internal links: the page exists and holds the anchor (a path is relative to its page's
    # folder)
    for page, hrefs in links.items():
        for h in hrefs:
            u = urllib.parse.urlparse(h)
            if u.scheme in ('http', 'https', 'mailto'):
                continue
            target = os.path.normpath(os.path.join(os.path.dirname(page), u.path)) if u.path else page
            frag = urllib.parse.unquote(u.fragment)
            if target not in ids and not frag and os.path.isfile(os.path.join(SITE, target)):
                continue   # a file of the site, not a page: a figure's SVG, the PDF, the sources
            if target not in ids:
                failures.append('%s: link to a missing page: %s' % (page, h))
            elif frag and frag not in ids[target]:
                failures.append('%s: link to a missing anchor: %s' % (page, h))
    print('check-html: %d pages, %d links, %d images, %d equations checked in headless Chromium '
          '(%.0f s); screenshots in %s/' % (totals['pages'], totals['links'], totals['images'],
                                           totals['equations'], time.time() - start, SHOTS))
    if failures:
        for f in failures[:200]:
            print('check-html: ' + f, file=sys.stderr)
        print('check-html: %d failures' % len(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
