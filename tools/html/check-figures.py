#!/usr/bin/python3
"""make check-html: the web edition's figures (tools/html/figures.sh, weave.py's
<figure class="fig">), read from the built files, no browser needed:
  - every <img> of every page has width and height (positive integers; for a figure, in the
    proportion of its SVG) and an alt text that says something (at least five words, not
    "Figure N.M");
  - every figure's <img> is lazy-loaded and inside a link to its own SVG (the full size);
  - every raster inside a figure's SVG (the heat maps, gnuplot `with image`) is marked
    image-rendering: pixelated, or the browser smooths its few cells into blobs;
  - every figure's SVG keeps its text as <text> and draws no glyph outlines, but for those
    figures.sh outlined on purpose (math a text font cannot draw; it marks the SVG).

Usage: check-figures.py SITE            check build/html (say)
       check-figures.py --screenshot SITE PNG   Fig. 4.2 (the padded batch's masks) in
                                         headless Chromium at 1280 px, to look at
       check-figures.py --self-test SITE copy SITE to a temporary directory, plant each fault
                                         in turn and assert the check fails on it (and passes
                                         on the clean copy)
"""
import glob
import html.parser
import os
import re
import shutil
import sys
import tempfile

MIN_ALT_WORDS = 5
MARK_ALL = '<!-- figures.sh: text outlined, math a text font cannot draw -->'
MARK_SOME = '<!-- figures.sh: some glyphs outlined, math a text font cannot draw -->'


