#!/usr/bin/python3
"""make check-html, the page body: what tools/html/weave.py writes into a page.

  math      every formula typeset when the site was built, MathML included, read with
            JavaScript off (headless Chromium, scripts disabled): no formula without its
            HTML and MathML, no KaTeX error, no raw TeX in the text
  numbers   at 390, 768 and 1280 px no equation number over its formula's box (nor KaTeX's
            own \\tag), and no display cut off: one wider than its box scrolls within it
  solutions every exercise carries its solution, folded under it, with a link to its entry
            in the appendix
  ids       no id twice on a page
  chunks    every chunk header shows its number; every part of a chunk says where it is used
            (or that it is a file)
  anchors   every heading h2-h4 carries its own link; the identifier index has its A-Z bar

Usage: check-content.py SITE            check the built site (build/html)
       check-content.py --self-test SITE
           copies SITE to a temporary directory, plants each fault in turn and asserts that
           the check fails on it, and that it passes on the clean copy
"""
import collections
import glob
import html.parser
import json
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check   # check.py's headless Chromium (Browser); its main() is not run

WIDTHS = (390, 768, 1280)
VOID = set('area base br col embed hr img input link meta param source track wbr'.split())


# ------------------------------------------------------------------ the pages as trees
class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children = []   # Node or str

    def cls(self):
        return (self.attrs.get('class') or '').split()

    def walk(self):
        yield self
        for c in self.children:
            if isinstance(c, Node):
                yield from c.walk()

    def text(self):
        return ''.join(c if isinstance(c, str) else c.text() for c in self.children)

    def find(self, tag=None, cls=None):
        return [n for n in self.walk() if (tag is None or n.tag == tag) and (cls is None or cls in n.cls())]


