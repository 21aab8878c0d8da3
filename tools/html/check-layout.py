#!/usr/bin/python3
"""make check-html, the page frame: every page of the web edition in headless Chromium at
390, 768 and 1280 px wide, failing on
  - a page wider than the window (horizontal overflow of the page itself),
  - a phone (390 x 844) whose first screen of attention.html does not show the chapter's text,
  - a link or button of the frame (bar, side bar, chunk arrows, previous/next, back-to-top)
    smaller than 24 px,
  - text whose colour has a contrast below 4.5:1 against its background,
  - a search box that does not find a chunk name and an identifier,
  - a favicon or a font that does not load.
Saves a phone screenshot of attention.html as SHOTDIR/html-phone-attention.png.
Reuses check.py's Chromium driver (the Browser class).

Usage: check-layout.py SITE SHOTDIR
       check-layout.py --self-test SITE   (plants each fault in a copy of the site)
"""
import base64
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402  (check.py: the Chromium driver)

WIDTHS = (390, 768, 1280)
PHONE = (390, 844)
# What the search must find: a chunk name and an identifier, with the anchor each must link to.
SEARCHES = [('layers.h declarations', 'chunk', None), ('linear_forward', 'identifier', '#def-linear_forward')]

FRAME = 'header.bar a, nav.side a, .chunknav a, nav.pn a, a.totop, form.search input'
# The frame's targets smaller than 24 x 24 px (only those shown), and text below 4.5:1.
PAGE_JS = r'''
(function () {
  function rgb(s) { var m = s.match(/[\d.]+/g); return m ? m.map(Number) : [0, 0, 0, 0]; }
  function lum(c) {
    var v = c.slice(0, 3).map(function (x) { x /= 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
  }
  function background(e) {
    for (; e; e = e.parentElement) {
      var c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length < 4 || c[3] > 0.5) return c;
    }
    return [255, 255, 255];
  }
  var out = {width: document.documentElement.scrollWidth, small: [], contrast: []};
  var t = document.querySelectorAll(FRAME);
  for (var i = 0; i < t.length; i++) {
    var r = t[i].getBoundingClientRect();
    if (r.width === 0 || getComputedStyle(t[i]).visibility === 'hidden') continue;
    if (r.height < 24 || r.width < 24)
      out.small.push(t[i].outerHTML.slice(0, 80) + ' ' + r.width.toFixed(1) + 'x' + r.height.toFixed(1));
  }
  var all = document.querySelectorAll('main *, nav.side *, header.bar *');
  for (var i = 0; i < all.length && out.contrast.length < 10; i++) {
    var e = all[i];
    if (e.closest('svg, .katex, figure')) continue;
    var own = false;
    for (var n = e.firstChild; n; n = n.nextSibling)
      if (n.nodeType === 3 && n.nodeValue.trim()) { own = true; break; }
    if (!own || e.getClientRects().length === 0) continue;
    var fg = lum(rgb(getComputedStyle(e).color)), bg = lum(background(e));
    var ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    if (ratio < 4.5) out.contrast.push(e.tagName + '.' + e.className + ' "' +
                                       e.textContent.trim().slice(0, 30) + '" ' + ratio.toFixed(2));
  }
  return JSON.stringify(out);
})()
'''.replace('FRAME', json.dumps(FRAME))

# Fonts and the favicon: every @font-face the page's style sheets declare loads (a missing
# woff2 or Latin Modern file fails it), and the favicon's file loads as an image.
LOADS_JS = r'''
(async function () {
  var bad = [];
  var faces = [];
  document.fonts.forEach(function (f) { faces.push(f); });
  await Promise.all(faces.map(function (f) {
    return f.load().catch(function () { bad.push('font ' + f.family + ' ' + f.style + ' ' + f.weight); });
  }));
  var icons = document.querySelectorAll('link[rel~=icon]');
  if (!icons.length) bad.push('no favicon');
  for (var i = 0; i < icons.length; i++) {
    var ok = await new Promise(function (res) {
      var im = new Image(); im.onload = function () { res(true); }; im.onerror = function () { res(false); };
      im.src = icons[i].href; });
    if (!ok) bad.push('favicon ' + icons[i].getAttribute('href'));
  }
  return JSON.stringify(bad);
})()
'''

SEARCH_JS = r'''
(async function (q) {
  var box = document.getElementById('search-q');
  if (!box) return JSON.stringify([]);
  box.focus(); box.value = q; box.dispatchEvent(new Event('input'));
  for (var i = 0; i < 100 && !document.querySelector('#search-results a'); i++)
    await new Promise(function (r) { setTimeout(r, 50); });
  var a = document.querySelectorAll('#search-results a');
  var out = [];
  for (var i = 0; i < a.length; i++) out.push([a[i].textContent, a[i].getAttribute('href')]);
  return JSON.stringify(out);
})(QUERY)
'''


def set_size(b, w, h):
    b.call('Emulation.setDeviceMetricsOverride', width=w, height=h, deviceScaleFactor=1, mobile=w < 800)


def load(b, site, page):
    b.call('Page.navigate', url='file://' + os.path.join(site, page))
    b.wait_event('Page.loadEventFired')
    b.evaluate("document.fonts.ready.then(function () { return 1; })")