class Images(html.parser.HTMLParser):
    """Each <img> of a page with its attributes and the href of the link it sits in."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links, self.images = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == 'a':
            self.links.append(a.get('href'))
        elif tag == 'img':
            self.images.append((a, self.links[-1] if self.links else None, self.getpos()[0]))

    def handle_endtag(self, tag):
        if tag == 'a' and self.links:
            self.links.pop()


def svg_size(path):
    head = open(path, encoding='utf-8').read(2000)
    m = re.search(r'<svg\b[^>]*', head)
    w = re.search(r'\bwidth="([\d.]+)', m.group(0)) if m else None
    h = re.search(r'\bheight="([\d.]+)', m.group(0)) if m else None
    return (float(w.group(1)), float(h.group(1))) if w and h else None


def check_img(site, page, a, link, line):
    where = '%s:%d <img src="%s">' % (page, line, a.get('src'))
    errs = []
    try:
        w, h = int(a.get('width', '')), int(a.get('height', ''))
        if w <= 0 or h <= 0:
            raise ValueError
    except ValueError:
        errs.append('%s: no width and height in CSS px' % where)
        w = h = None
    alt = (a.get('alt') or '').strip()
    if re.fullmatch(r'(Figure|Fig\.?|Table)?\s*[A-Z]?[\d.]*', alt) or len(alt.split()) < MIN_ALT_WORDS:
        errs.append('%s: alt text says nothing of what it shows: "%s"' % (where, alt))
    src = a.get('src') or ''
    if not src.startswith('fig/'):
        return errs
    svg = os.path.join(site, src)
    if not os.path.exists(svg):
        return errs + ['%s: no such SVG' % where]
    if link != src:
        errs.append('%s: not inside a link to its full size (<a href="%s">), in %r' % (where, src, link))
    if a.get('loading') != 'lazy':
        errs.append('%s: not loading="lazy"' % where)
    size = svg_size(svg)
    if w and size and abs(w / h - size[0] / size[1]) > 0.02 * size[0] / size[1]:
        errs.append('%s: width/height %dx%d not in the proportion of the SVG (%gx%g)' % ((where, w, h) + size))
    return errs


def check_pages(site):
    errs, figs = [], set()
    for page in sorted(glob.glob(os.path.join(site, '*.html'))):
        p = Images()
        p.feed(open(page, encoding='utf-8').read())
        for a, link, line in p.images:
            errs += check_img(site, os.path.basename(page), a, link, line)
            if (a.get('src') or '').startswith('fig/'):
                figs.add(a['src'])
    return errs, figs


def check_svg(path):
    """Rasters marked pixelated, text kept as text. Returns (errors, rasters, texts)."""
    name = os.path.basename(path)
    svg = open(path, encoding='utf-8').read()
    errs = []
    images = re.findall(r'<image\b[^>]*', svg)
    for im in images:
        if not re.search(r'image-rendering:\s*pixelated', im):
            errs.append('%s: a raster (heat map) not marked image-rendering: pixelated' % name)
    texts = [t for t in re.findall(r'<text\b[^>]*>(.*?)</text>', svg, re.S) if re.sub(r'<[^>]*>', '', t).strip()]
    # figures.sh outlines a figure's text only where a text font cannot draw its math (and
    # says so in the SVG); anywhere else, text drawn as glyph outlines is a fault
    if MARK_ALL not in svg:
        if not texts:
            errs.append('%s: no text kept as <text>' % name)
        if MARK_SOME not in svg and re.search(r'\bid="(glyph|font_)', svg):
            errs.append('%s: glyphs drawn as outlines (id="glyph...")' % name)
    return errs, len(images), len(texts)


def check(site, quiet=False):
    errs, figs = check_pages(site)
    svgs = sorted(glob.glob(os.path.join(site, 'fig', '*.svg')))
    if not svgs:
        errs.append('%s/fig: no figures' % site)
    heat, with_text, outlined = [], 0, []
    for s in svgs:
        e, rasters, texts = check_svg(s)
        errs += e
        with_text += texts > 0
        if re.search(re.escape(MARK_ALL) + '|' + re.escape(MARK_SOME), open(s, encoding='utf-8').read()):
            outlined.append(os.path.basename(s))
        if rasters:
            heat.append(os.path.basename(s))
    for s in svgs:
        if 'fig/' + os.path.basename(s) not in figs:
            errs.append('%s: no page shows it' % s)
    if not quiet:
        for e in errs:
            print('check-figures: ' + e)
        print('check-figures: %d figures shown, %d with text as <text> (some or all glyphs outlined on purpose: %s), '
              'heat maps (rasters marked pixelated): %s; %d errors'
              % (len(figs), with_text, ', '.join(outlined) or 'none', ', '.join(heat) or 'none', len(errs)))
    return not errs


# ------------------------------------------------------------------ the planted faults
def edit(path, old, new, count=1):
    text = open(path, encoding='utf-8').read()
    changed = re.sub(old, new, text, count=count, flags=re.S)
    assert changed != text, 'plant did not apply: %s in %s' % (old, path)
    open(path, 'w', encoding='utf-8').write(changed)


def first_fig_page(site):
    return next(p for p in sorted(glob.glob(os.path.join(site, '*.html')))
                if '<img src="fig/' in open(p, encoding='utf-8').read())


def heat_map(site):
    return next(s for s in sorted(glob.glob(os.path.join(site, 'fig', '*.svg')))
                if '<image' in open(s, encoding='utf-8').read())


def outlined(site):
    return next(s for s in sorted(glob.glob(os.path.join(site, 'fig', '*.svg')))
                if MARK_SOME in open(s, encoding='utf-8').read() or MARK_ALL in open(s, encoding='utf-8').read())


PLANTS = [
    ('an <img> without width', lambda s: edit(first_fig_page(s), r'(<img src="fig/[^"]*") width="\d+"', r'\1')),
    ('an <img> without height', lambda s: edit(first_fig_page(s), r'(<img src="fig/[^"]*" width="\d+") height="\d+"', r'\1')),
    ('a width out of the SVG\'s proportion', lambda s: edit(first_fig_page(s), r'(<img src="fig/[^"]*" width=")\d+"', r'\g<1>2000"')),
    ('alt="Figure 4.2"', lambda s: edit(first_fig_page(s), r'(<img src="fig/[^>]*alt=")[^"]*"', r'\1Figure 4.2"')),
    ('an empty alt', lambda s: edit(first_fig_page(s), r'(<img src="fig/[^>]*alt=")[^"]*"', r'\1"')),
    ('a figure not linked to its full size', lambda s: edit(first_fig_page(s), r'<a class="fig-full" href="[^"]*"', '<a class="fig-full" href="index.html"')),
    ('a figure outside any link', lambda s: edit(first_fig_page(s), r'<a class="fig-full"[^>]*>(<img src="fig/[^>]*>)</a>', r'\1')),
    ('a figure loaded eagerly', lambda s: edit(first_fig_page(s), r'(<img src="fig/[^>]*) loading="lazy"', r'\1')),
    ('a heat map smoothed', lambda s: edit(heat_map(s), r'image-rendering:\s*pixelated', 'image-rendering: auto', count=0)),
    ('a figure whose text is outlined', lambda s: edit(heat_map(s), r'<text\b.*?</text>', '<path d="M0 0"/>', count=0)),
    ('pdftocairo\'s glyphs', lambda s: edit(heat_map(s), r'<defs>', '<defs><g id="glyph-0-1"><path d="M0 0"/></g>')),
    ('outlined glyphs not marked', lambda s: edit(outlined(s), re.escape(MARK_SOME) + '|' + re.escape(MARK_ALL), '')),
    ('a figure no page shows', lambda s: shutil.copy(heat_map(s), os.path.join(s, 'fig', 'fig-999.svg'))),
]


def self_test(site):
    tmp = tempfile.mkdtemp(prefix='check-figures-')
    try:
        copy = os.path.join(tmp, 'site')

        def fresh():
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(site, copy, ignore=shutil.ignore_patterns('katex'))
        fresh()
        ok = check(copy, quiet=True)
        print('check-figures --self-test: clean site %s' % ('passes' if ok else 'FAILS'))
        failed = not ok
        for name, plant in PLANTS:
            fresh()
            plant(copy)
            caught = not check(copy, quiet=True)
            print('check-figures --self-test: %-40s %s' % (name, 'caught' if caught else 'NOT CAUGHT'))
            failed |= not caught
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failed:
        sys.exit('check-figures --self-test: FAILED')
    print('check-figures --self-test: all %d plants caught' % len(PLANTS))


def screenshot(site, png, page='masks.html', anchor='fig:mask-batch', width=1280):
    """The figure as a reader sees it, through check.py's headless Chromium."""
    sys.argv = [sys.argv[0], site]   # check.py reads SITE from its command line
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import base64, json, time
    import importlib
    check_html = importlib.import_module('check')
    check_html.WIDTH = width
    b = check_html.Browser()
    try:
        b.open(page)
        b.evaluate("(function(){var e=document.getElementById(%s); e.scrollIntoView(); "
                   "return 1;})()" % json.dumps(anchor))
        time.sleep(1)   # the lazy image loads once it is in view
        shot = b.call('Page.captureScreenshot', format='png')
        with open(png, 'wb') as fh:
            fh.write(base64.b64decode(shot['data']))
    finally:
        b.close()
    print('check-figures: %s#%s at %d px in %s' % (page, anchor, check_html.WIDTH, png))


def main():
    args = sys.argv[1:]
    if args and args[0] == '--self-test' and len(args) == 2:
        self_test(args[1])
    elif args and args[0] == '--screenshot' and len(args) == 3:
        screenshot(os.path.abspath(args[1]), args[2])
    elif len(args) == 1:
        if not check(args[0]):
            sys.exit('check-figures: FAILED')
    else:
        sys.exit(__doc__)


if __name__ == '__main__':
    main()