class TreeBuilder(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node('#document', [], None)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(path):
    b = TreeBuilder()
    with open(path, encoding='utf-8') as fh:
        b.feed(fh.read())
    return b.root


# ------------------------------------------------------------------ checks on the HTML
def check_ids(name, tree, fail):
    ids = collections.Counter(n.attrs['id'] for n in tree.walk() if n.attrs.get('id'))
    for i, c in ids.items():
        if c > 1:
            fail('ids', '%s: id "%s" %d times' % (name, i, c))


def check_chunks(name, tree, fail):
    for ch in tree.find('div', 'chunk'):
        head = [n for n in ch.find('div', 'chunkhead')]
        num = head[0].find('a', 'chunkno') if head else []
        if not num or not re.fullmatch(r'[0-9A-Z]+\.\d+', num[0].text().strip()):
            fail('chunks', '%s: chunk %s: no number on its header' % (name, ch.attrs.get('id')))
        xref = ch.find('div', 'xref')
        said = xref[0].text() if xref else ''
        if 'Used in' not in said and 'Root chunk' not in said:
            fail('chunks', '%s: chunk %s does not say where it is used' % (name, ch.attrs.get('id')))
    return len(tree.find('div', 'chunk'))


def check_anchors(name, tree, fail):
    for h in tree.walk():
        if h.tag in ('h2', 'h3', 'h4') and h.attrs.get('id'):
            links = [a for a in h.find('a', 'hanchor') if a.attrs.get('href') == '#' + h.attrs['id']]
            if not links:
                fail('anchors', '%s: heading #%s has no link of its own' % (name, h.attrs['id']))
    if name == 'identifiers.html':
        ids = {n.attrs['id'] for n in tree.walk() if n.attrs.get('id')}
        bar = tree.find('nav', 'az')
        letters = [a for a in bar[0].find('a')] if bar else []
        if len(letters) < 20 or any(a.attrs.get('href', '')[1:] not in ids for a in letters):
            fail('anchors', 'identifiers.html: no A-Z bar whose letters land on the index')


def check_solutions(trees, fail):
    """Every exercise (an item of an exercises list with an ex: label) with its folded
    solution and the link to its entry in the appendix. Returns (exercises, with solution)."""
    sol_ids = {n.attrs['id'] for n in trees['solutions.html'].walk() if n.attrs.get('id')}
    entries = len([i for i in sol_ids if i.startswith('sol-ex:')])
    exercises = solved = 0
    for name, tree in sorted(trees.items()):
        for ol in tree.find('ol', 'exercises'):
            for li in [c for c in ol.children if isinstance(c, Node) and c.tag == 'li']:
                labels = [n.attrs['id'] for n in li.walk() if n.attrs.get('id', '').startswith('ex:')]
                if not labels:
                    continue
                exercises += 1
                details = [d for d in li.find('details', 'solution') if d.parent is li]
                links = [a for d in details for a in d.find('a')
                         if a.attrs.get('href', '').startswith('solutions.html#')
                         and a.attrs['href'].split('#', 1)[1] in sol_ids]
                body = details[0].text().replace('Solution', '', 1).strip() if details else ''
                if not details or not links or len(body) < 20:
                    fail('solutions', '%s: exercise %s without its solution and its link' % (name, labels[0]))
                else:
                    solved += 1
    if exercises != entries:
        fail('solutions', '%d exercises, %d solutions in the appendix' % (exercises, entries))
    return exercises, solved


# ------------------------------------------------------------------ checks in Chromium
PROBE_JS = r'''
(function () {
  var out = {formulas: 0, mathml: 0, untypeset: [], errors: [], rawTex: [], overlaps: [],
             cut: [], katexTags: 0, numbers: 0};
  var fs = document.querySelectorAll('.formula');
  out.formulas = fs.length;
  out.mathml = document.querySelectorAll('.formula math').length;
  for (var i = 0; i < fs.length; i++) {
    if (!fs[i].querySelector('.katex-mathml math') || !fs[i].querySelector('.katex-html'))
      out.untypeset.push(fs[i].textContent.slice(0, 60));
    var e = fs[i].querySelector('.katex-error');
    if (e) out.errors.push(e.textContent.slice(0, 60));
  }
  // (a TreeWalker's filter is a callback, which a page with scripts off refuses to run)
  var re = /\$|\\[A-Za-z]+|\[\[|\]\]/;
  var skip = {PRE: 1, CODE: 1, SCRIPT: 1, STYLE: 1};
  (function visit(e) {
    for (var c = e.firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3) {
        var m = re.exec(c.nodeValue);
        if (m) out.rawTex.push(c.nodeValue.slice(Math.max(0, m.index - 30), m.index + 30));
      } else if (c.nodeType === 1 && !skip[c.tagName] && !c.classList.contains('katex') &&
                 !c.classList.contains('formula')) visit(c);
    }
  })(document.body);
  out.katexTags = document.querySelectorAll('.katex .tag').length;
  var W = document.documentElement.clientWidth;
  var eqs = document.querySelectorAll('.eq');
  for (var i = 0; i < eqs.length; i++) {
    var body = eqs[i].querySelector('.eqbody'), no = eqs[i].querySelector('.eqno');
    if (!body) continue;
    var b = body.getBoundingClientRect();
    if (body.scrollWidth > body.clientWidth + 1 &&
        ['auto', 'scroll'].indexOf(getComputedStyle(body).overflowX) < 0)
      out.cut.push(body.textContent.slice(0, 40));
    if (!no) continue;
    out.numbers++;
    var r = no.getBoundingClientRect();
    var apart = r.left >= b.right - 0.5 || r.right <= b.left + 0.5 ||
                r.top >= b.bottom - 0.5 || r.bottom <= b.top + 0.5;
    if (!apart || r.right > W + 0.5 || r.left < -0.5)
      out.overlaps.push(no.textContent + ' at x ' + Math.round(r.left) + '-' + Math.round(r.right) +
                        ', its formula ' + Math.round(b.left) + '-' + Math.round(b.right));
  }
  return JSON.stringify(out);
})()
'''


def browse(site, pages, fail):
    """Each page with JavaScript off at each width. Returns (formulas, MathML, numbers) at
    the first width."""
    with_displays = set()
    for page in pages:
        with open(os.path.join(site, page), encoding='utf-8') as fh:
            if 'class="eq' in fh.read():
                with_displays.add(page)
    b = check.Browser()
    totals = [0, 0, 0]
    try:
        b.call('Emulation.setScriptExecutionDisabled', value=True)
        for width in WIDTHS:
            b.call('Emulation.setDeviceMetricsOverride', width=width, height=900,
                   deviceScaleFactor=1, mobile=width < 800)
            for page in pages:
                if width != WIDTHS[0] and page not in with_displays:
                    continue   # the math is read at the first width; displays at each
                b.events = []
                b.call('Page.navigate', url='file://' + os.path.join(site, page))
                b.wait_event('Page.loadEventFired')
                r = json.loads(b.evaluate(PROBE_JS))
                where = '%s at %d px' % (page, width)
                if width == WIDTHS[0]:
                    totals[0] += r['formulas']
                    totals[1] += r['mathml']
                    totals[2] += r['numbers']
                    for t in r['untypeset'][:5]:
                        fail('math', '%s: a formula without its HTML and MathML: %s' % (page, t))
                    for t in r['errors'][:5]:
                        fail('math', '%s: KaTeX could not typeset %s' % (page, t))
                    for t in r['rawTex'][:5]:
                        fail('math', '%s: raw TeX with JavaScript off: ...%s...' % (page, t.replace('\n', ' ')))
                if r['katexTags']:
                    fail('numbers', '%s: %d numbers drawn by KaTeX inside their formula' % (where, r['katexTags']))
                for t in r['overlaps'][:5]:
                    fail('numbers', '%s: equation number over its formula: %s' % (where, t))
                for t in r['cut'][:5]:
                    fail('numbers', '%s: display cut off, not scrolling: %s' % (where, t))
    finally:
        b.close()
    return totals


# ------------------------------------------------------------------ the whole check
def run(site, pages=None, quiet=False):
    """The failures, [(check, message)], of the site (or of some of its pages in Chromium)."""
    failures = []

    def fail(kind, msg):
        failures.append((kind, msg))
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(site, '*.html')))
    trees = {n: parse(os.path.join(site, n)) for n in names}
    chunks = 0
    for n, t in trees.items():
        check_ids(n, t, fail)
        chunks += check_chunks(n, t, fail)
        check_anchors(n, t, fail)
    exercises, solved = check_solutions(trees, fail)
    start = time.time()
    formulas, mathml, numbers = browse(site, pages or names, fail)
    if not quiet:
        print('check-content: %d pages; %d formulas, %d with MathML, read with JavaScript off; '
              '%d equation numbers at %s px; %d of %d exercises with their solution; %d chunks '
              '(%.0f s in Chromium)' % (len(names), formulas, mathml, numbers,
                                        ', '.join(map(str, WIDTHS)), solved, exercises, chunks,
                                        time.time() - start))
    return failures