def check_site(site, shots=None):
    pages = sorted(os.path.basename(p) for p in glob.glob(os.path.join(site, '*.html')))
    failures = []
    b = check.Browser()
    try:
        for w in WIDTHS:
            set_size(b, w, PHONE[1] if w == PHONE[0] else 900)
            for page in pages:
                load(b, site, page)
                r = json.loads(b.evaluate(PAGE_JS))
                if r['width'] > w:
                    failures.append('%s at %d px: page %d px wide' % (page, w, r['width']))
                for s in r['small'][:5]:
                    failures.append('%s at %d px: tap target below 24 px: %s' % (page, w, s))
                if w == 1280:
                    for s in r['contrast']:
                        failures.append('%s: contrast below 4.5:1: %s' % (page, s))
                    for s in json.loads(b.evaluate(LOADS_JS)):
                        failures.append('%s: does not load: %s' % (page, s))
        failures += phone_first(b, site, shots)
        failures += search(b, site)
    finally:
        b.close()
    return failures, len(pages)


def phone_first(b, site, shots):
    set_size(b, *PHONE)
    load(b, site, 'attention.html')
    top = b.evaluate("(function(){var p=document.querySelector('main > p');"
                     "return p ? p.getBoundingClientRect().top : 1e9;})()")
    if shots:
        time.sleep(0.3)
        shot = b.call('Page.captureScreenshot', format='png')
        os.makedirs(shots, exist_ok=True)
        with open(os.path.join(shots, 'html-phone-attention.png'), 'wb') as fh:
            fh.write(base64.b64decode(shot['data']))
    if top >= PHONE[1]:
        return ['attention.html on a phone: the text starts at y = %d, below the first screen' % top]
    return []


def search(b, site):
    set_size(b, 1280, 900)
    out = []
    for q, kind, anchor in SEARCHES:
        load(b, site, 'attention.html')
        hits = json.loads(b.evaluate(SEARCH_JS.replace('QUERY', json.dumps(q))))
        ok = [h for h in hits if q in h[0] and h[0].endswith(kind)
              and (anchor is None or h[1].endswith(anchor))]
        if not ok:
            out.append('search for the %s "%s" finds no link to it (%d results)' % (kind, q, len(hits)))
    return out


# Each plant: (what, function planting it in the copy of the site).
def css(rule):
    def plant(site):
        with open(os.path.join(site, 'style.css'), 'a') as fh:
            fh.write('\n' + rule + '\n')
    return plant


def remove(path):
    return lambda site: os.remove(os.path.join(site, path))


def empty_index(site):
    with open(os.path.join(site, 'search-index.js'), 'w') as fh:
        fh.write('window.SEARCH_INDEX=[];\n')


# (what, function planting it, words the failure it causes must hold)
PLANTS = [('a page wider than a phone', css('main { min-width: 600px; }'), 'px wide'),
          ('the contents above the text on a phone',
           css('@media (max-width: 900px) { nav.side { display: block; position: static; } }'),
           'below the first screen'),
          ('small chunk arrows', css('.chunknav a { min-width: 0; min-height: 0; line-height: 1; font-size: 9px; }'),
           'tap target'),
          ('pale string literals', css('.st { color: #aaa; }'), 'contrast'),
          ('a search that finds nothing', empty_index, 'search for'),
          ('no favicon', remove('favicon.svg'), 'favicon'),
          ('a missing KaTeX font', remove('katex/fonts/KaTeX_Main-Regular.woff2'), 'font KaTeX_Main')]
KEEP = ('attention.html', 'index.html', 'bleu-engine.html')   # the self-test's pages


def self_test(site):
    tmp = tempfile.mkdtemp(prefix='check-layout-')
    try:
        for what, plant, expect in [('the clean site', None, None)] + PLANTS:
            copy = os.path.join(tmp, 'site')
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(site, copy, ignore=shutil.ignore_patterns('*.pdf', '*.tar.gz'))
            for p in glob.glob(os.path.join(copy, '*.html')):
                if os.path.basename(p) not in KEEP:
                    os.remove(p)
            if plant:
                plant(copy)
            failures, _ = check_site(copy)
            caught = [f for f in failures if expect and expect in f]
            if (not plant and failures) or (plant and not caught):
                raise SystemExit('check-layout self-test: %s: %s' % (
                    what, 'not caught (%s)' % '; '.join(failures[:3]) if plant
                    else 'fails: ' + '; '.join(failures[:5])))
            print('check-layout self-test: %s: %s' % (what, caught[0] if caught else 'passes'))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('check-layout self-test: every plant caught')


def main():
    if sys.argv[1:2] == ['--self-test']:
        return self_test(os.path.abspath(sys.argv[2]))
    site, shots = os.path.abspath(sys.argv[1]), sys.argv[2]
    start = time.time()
    failures, n = check_site(site, shots)
    print('check-layout: %d pages at %s px, phone first, tap targets, contrast, search, fonts '
          '(%.0f s); %s/html-phone-attention.png' % (n, '/'.join(map(str, WIDTHS)),
                                                     time.time() - start, shots))
    if failures:
        for f in failures[:200]:
            print('check-layout: ' + f, file=sys.stderr)
        print('check-layout: %d failures' % len(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == '__main__':
    main()