# ------------------------------------------------------------------ self-test: plant faults
def edit(site, page, fn):
    path = os.path.join(site, page)
    with open(path, encoding='utf-8') as fh:
        s = fh.read()
    t = fn(s)
    assert t != s, 'the plant changed nothing in ' + page
    with open(path, 'w', encoding='utf-8') as fh:
        fh.write(t)


def once(pattern, repl):
    return lambda s: re.sub(pattern, repl, s, count=1, flags=re.S)


STYLE = lambda css: once(r'</head>', '<style>%s</style></head>' % css)
# (check that must fail, page, plant)
PLANTS = [
    ('math', 'attention.html', once(r'<span class="katex-mathml">.*?</math></span>', '')),
    ('math', 'attention.html', once(r'<p>', r'<p>$\\sqrt{d_k}$ ')),
    ('math', 'attention.html', once(r'(<span class="formula">)<span class="katex">',
                                    r'\1<span class="katex"><span class="katex-error">\\frac</span>')),
    ('numbers', 'attention.html', STYLE('.eq > .eqno { margin-left: -4em; }')),
    ('numbers', 'attention.html', STYLE('.eq > .eqbody { overflow: hidden; }')),
    ('numbers', 'attention.html', once(r'(<div class="eq numbered">.*?<span class="katex-html"[^>]*>)',
                                       r'\1<span class="tag">(9.9)</span>')),
    ('solutions', 'attention.html', once(r'<details class="solution">.*?</details>', '')),
    ('solutions', 'masks.html', once(r'<p class="sollink">.*?</p>', '')),
    ('ids', 'program.html', once(r'<h3 id="sec-[0-9-]*"', '<h3 id="sec-3"')),
    ('chunks', 'tensor.html', once(r'<a class="chunkno"[^>]*>[^<]*</a>', '')),
    ('chunks', 'model.html', once(r'Used in ', 'Use in ')),
    ('anchors', 'attention.html', once(r'<a class="hanchor"[^>]*>[^<]*</a>', '')),
    ('anchors', 'identifiers.html', once(r'<nav class="az".*?</nav>', '')),
]


def self_test(site):
    tmp = tempfile.mkdtemp(prefix='check-content-')
    ok = True
    try:
        clean = run(site)
        if clean:
            print('check-content --self-test: the clean site fails:', clean[:5], file=sys.stderr)
            ok = False
        for kind, page, plant in PLANTS:
            copy = os.path.join(tmp, 'site')
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(site, copy)
            edit(copy, page, plant)
            got = run(copy, pages=[page], quiet=True)
            hit = [m for k, m in got if k == kind]
            print('check-content --self-test: %-9s plant in %-16s %s' % (
                kind, page, ('caught: ' + hit[0])[:110] if hit else 'NOT CAUGHT'))
            ok = ok and bool(hit)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not ok:
        sys.exit('check-content --self-test: FAILED')
    print('check-content --self-test: each of %d plants caught, the clean site passes' % len(PLANTS))


def main():
    args = sys.argv[1:]
    if args and args[0] == '--self-test':
        self_test(os.path.abspath(args[1]))
        return
    failures = run(os.path.abspath(args[0]))
    for kind, msg in failures[:200]:
        print('check-content: %s: %s' % (kind, msg), file=sys.stderr)
    if failures:
        sys.exit('check-content: %d failures' % len(failures))


if __name__ == '__main__':
    main()
