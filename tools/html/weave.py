#!/usr/bin/python3
"""The web edition of the book: noweb's token stream (markup | finduses | noidx) of the
chapters in reading order, turned into one HTML page per chapter.

Usage: weave.py STREAM OUTDIR
  STREAM  the output of /usr/lib/noweb/markup $(READING) | finduses | noidx
  OUTDIR  build/html (the figures' SVGs are made by tools/html/figures.sh into OUTDIR/fig/)

The prose is LaTeX: a small converter below handles the commands the book uses (sections,
lists, emphasis, tables, figures, cross-references, citations, the measured numbers'
macros); the math is typeset by KaTeX when the site is built (node and
tools/html/katex-render.js, all the book's formulas in one run), HTML for the eye and MathML
for a screen reader, so that a page needs no script. The figures'
bodies are written to OUTDIR/../html-fig/figures.tex, one page each, for LaTeX to draw.
"""
import html
import os
import re
import subprocess
import sys
import json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STREAM, OUT = sys.argv[1], sys.argv[2]
FIGWORK = os.path.join(os.path.dirname(OUT.rstrip('/')), 'html-fig')
warnings = []


def warn(msg):
    warnings.append(msg)


def esc(s):
    return html.escape(s, quote=False)


def attr(s):
    return html.escape(s, quote=True)


# ------------------------------------------------------------------ noweb's stream
class Chunk:
    pass


files = []          # [(file name, [items])], item: ('docs', text) or ('code', Chunk)
quotes = []         # HTML of each [[...]] of the prose, by number
label_page = {}     # noweb label -> page (file stem)
chunk_first = {}    # chunk name -> label of its first definition
chunk_name_of = {}  # label -> chunk name


def code_segments_to_html(segs, cls_state=None):
    """Segments: ('text', s) | ('nl',) | ('ident', name, label) | ('use', name, label)."""
    return segs


with open(STREAM, encoding='utf-8', errors='replace') as f:
    lines = f.read().split('\n')

cur_file = None
i = 0
mode = None
docs = []
chunk = None
pending_ref = None
last_ref = None
in_quote = False
qsegs = []
index_state = None
while i < len(lines):
    line = lines[i]
    i += 1
    if not line.startswith('@'):
        continue
    kw, _, rest = line.partition(' ')
    if kw == '@file':
        cur_file = (rest, [])
        files.append(cur_file)
    elif kw == '@begin':
        kind = rest.split()[0]
        if kind == 'docs':
            mode = 'docs'
            docs = []
        else:
            mode = 'code'
            chunk = Chunk()
            chunk.label = None
            chunk.name = None
            chunk.segs = []
            chunk.prev = chunk.next = None
            chunk.usedin = []
            chunk.defines = []     # [(ident, [labels where used])]
            chunk.uses = []        # [(ident, label of definition)]
            chunk.file = cur_file[0]
            index_state = None
            pending_ref = None
    elif kw == '@end':
        if mode == 'docs':
            cur_file[1].append(('docs', ''.join(docs)))
        else:
            cur_file[1].append(('code', chunk))
        mode = None
    elif kw == '@text':
        if mode == 'docs' and not in_quote:
            docs.append(rest)
        else:
            segs = qsegs if in_quote else chunk.segs
            if pending_ref is not None:
                segs.append(('ident', rest, pending_ref))
                pending_ref = None
            else:
                segs.append(('text', rest))
    elif kw == '@nl':
        if mode == 'docs' and not in_quote:
            docs.append('\n')
        elif in_quote:
            qsegs.append(('text', ' '))
        else:
            chunk.segs.append(('nl',))
    elif kw == '@quote':
        in_quote = True
        qsegs = []
    elif kw == '@endquote':
        in_quote = False
        quotes.append(qsegs)
        docs.append('\x01%d\x01' % (len(quotes) - 1))
    elif kw == '@defn':
        chunk.name = rest
    elif kw == '@use':
        segs = qsegs if in_quote else chunk.segs
        segs.append(('use', rest, last_ref))
        pending_ref = None
    elif kw == '@xref':
        sub, _, arg = rest.partition(' ')
        if sub == 'label':
            if mode == 'code' and chunk.label is None and chunk.name is None:
                chunk.label = arg
                label_page[arg] = cur_file[0]
        elif sub == 'ref':
            last_ref = arg
        elif sub == 'prevdef':
            chunk.prev = arg
        elif sub == 'nextdef':
            chunk.next = arg
        elif sub == 'useitem' and mode == 'code':
            chunk.usedin.append(arg)
        elif sub == 'notused':
            pass
    elif kw == '@index':
        sub, _, arg = rest.partition(' ')
        if sub == 'use':
            pending_ref = last_ref  # the @xref ref before it names the definition; the @text after is the name
        elif sub == 'defn':
            pending_ref = None
        elif sub == 'begindefs':
            index_state = ('defs', [])
        elif sub == 'isused' and index_state and index_state[0] == 'defs':
            index_state[1].append(arg)
        elif sub == 'defitem':
            chunk.defines.append((arg, index_state[1] if index_state else []))
            index_state = ('defs', [])
        elif sub == 'beginuses':
            index_state = ('uses', None)
        elif sub == 'isdefined':
            index_state = ('uses', arg)
        elif sub == 'useitem' and index_state:
            chunk.uses.append((arg, index_state[1]))
        elif sub in ('enddefs', 'enduses'):
            index_state = None

stem = lambda path: os.path.splitext(os.path.basename(path))[0]
# noweb names the chunks that use a chunk at its first part only: every part says it
usedin_by_name = {}   # chunk name -> labels of the chunks that use it
for fname, items in files:
    for kind, it in items:
        if kind == 'code':
            usedin_by_name.setdefault(it.name, {}).update(dict.fromkeys(it.usedin))
for fname, items in files:
    for kind, it in items:
        if kind == 'code':
            label_page[it.label] = stem(fname)
            chunk_name_of[it.label] = it.name
            chunk_first.setdefault(it.name, it.label)

# ------------------------------------------------------------------ macros
macros = {}   # name -> (nargs, body)


def brace_walk(s, i):
    """Each character of s from i with the depth of braces after it; an escaped character
    (after a backslash) is skipped."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c == '{':
            depth += 1
        elif c == '}':
            depth -= 1
        yield i, c, depth
        i += 2 if c == '\\' else 1


def read_group(s, i):
    """s[i] == '{': return (content, index after the closing brace)."""
    for j, c, depth in brace_walk(s, i):
        if c == '}' and depth == 0:
            return s[i + 1:j], j + 1
    raise ValueError('unbalanced braces: ' + s[i:i + 80])


def skip_ws(s, i):
    while i < len(s) and s[i] in ' \t\n':
        i += 1
    return i


def read_arg(s, i):
    """One macro argument: a group or a single token."""
    i = skip_ws(s, i)
    if i < len(s) and s[i] == '{':
        return read_group(s, i)
    if i < len(s) and s[i] == '\\':
        m = re.match(r'\\([A-Za-z@]+|.)', s[i:])
        return m.group(0), i + len(m.group(0))
    return s[i:i + 1], i + 1


def read_opt(s, i):
    j = skip_ws(s, i)
    if j < len(s) and s[j] == '[':
        depth = 0
        k = j
        while k < len(s):
            if s[k] == '{':
                depth += 1
            elif s[k] == '}':
                depth -= 1
            elif s[k] == ']' and depth == 0:
                return s[j + 1:k], k + 1
            k += 1
    return None, i


def define_from(text):
    expand(text)


XSPACE_NO = set(',.\'/?;:!~-)}\\\n' + '\x01"')
CS = re.compile(r'\\([A-Za-z@]+|.)', re.S)


def expand(s):
    """Expand the user macros (numbers, settings, \\given...) and \\input of data files."""
    out = []
    i = 0
    while True:
        j = s.find('\\', i)
        if j < 0:
            out.append(s[i:])
            break
        out.append(s[i:j])
        m = CS.match(s, j)
        name = m.group(1)
        k = m.end()
        if name == 'begin' and s.startswith('{verbatim}', k):
            e = s.find('\\end{verbatim}', k)
            out.append(s[j:e + 14])
            i = e + 14
            continue
        if name in ('newcommand', 'renewcommand', 'providecommand'):
            k = skip_ws(s, k)
            if s[k] == '{':
                cname, k = read_group(s, k)
            else:
                cname, k = read_arg(s, k)
            nargs, k = read_opt(s, k)
            body, k = read_arg(s, k)
            macros[cname.strip()[1:]] = (int(nargs or 0), body)
            i = k
            continue
        if name == 'expandafter':
            i = k
            continue
        if name == 'def' and s.startswith('\\csname', skip_ws(s, k)):
            k = skip_ws(s, k) + 7
            e = s.index('\\endcsname', k)
            body, k2 = read_group(s, e + 10)
            macros[s[k:e].strip()] = (0, body)
            i = k2
            continue
        if name == 'csname':
            e = s.index('\\endcsname', k)
            cname = s[k:e].strip()
            if cname not in macros:
                warn('undefined \\csname ' + cname)
            s = macros.get(cname, (0, '??'))[1] + s[e + 10:]
            i = 0
            continue
        if name == 'def':
            m2 = re.match(r'\\([A-Za-z@]+)((?:#\d)*)', s[k:])
            body, k2 = read_group(s, k + len(m2.group(0)))
            macros[m2.group(1)] = (len(m2.group(2)) // 2, body)
            i = k2
            continue
        if name == 'input':
            fn, k = read_group(s, skip_ws(s, k))
            path = os.path.join(ROOT, fn if fn.endswith('.tex') else fn + '.tex')
            with open(path, encoding='utf-8') as fh:
                s = fh.read() + s[k:]
            i = 0
            continue
        if name in macros:
            nargs, body = macros[name]
            args = []
            if name.isalpha() or '@' in name:
                if nargs == 0:
                    pass
            for a in range(nargs):
                arg, k = read_arg(s, k)
                args.append(arg)
            for a in range(nargs):
                body = body.replace('#%d' % (a + 1), args[a])
            if body.rstrip().endswith('\\xspace'):
                body = body.rstrip()[:-7]
                k2 = k
                while k2 < len(s) and s[k2] in ' \t':
                    k2 += 1
                if s.startswith('{}', k2):
                    k = k2 + 2
                elif k2 < len(s) and s[k2] not in XSPACE_NO:
                    body += ' '
                    k = k2
                else:
                    k = k2
            elif nargs == 0 and re.match(r'[A-Za-z@]', name):
                while k < len(s) and s[k] in ' \t':
                    k += 1
            s = body + s[k:]
            i = 0
            continue
        out.append(m.group(0))
        i = k
    return ''.join(out)


for fn in ('build/numbers.tex', 'build/quotes.tex', 'build/version.tex', 'figures/architecture.tex'):
    with open(os.path.join(ROOT, fn), encoding='utf-8') as fh:
        define_from(fh.read())
macros['given'] = (1, '#1')
macros['xspace'] = (0, '')

# ------------------------------------------------------------------ bibliography
with open(os.path.join(ROOT, 'book/book.tex'), encoding='utf-8') as fh:
    booktex = fh.read()
bib_tex = booktex[booktex.index('\\begin{thebibliography}'):booktex.index('\\end{thebibliography}')]
bib = []     # [(key, tex)]
for m in re.finditer(r'\\bibitem\{([^}]*)\}(.*?)(?=\\bibitem|\Z)', bib_tex, re.S):
    bib.append((m.group(1), m.group(2).strip()))
bib_number = {k: n + 1 for n, (k, _) in enumerate(bib)}
PREAMBLE = booktex[:booktex.index('\\begin{document}')]

# ------------------------------------------------------------------ pages and numbering
pages = []      # dicts: stem, title, number, kind ('chapter'/'appendix'), part, sections, html
labels = {}     # LaTeX label -> (text, page stem, anchor)
parts = []      # (roman, title, label)
counts = {}     # page stem -> {'section':, 'figure':, 'table':, 'equation':, 'exercise':}
figures = []    # (n, page, number, body, caption html later)
figure_files = {}   # label of a figure -> {'number', 'svg', 'page'}: for tools/live/place
# The figures the live edition redraws (tools/live/figures.txt): label -> (page, link's words)
LIVE_FIGURES = {}
with open(os.path.join(ROOT, 'tools', 'live', 'figures.txt'), encoding='utf-8') as fh:
    for line in fh:
        if line.strip() and not line.startswith('#'):
            label, target, words = line.split(None, 2)
            LIVE_FIGURES[label] = (target, words.strip())
ROMAN = ['I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII']


def alpha(n):
    return 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'[n - 1]


# ------------------------------------------------------------------ C colouring
C_KEYWORDS = set('''auto break case char const continue default do double else enum extern float
for goto if inline int long register restrict return short signed sizeof static struct switch
typedef union unsigned void volatile while _Bool bool size_t uint8_t uint16_t uint32_t uint64_t
int8_t int16_t int32_t int64_t ptrdiff_t FILE true false NULL'''.split())
C_TOKEN = re.compile(r'''(?P<bc>/\*)|(?P<lc>//.*)|(?P<str>"(?:\\.|[^"\\])*"?)|(?P<chr>'(?:\\.|[^'\\])*'?)'''
                     r'''|(?P<pp>^\s*\#\s*[a-z]+)|(?P<num>\b(?:0[xX][0-9a-fA-F]+|\d+\.?\d*(?:[eE][-+]?\d+)?)[fFuUlL]*\b)'''
                     r'''|(?P<id>[A-Za-z_]\w*)''')


def colour_text(t, state, line_start):
    """Colour one piece of code text; state: None or 'comment' (inside /* */). Returns
    (html, state)."""
    out = []
    pos = 0
    while pos < len(t):
        if state == 'comment':
            e = t.find('*/', pos)
            if e < 0:
                out.append('<span class="cm">%s</span>' % esc(t[pos:]))
                return ''.join(out), state
            out.append('<span class="cm">%s</span>' % esc(t[pos:e + 2]))
            pos = e + 2
            state = None
            continue
        m = C_TOKEN.search(t, pos)
        if not m:
            out.append(esc(t[pos:]))
            break
        out.append(esc(t[pos:m.start()]))
        g = m.lastgroup
        s = m.group(0)
        if g == 'bc':
            state = 'comment'
            e = t.find('*/', m.end())
            if e < 0:
                out.append('<span class="cm">%s</span>' % esc(t[m.start():]))
                return ''.join(out), state
            out.append('<span class="cm">%s</span>' % esc(t[m.start():e + 2]))
            state = None
            pos = e + 2
            continue
        if g == 'lc':
            out.append('<span class="cm">%s</span>' % esc(s))
        elif g in ('str', 'chr'):
            out.append('<span class="st">%s</span>' % esc(s))
        elif g == 'pp':
            if line_start and m.start() == 0:
                out.append('<span class="pp">%s</span>' % esc(s))
            else:
                out.append(esc(s))
        elif g == 'num':
            out.append('<span class="nu">%s</span>' % esc(s))
        elif g == 'id':
            out.append('<span class="kw">%s</span>' % esc(s) if s in C_KEYWORDS else esc(s))
        pos = m.end()
    return ''.join(out), state


def href(label, here):
    page = label_page.get(label)
    if page is None:
        return '#' + label
    return ('#' if page == here else page + '.html#') + label


def chunk_name_html(name, here):
    """A chunk's name may hold [[code]]."""
    parts_ = re.split(r'\[\[(.*?)\]\]', name)
    out = []
    for n, p in enumerate(parts_):
        out.append('<code>%s</code>' % esc(p) if n % 2 else inline_latex(p, here))
    return ''.join(out)


def code_html(segs, here, quote=False):
    out = []
    state = None
    line_start = True
    for seg in segs:
        if seg[0] == 'nl':
            out.append('\n')
            line_start = True
            continue
        if seg[0] == 'text':
            if quote:
                out.append(esc(seg[1]))
            else:
                h, state = colour_text(seg[1], state, line_start)
                out.append(h)
        elif seg[0] == 'ident':
            cls = ' class="cm"' if state == 'comment' else ''
            out.append('<a class="id" href="%s"%s>%s</a>' % (href(seg[2], here), cls, esc(seg[1])))
        elif seg[0] == 'use':
            name = seg[1]
            target = chunk_first.get(name, seg[2])
            out.append('<span class="chunkuse">&#x27E8;<a href="%s">%s</a>&#x27E9;</span>'
                       % (href(target, here), chunk_name_html(name, here)))
        line_start = False
    return ''.join(out)


def chunk_html(c, here):
    first = chunk_first.get(c.name) == c.label
    sign = '&#x2261;' if first else '+&#x2261;'
    # the number cross-references cite ("used in 3.1"), linking to this part itself
    head = ('<div class="chunkhead"><a class="chunkno" href="%s">%s</a> '
            '<a class="chunkname" href="%s">&#x27E8;%s&#x27E9;</a> %s'
            % (href(c.label, here), esc(chunk_ref_text(c.label)),
               href(chunk_first.get(c.name, c.label), here), chunk_name_html(c.name, here), sign))
    nav = []
    if c.prev:
        nav.append('<a href="%s" title="previous part">&#x25B2;</a>' % href(c.prev, here))
    if c.next:
        nav.append('<a href="%s" title="next part">&#x25BC;</a>' % href(c.next, here))
    if nav:
        head += ' <span class="chunknav">%s</span>' % ' '.join(nav)
    head += '</div>'
    body = code_html(c.segs, here).strip('\n')
    xref = []
    usedin = list(usedin_by_name.get(c.name, {})) or c.usedin
    if usedin:
        xref.append('Used in ' + ', '.join('<a href="%s">%s</a>' % (href(l, here), esc(chunk_ref_text(l)))
                                        for l in dict.fromkeys(usedin)) + '.')
    elif not re.match(r'^[\w./-]+\.[ch]$', c.name or ''):
        pass
    else:
        xref.append('Root chunk (the file <code>tangled/%s</code>).' % esc(c.name))
    if c.defines:
        items = []
        for ident, uses in c.defines:
            u = ''
            if uses:
                u = ' (used in ' + ', '.join('<a href="%s">%s</a>' % (href(l, here), esc(chunk_ref_text(l)))
                                             for l in dict.fromkeys(uses)) + ')'
            items.append('<code id="%s">%s</code>%s' % (attr(ident_anchor(ident, c.label)), esc(ident), u))
        xref.append('Defines ' + ', '.join(items) + '.')
    if c.uses:
        xref.append('Uses ' + ', '.join('<a href="%s"><code>%s</code></a>' % (href(l, here), esc(ident))
                                        for ident, l in c.uses) + '.')
    return ('<div class="chunk" id="%s">%s<pre class="code"><code>%s</code></pre>%s</div>\n'
            % (attr(c.label), head, body,
               '<div class="xref">%s</div>' % ' '.join(xref) if xref else ''))


ident_anchors = {}   # (identifier, chunk label) -> its id
ident_ids = {}       # def-NAME -> how many chunks define NAME so far


def ident_anchor(ident, label):
    """def-NAME, the id of an identifier's definition; a name defined in several chunks (a
    static function of two files, say) gets def-NAME-2 and on for the later ones, so that
    no page holds an id twice."""
    if (ident, label) not in ident_anchors:
        base = 'def-' + re.sub(r'[^A-Za-z0-9_-]', '_', ident)
        ident_ids[base] = n = ident_ids.get(base, 0) + 1
        ident_anchors[(ident, label)] = base if n == 1 else '%s-%d' % (base, n)
    return ident_anchors[(ident, label)]


chunk_serial = {}   # label -> "3.12" style number: page number . serial


def chunk_ref_text(label):
    return chunk_serial.get(label, label)


# ------------------------------------------------------------------ the LaTeX converter
class Ctx:
    def __init__(self, page):
        self.page = page          # page dict
        self.current = ''         # the value \label takes
        self.in_exercises = False


MATH_ENVS = ('equation', 'equation*', 'align', 'align*', 'gather', 'gather*', 'multline',
             'multline*', 'displaymath')
IGNORED = set('''noindent centering raggedright small footnotesize scriptsize normalsize large Large
par medskip smallskip bigskip hfill vfill quad qquad protect phantomsection clearpage newpage
arraybackslash relax nobreak allowbreak linebreak pagebreak leavevmode displaystyle hline
toprule midrule bottomrule frenchspacing sloppy strut selectfont'''.split())
SIMPLE = {'ldots': '&#x2026;', 'dots': '&#x2026;', 'LaTeX': 'LaTeX', 'TeX': 'TeX', '@': '',
          'textquotesingle': "'", 'textbackslash': '\\', 'textasciitilde': '~', 'quad': '&#x2003;',
          'qquad': '&#x2003;&#x2003;', ',': '&#x2009;', ' ': ' ', '\n': ' ', '&': '&amp;', '%': '%',
          '$': '$', '#': '#', '_': '_', '{': '{', '}': '}', '/': '', '-': '', ';': ' ', '!': '',
          'textendash': '&#x2013;', 'textemdash': '&#x2014;', 'S': '&#xA7;', 'copyright': '&#xA9;',
          'L': '&#x141;', 'l': '&#x142;', 'ss': '&#xDF;', 'o': '&#xF8;', 'aa': '&#xE5;',
          'slash': '/', 'textless': '&lt;', 'textgreater': '&gt;', 'textbar': '|',
          'textunderscore': '_', 'ae': '&#xE6;', 'i': 'i', 'textdegree': '&#xB0;',
          'textasciicircum': '^', 'times': '&#xD7;', 'AA': '&#xC5;', 'cdot': '&#xB7;'}
ACCENTS = {'"': '\u0308', "'": '\u0301', '`': '\u0300', '^': '\u0302', '~': '\u0303', 'c': '\u0327',
           'v': '\u030C', '=': '\u0304', 'u': '\u0306', 'H': '\u030B', '.': '\u0307', 'r': '\u030A'}
WRAP = {'emph': 'em', 'textit': 'em', 'textsl': 'em', 'textbf': 'strong', 'texttt': 'code',
        'textsc': 'span class="sc"', 'textsf': 'span', 'textrm': 'span', 'textup': 'span',
        'mbox': 'span', 'text': 'span', 'underline': 'u', 'textnormal': 'span', 'hbox': 'span'}


import html.parser  # the figures' alt text: the caption's HTML read back as text


class _CaptionText(html.parser.HTMLParser):
    """The text of a caption's HTML; math as its TeX (a <span class="math"> holds it, or
    KaTeX's <annotation>), KaTeX's drawn copy and MathML presentation skipped."""
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.skip, self.tex = [], 0, 0

    def handle_starttag(self, tag, attrs):
        cls = dict(attrs).get('class') or ''
        if self.skip or 'katex-html' in cls.split() or tag == 'math':
            self.skip += 1
        if tag == 'annotation':
            self.skip, self.tex = 0, 1   # inside <math>: the TeX source
        elif tag == 'span' and {'math', 'formula'} & set(cls.split()) and not self.skip:
            self.tex = 1   # a formula is still its placeholder here (typeset_formulas)

    def handle_endtag(self, tag):
        if tag == 'annotation':
            self.tex, self.skip = 0, 1   # back inside <math>
        elif self.skip:
            self.skip -= 1
        elif tag == 'span' and self.tex:
            self.tex = 0

    def handle_data(self, data):
        if not self.skip:
            if self.tex:
                data = FORMULA.sub(lambda m: formulas[int(m.group(1))][0], data)
            self.out.append(tex_plain(data) if self.tex else data)


TEX_WORDS = {'times': '×', 'cdot': '·', 'le': '≤', 'leq': '≤', 'ge': '≥', 'geq': '≥',
             'infty': '∞', 'to': '→', 'approx': '≈', 'ne': '≠', 'pm': '±', 'ldots': '…',
             'dots': '…', 'alpha': 'α', 'beta': 'β', 'epsilon': 'ε', 'varepsilon': 'ε',
             'lambda': 'λ', 'mu': 'μ', 'sigma': 'σ', 'theta': 'θ', 'top': 'ᵀ', 'sum': 'Σ',
             'sqrt': '√'}


def tex_plain(t):
    """A formula's TeX as plain text for an alt attribute: d_\\mathrm{model} -> d_model."""
    t = re.sub(r'\\frac\{([^{}]*)\}\{([^{}]*)\}', r'\1/\2', t)
    t = re.sub(r'\\([A-Za-z]+)', lambda m: TEX_WORDS.get(m.group(1), ''), t)
    t = re.sub(r'\\.', ' ', t)
    return re.sub(r'\s+', ' ', t.replace('{', '').replace('}', '')).strip()


def alt_text(cap_html, limit=300):
    """A figure's alt text: what it shows, the first sentence of its caption in plain text
    (the whole caption follows in the figcaption)."""
    p = _CaptionText()
    p.feed(cap_html)
    p.close()
    text = re.sub(r'\s+', ' ', ''.join(p.out)).strip()
    first = re.match(r'(.+?\.)(\s|$)', text)
    if first and len(first.group(1).split()) >= 6:
        text = first.group(1)
    if len(text) > limit:
        text = text[:limit].rsplit(' ', 1)[0] + '…'
    return text



# The math is typeset when the site is built (typeset_formulas, at the end): a formula is
# written as a placeholder, \x0eN\x0e, N its number in formulas, which KaTeX's HTML and
# MathML replace in the written pages. The class is "formula", not "math": a page's script
# must not take the typeset text for TeX to render again.
formulas = []       # [tex, display]
formula_no = {}     # (tex, display) -> its number in formulas
FORMULA = re.compile('\x0e(\\d+)\x0e')


def mathspan(tex, display=False):
    tex = tex.strip()
    key = (tex, display)
    if key not in formula_no:
        formula_no[key] = len(formulas)
        formulas.append([tex, display])
    return '<span class="formula%s">\x0e%d\x0e</span>' % (' display' if display else '', formula_no[key])


def display_html(tex, anchors='', tag=None):
    """A display: the formula in a box that scrolls sideways within itself when it is wider
    than the column, its number (not KaTeX's \\tag, drawn over a formula that does not
    fit) in a column of its own beside it."""
    number = '<span class="eqno">(%s)</span>' % tag if tag else ''
    return ('<div class="eq%s"><div class="anchors">%s</div><div class="eqbody">%s</div>%s</div>\n'
            % (' numbered' if tag else '', anchors, mathspan(tex, True), number))


def prepare_math(tex, ctx):
    """Labels out of the math (the page records them), quoted code back as \\texttt."""
    tex = re.sub(r'\x01(\d+)\x01', lambda m: '\\texttt{%s}' % ''.join(
        s[1] for s in quotes[int(m.group(1))] if s[0] != 'nl' and len(s) > 1).replace('_', '\\_'), tex)
    return tex


# The characters that TeX sets otherwise than typed (the longest first), and HTML's own.
LIGATURES = [('---', '&#x2014;'), ('--', '&#x2013;'), ('``', '&#x201C;'), ('`', '&#x2018;'),
             ("''", '&#x201D;'), ("'", '&#x2019;'), ('&', '&amp;'), ('<', '&lt;'), ('>', '&gt;')]
ANCHORS_ONLY = re.compile(r'^(<span class="anchor" id="[^"]*"></span>\s*)+$')


class Converter:
    def __init__(self, ctx):
        self.ctx = ctx

    def convert(self, s, block=True):
        """LaTeX -> HTML. block: paragraphs are made at blank lines."""
        out = []       # list of (kind, html): kind 'i' inline, 'b' block, 'p' paragraph break
        i = 0
        n = len(s)
        buf = []

        def flush():
            if buf:
                out.append(('i', ''.join(buf)))
                buf.clear()

        while i < n:
            c = s[i]
            if c == '\\':
                m = CS.match(s, i)
                name = m.group(1)
                k = m.end()
                if re.match(r'[A-Za-z@]', name):
                    # a control word eats the spaces after it (not a newline + blank line)
                    k2 = k
                    while k2 < n and s[k2] in ' \t':
                        k2 += 1
                    if k2 < n and s[k2] == '\n' and not s.startswith('\n\n', k2) and \
                            not re.match(r'\n\s*\n', s[k2:k2 + 20]):
                        k2 += 1
                        while k2 < n and s[k2] in ' \t':
                            k2 += 1
                    eat = k2
                else:
                    eat = k
                r = self.command(name, s, k, eat)
                if r is None:
                    i = eat
                    continue
                kind, h, i = r
                if kind == 'b':
                    flush()
                    out.append(('b', h))
                elif kind == 'p':
                    flush()
                    out.append(('p', ''))
                else:
                    buf.append(h)
                continue
            if c == '$':
                if s.startswith('$$', i):
                    e = s.find('$$', i + 2)
                    flush()
                    out.append(('b', display_html(prepare_math(s[i + 2:e], self.ctx))))
                    i = e + 2
                    continue
                e = i + 1
                while True:
                    e = s.find('$', e)
                    if s[e - 1] == '\\':
                        e += 1
                        continue
                    break
                buf.append(mathspan(prepare_math(s[i + 1:e], self.ctx)))
                i = e + 1
                continue
            if c == '%':
                e = s.find('\n', i)
                if e < 0:
                    e = n
                # a comment also eats the newline and the next line's leading spaces
                i = e + 1
                while i < n and s[i] in ' \t':
                    i += 1
                continue
            if c == '\n':
                m = re.match(r'\n[ \t]*(\n[ \t]*)+', s[i:])
                if m:
                    if block:
                        flush()
                        out.append(('p', ''))
                    else:
                        buf.append(' ')
                    i += len(m.group(0))
                    continue
                buf.append('\n')
                i += 1
                continue
            if c == '{':
                g, i = read_group(s, i)
                sub = self.convert(g, block=False)
                buf.append(sub)
                continue
            if c == '}':
                i += 1
                continue
            if c == '~':
                buf.append('&#xA0;')
                i += 1
                continue
            if c == '\x01':
                e = s.index('\x01', i + 1)
                buf.append('<code class="q">%s</code>' % code_html(quotes[int(s[i + 1:e])], self.ctx.page['stem'], True))
                i = e + 1
                continue
            if c == '\x02':
                e = s.index('\x02', i + 1)
                flush()
                out.append(('b', self.ctx.page['chunks'][int(s[i + 1:e])]))
                i = e + 1
                continue
            lig = next((l for l in LIGATURES if s.startswith(l[0], i)), None)
            if lig:
                buf.append(lig[1])
                i += len(lig[0])
                continue
            j = i
            while j < n and s[j] not in '\\$%\n{}~\x01\x02-`\'&<>':
                j += 1
            if j == i:
                buf.append(esc(s[i]))
                j = i + 1
            else:
                buf.append(s[i:j])
            i = j
        flush()
        if not block:
            return ''.join(h for kind, h in out if kind != 'p')
        html_ = []
        para = []
        for kind, h in out:
            if kind == 'i':
                para.append(h)
            else:
                text = ''.join(para).strip()
                if text and ANCHORS_ONLY.match(text):
                    html_.append('<div class="anchors">%s</div>\n' % text)
                elif text:
                    html_.append('<p>%s</p>\n' % text)
                para = []
                if kind == 'b':
                    html_.append(h)
        text = ''.join(para).strip()
        if text:
            html_.append('<p>%s</p>\n' % text)
        return ''.join(html_)

    def label(self, name):
        page = self.ctx.page
        if name in labels:
            warn('label defined twice: ' + name)
        labels[name] = (self.ctx.current, page['stem'], name)
        return '<span class="anchor" id="%s"></span>' % attr(name)

    def command(self, name, s, k, eat):
        """Returns (kind, html, next index) or None (nothing to output; continue at eat)."""
        ctx = self.ctx
        page = ctx.page
        if name in ('chapter', 'section', 'subsection', 'subsubsection', 'part'):
            star = s.startswith('*', k)
            if star:
                k += 1
            opt, k = read_opt(s, k)
            title, k = read_arg(s, k)
            th = self.convert(title, block=False)
            if name == 'part':
                parts.append([ROMAN[len(parts)], th, None])
                page['part_title'] = th
                ctx.current = ROMAN[len(parts) - 1]
                return ('b', '', k)
            if name == 'chapter':
                page['title'] = th
                ctx.current = page['number']
                lead = ('Appendix %s' if page['kind'] == 'appendix' else 'Chapter %s') % page['number']
                return ('b', '<h1><span class="num">%s</span> %s</h1>\n' % (lead, th), k)
            level = {'section': 2, 'subsection': 3, 'subsubsection': 4}[name]
            # a section's id is sec-N (the contents link to it), a heading below it sec-N-M:
            # one id per heading (sec-N for both once sent the link to 16.3 to 16.2.1)
            if level == 2:
                anchor = 'sec-%d' % (len(page['sections']) + 1)
                page['subheadings'] = 0
            else:
                page['subheadings'] = page.get('subheadings', 0) + 1
                anchor = 'sec-%d-%d' % (len(page['sections']), page['subheadings'])
            if star:
                num = ''
            else:
                cnt = page['counters']
                if name == 'section':
                    cnt['section'] += 1
                    cnt['subsection'] = 0
                    num = '%s.%d' % (page['number'], cnt['section'])
                else:
                    cnt['subsection'] += 1
                    num = '%s.%d.%d' % (page['number'], cnt['section'], cnt['subsection'])
                ctx.current = num
            if level == 2:
                page['sections'].append((num, th, anchor))
                ctx.in_exercises = (title.strip() == 'Exercises')
            # the heading's own link (shown on hover or focus), to copy or to share
            link = '<a class="hanchor" href="#%s" aria-label="Link to this section">&#xA7;</a>' % anchor
            return ('b', '<h%d id="%s">%s%s%s</h%d>\n' % (level, anchor, '<span class="num">%s</span> ' % num if num else '',
                                                      th, link, level), k)
        if name == 'paragraph':
            if s.startswith('*', k):
                k += 1
            title, k = read_arg(s, k)
            entry = solution_entry_id(title) if page and page.get('stem') == 'solutions' else None
            return ('i', '<strong class="para"%s>%s</strong> ' % (
                ' id="%s"' % attr(entry) if entry else '', self.convert(title, block=False)), k)
        if name == 'label':
            lab, k = read_arg(s, k)
            return ('i', self.label(lab.strip()), k)
        if name in ('ref', 'eqref', 'pageref', 'autoref', 'cref'):
            lab, k = read_arg(s, k)
            lab = lab.strip()
            a = '<a class="ref" href="\x03%s\x03">\x04%s\x04</a>' % (lab, lab)
            if name == 'eqref':
                a = '(' + a + ')'
            return ('i', a, k)
        if name == 'cite':
            opt, k = read_opt(s, k)
            keys, k = read_arg(s, k)
            items = []
            for key in keys.split(','):
                key = key.strip()
                if key not in bib_number:
                    warn('unknown citation ' + key)
                items.append('<a class="cite" href="bibliography.html#bib-%s">%s</a>' % (attr(key), bib_number.get(key, '?')))
            return ('i', '[%s%s]' % (', '.join(items), ', ' + self.convert(opt, block=False) if opt else ''), k)
        if name == 'url':
            u, k = read_group(s, k)
            return ('i', '<a href="%s">%s</a>' % (attr(u), esc(u)), k)
        if name == 'href':
            u, k = read_group(s, k)
            t, k = read_arg(s, k)
            return ('i', '<a href="%s">%s</a>' % (attr(u), self.convert(t, block=False)), k)
        if name in WRAP:
            arg, k = read_arg(s, eat if name not in ('text',) else k)
            tag = WRAP[name]
            return ('i', '<%s>%s</%s>' % (tag, self.convert(arg, block=False), tag.split()[0]), k)
        if name in ('texorpdfstring',):
            a, k = read_arg(s, k)
            b, k = read_arg(s, k)
            return ('i', self.convert(a, block=False), k)
        if name == 'footnote':
            a, k = read_arg(s, k)
            return ('i', '<span class="footnote">(%s)</span>' % self.convert(a, block=False), k)
        if name in ('addcontentsline',):
            a, k = read_arg(s, k)
            b, k = read_arg(s, k)
            c, k = read_arg(s, k)
            return ('i', '', k)
        if name in ('hspace', 'vspace', 'setlength', 'addtolength', 'hspace*', 'vspace*'):
            if s.startswith('*', k):
                k += 1
            a, k = read_arg(s, k)
            if name in ('setlength', 'addtolength'):
                b, k = read_arg(s, k)
            return ('i', ' ' if name.startswith('hspace') else '', k)
        if name == 'appendix':
            return None
        if name == 'ensuremath':
            a, k = read_arg(s, k)
            return ('i', mathspan(prepare_math(a, ctx)), k)
        if name == 'chapterguide':
            a, k = read_arg(s, k)
            b, k = read_arg(s, k)
            return ('b', '<blockquote class="guide"><p><strong>You will be able to:</strong> %s</p>'
                    '<p><strong>You need first:</strong> %s</p></blockquote>\n'
                    % (self.convert(a, block=False), self.convert(b, block=False)), k)
        if name == 'item':
            return None
        if name == '\\':
            opt, k = read_opt(s, k)
            return ('i', '<br>', k)
        if name in ('(', '['):
            e = s.index('\\)' if name == '(' else '\\]', k)
            tex = prepare_math(s[k:e], ctx)
            if name == '(':
                return ('i', mathspan(tex), e + 2)
            return ('b', display_html(tex), e + 2)
        if name == 'begin':
            env, k = read_group(s, k)
            return self.environment(env, s, k)
        if name == 'end':
            env, k = read_group(s, k)
            warn('stray \\end{%s}' % env)
            return ('i', '', k)
        if name in IGNORED:
            return None
        if name in SIMPLE:
            return ('i', SIMPLE[name], eat if re.match('[A-Za-z]', name) else k)
        if name in ACCENTS:
            a, k = read_arg(s, k)
            a = html.unescape(self.convert(a, block=False))
            return ('i', esc(a[:1] + ACCENTS[name] + a[1:]), k)
        if name == 'caption':
            opt, k = read_opt(s, k)
            a, k = read_arg(s, k)
            return ('i', self.convert(a, block=False), k)
        if name in ('multicolumn',):
            a, k = read_arg(s, k)
            b, k = read_arg(s, k)
            c, k = read_arg(s, k)
            return ('i', self.convert(c, block=False), k)
        if name in ('cmidrule',):
            opt, k = read_opt(s, k)
            if s.startswith('(', k):
                k = s.index(')', k) + 1
            a, k = read_arg(s, k)
            return ('i', '', k)
        warn('unknown command \\' + name)
        return None

    def env_body(self, env, s, k):
        """The text up to the matching \\end{env}."""
        depth = 1
        pat = re.compile(r'\\(begin|end)\{%s\}' % re.escape(env))
        pos = k
        while True:
            m = pat.search(s, pos)
            if not m:
                raise ValueError('no \\end{%s}' % env)
            depth += 1 if m.group(1) == 'begin' else -1
            if depth == 0:
                return s[k:m.start()], m.end()
            pos = m.end()

    def environment(self, env, s, k):
        saved = self.ctx.current
        try:
            return self.environment1(env, s, k)
        finally:
            self.ctx.current = saved

    def environment1(self, env, s, k):
        ctx = self.ctx
        page = ctx.page
        body, k = self.env_body(env, s, k)
        if env == 'verbatim':
            return ('b', '<pre class="verbatim">%s</pre>\n' % esc(body.strip('\n')), k)
        if env in MATH_ENVS:
            return ('b', self.display_math(env, body), k)
        if env in ('itemize', 'enumerate', 'description'):
            opt, _ = read_opt(body, 0)
            return ('b', self.listing(env, body), k)
        if env in ('quote', 'quotation'):
            return ('b', '<blockquote>%s</blockquote>\n' % self.convert(body), k)
        if env in ('center', 'flushleft', 'minipage'):
            if env == 'minipage':
                _, j = read_opt(body, 0)
                _, j = read_arg(body, j)
                body = body[j:]
            return ('b', '<div class="center">%s</div>\n' % self.convert(body), k)
        if env == 'mistakes':
            return ('b', '<div class="box mistakes"><p><strong>Common mistakes.</strong></p>%s</div>\n' % self.convert(body), k)
        if env == 'concept':
            title, j = read_arg(body, 0)
            return ('b', '<div class="box concept"><p><strong>%s.</strong></p>%s</div>\n'
                    % (self.convert(title, block=False), self.convert(body[j:])), k)
        if env == 'tabular':
            return ('b', self.tabular(body), k)
        if env == 'table':
            _, j = read_opt(body, 0)
            page['counters']['table'] += 1
            ctx.current = '%s.%d' % (page['number'], page['counters']['table'])
            num = ctx.current
            cap = re.search(r'\\caption(\[[^\]]*\])?\{', body)
            caption = ''
            if cap:
                ctext, e = read_group(body, cap.end() - 1)
                body = body[:cap.start()] + body[e:]
                caption = '<figcaption><span class="num">Table %s:</span> %s</figcaption>' % (
                    num, self.convert(ctext, block=False))
            # the labels at the table's top, where a link to it should land
            labs = ''.join(self.label(l) for l in re.findall(r'\\label\{([^}]*)\}', body))
            body = re.sub(r'\\label\{[^}]*\}', '', body)
            inner = self.convert(body[j:])
            return ('b', '<figure class="table"><div class="anchors">%s</div>%s%s</figure>\n'
                    % (labs, caption, inner), k)
        if env == 'webfigure':
            n, j = read_arg(body, 0)
            n = int(n)
            page['counters']['figure'] += 1
            ctx.current = '%s.%d' % (page['number'], page['counters']['figure'])
            num = ctx.current
            figures[n]['number'] = num
            cap = re.search(r'\\caption(\[[^\]]*\])?\{', body)
            ctext, e = read_group(body, cap.end() - 1)
            names = re.findall(r'\\label\{([^}]*)\}', body)
            labs = ''.join(self.label(l) for l in names)
            cap_html = self.convert(ctext, block=False)
            # The image links to its SVG, which opens full size (on a phone the figure shrinks
            # to half its size); figures.sh adds width and height once it has drawn the SVG.
            src = 'fig/fig-%d.svg' % (n + 1)
            # A figure the live edition redraws links to its live page, which links back.
            live = ''.join(' <a class="fig-live" href="live/%s">%s</a>' % (attr(LIVE_FIGURES[l][0]),
                                                                        esc(LIVE_FIGURES[l][1]))
                           for l in names if l in LIVE_FIGURES)
            for l in names:
                figure_files[l] = {'number': num, 'svg': src, 'page': page['stem']}
            return ('b', '<figure class="fig"><div class="anchors">%s</div>'
                    '<a class="fig-full" href="%s" title="Open the figure full size">'
                    '<img src="%s" alt="%s" loading="lazy" decoding="async"></a>'
                    '<figcaption><span class="num">Figure %s:</span> %s '
                    '<a class="fig-open" href="%s">Full size</a>%s</figcaption></figure>\n'
                    % (labs, src, src, attr(alt_text(cap_html)), num, cap_html, src, live), k)
        if env in ('tikzpicture', 'scope'):
            warn('tikzpicture outside a figure')
            return ('b', '', k)
        if env == 'framed':
            return ('b', '<div class="box">%s</div>\n' % self.convert(body), k)
        warn('unknown environment ' + env)
        return ('b', self.convert(body), k)

    def display_math(self, env, body):
        ctx = self.ctx
        page = ctx.page
        numbered = not env.endswith('*') and env != 'displaymath'
        body = prepare_math(body, ctx)
        if env in ('equation', 'equation*', 'displaymath'):
            rows = [body]
        else:
            rows = split_rows(body)
        out = []
        anchors = []
        if env in ('equation', 'equation*', 'displaymath', 'multline', 'multline*') or not numbered:
            labs = re.findall(r'\\label\{([^}]*)\}', body)
            tex = re.sub(r'\\label\{[^}]*\}', '', body)
            tag = None
            if numbered and not re.search(r'\\(nonumber|notag)\b', tex):
                page['counters']['equation'] += 1
                tag = '%s.%d' % (page['number'], page['counters']['equation'])
                ctx.current = tag
            if env.startswith('align'):
                tex = '\\begin{aligned}%s\\end{aligned}' % tex
            elif env.startswith('gather'):
                tex = '\\begin{gathered}%s\\end{gathered}' % tex
            elif env.startswith('multline'):
                tex = '\\begin{gathered}%s\\end{gathered}' % tex
            for l in labs:
                anchors.append(self.label(l))
            return display_html(tex, ''.join(anchors), tag)
        # numbered align/gather: one display per row, each with its number
        for row in rows:
            if not row.strip():
                continue
            labs = re.findall(r'\\label\{([^}]*)\}', row)
            tex = re.sub(r'\\label\{[^}]*\}', '', row)
            tag = None
            if not re.search(r'\\(nonumber|notag)\b', tex):
                page['counters']['equation'] += 1
                tag = '%s.%d' % (page['number'], page['counters']['equation'])
                ctx.current = tag
            tex = re.sub(r'\\(nonumber|notag)\b', '', tex)
            if '&' in tex:
                tex = '\\begin{aligned}%s\\end{aligned}' % tex
            a = ''.join(self.label(l) for l in labs)
            out.append(display_html(tex, a, tag))
        return ''.join(out)

    def listing(self, env, body):
        ctx = self.ctx
        page = ctx.page
        tag = {'itemize': 'ul', 'enumerate': 'ol', 'description': 'dl'}[env]
        items = split_items(body)
        out = ['<%s%s>' % (tag, ' class="exercises"' if ctx.in_exercises and env == 'enumerate' else '')]
        n = 0
        # an item's number as \ref prints it in the PDF (book.tex): with its chapter, 9.1,
        # and a nested item with its parent's, 9.1a
        outer = getattr(ctx, 'enum_item', None)
        for opt, text in items:
            n += 1
            if env == 'enumerate':
                ctx.current = ('%s.%d' % (page['number'], n)) if outer is None else outer + chr(96 + n)
                ctx.enum_item = ctx.current
            labs = re.findall(r'\\label\{(ex:[^}]*)\}', text)
            h = self.convert(text)
            if env == 'description':
                entry = solution_entry_id(opt) if page.get('stem') == 'solutions' else None
                out.append('<dt%s>%s</dt><dd>%s</dd>' % (' id="%s"' % attr(entry) if entry else '',
                                                         self.convert(opt or '', block=False), h))
                continue
            extra = ''
            if env == 'enumerate' and labs:
                page['counters']['exercise'] += 1
                for lab in labs:
                    if lab not in solutions:
                        warn('exercise %s has no solution in the appendix (book/solutions.nw)' % lab)
                        continue
                    extra += ('<details class="solution"><summary>Solution</summary>%s'
                              '<p class="sollink"><a href="solutions.html#%s">This solution in '
                              'Appendix %s</a></p></details>'
                              % (sol_placeholder(lab), attr(solution_anchor[lab]),
                                 page_by_stem['solutions']['number']))
            out.append('<li%s>%s%s</li>\n' % (' value="%d"' % n if env == 'enumerate' else '', h, extra))
        if env == 'enumerate':
            ctx.enum_item = outer
        out.append('</%s>\n' % tag)
        return ''.join(out)

    def tabular(self, body):
        spec, j = read_arg(body, 0)
        body = body[j:]
        aligns = []
        sp = spec
        sp = re.sub(r'@\{[^{}]*\}', '', sp)
        sp = re.sub(r'>\{[^{}]*(\{[^{}]*\}[^{}]*)*\}', '', sp)
        sp = re.sub(r'<\{[^{}]*\}', '', sp)
        t = 0
        while t < len(sp):
            ch = sp[t]
            if ch in 'lcr':
                aligns.append(ch)
            elif ch in 'pmb' and t + 1 < len(sp) and sp[t + 1] == '{':
                _, e = read_group(sp, t + 1)
                aligns.append('l')
                t = e
                continue
            t += 1
        rows = split_rows(body)
        out = ['<div class="tablewrap"><table>']
        rule_next = False
        for r in rows:
            rs = r.strip()
            rule = bool(re.match(r'(\\(toprule|midrule|hline|bottomrule|cmidrule)\b)', rs))
            rs2 = re.sub(r'\\(toprule|midrule|hline|bottomrule)\b', '', rs)
            rs2 = re.sub(r'\\cmidrule(\([^)]*\))?\{[^}]*\}', '', rs2).strip()
            if not rs2:
                rule_next = rule_next or rule
                continue
            cells = split_cells(rs2)
            tds = []
            col = 0
            for cell in cells:
                m = re.match(r'\s*\\multicolumn\{(\d+)\}', cell)
                span = 1
                al = aligns[col] if col < len(aligns) else 'l'
                if m:
                    span = int(m.group(1))
                    _, e = read_group(cell, cell.index('{', m.end()))
                    spec2, _ = read_group(cell, m.end() + cell[m.end():].index('{'))
                    al = 'c' if 'c' in spec2 else 'r' if 'r' in spec2 else 'l'
                    cont, _ = read_group(cell, skip_ws(cell, e))
                    cell = cont
                col += span
                tds.append('<td class="%s"%s>%s</td>' % (al, ' colspan="%d"' % span if span > 1 else '',
                                                         self.convert(cell.strip(), block=False)))
            cls = ' class="rule"' if (rule or rule_next) else ''
            rule_next = False
            out.append('<tr%s>%s</tr>' % (cls, ''.join(tds)))
        out.append('</table></div>\n')
        return ''.join(out)


def top_level_split(s, sep_re):
    """Split s at sep_re outside braces and math."""
    parts_ = []
    last = 0
    in_math = False
    for i, c, depth in brace_walk(s, 0):
        if i < last:
            continue
        if c == '$':
            in_math = not in_math
        elif depth == 0 and not in_math:
            m = sep_re.match(s, i)
            if m:
                parts_.append(s[last:i])
                last = m.end()
    parts_.append(s[last:])
    return parts_


ROW_SEP = re.compile(r'\\\\(\s*\[[^\]]*\])?')
CELL_SEP = re.compile(r'&')


def split_rows(s):
    # environments nested in a row (cases, pmatrix) keep their \\: protect them first
    prot = []

    def keep(m):
        prot.append(m.group(0))
        return '\x06%d\x06' % (len(prot) - 1)
    s2 = s
    for _ in range(3):
        s2 = re.sub(r'\\begin\{(\w+\*?)\}(?:(?!\\begin\{).)*?\\end\{\1\}', keep, s2, flags=re.S)
    rows = top_level_split(s2, ROW_SEP)

    def restore(t):
        while '\x06' in t:
            t = re.sub(r'\x06(\d+)\x06', lambda m: prot[int(m.group(1))], t)
        return t
    return [restore(r) for r in rows]


def split_cells(s):
    return top_level_split(s, CELL_SEP)


def split_items(body):
    """[(optional label, text)] of a list's \\item's (nested lists stay whole)."""
    items = []
    depth = 0
    pos = 0
    starts = []
    for m in re.finditer(r'\\(begin|end)\{(itemize|enumerate|description)\}|\\item\b', body):
        if m.group(1) == 'begin':
            depth += 1
        elif m.group(1) == 'end':
            depth -= 1
        elif depth == 0:
            starts.append(m)
    for n, m in enumerate(starts):
        end = starts[n + 1].start() if n + 1 < len(starts) else len(body)
        text = body[m.end():end]
        opt, j = read_opt(text, 0)
        items.append((opt, text[j:] if opt is not None else text))
    return items


def inline_latex(s, here):
    page = page_by_stem.get(here)
    return Converter(Ctx(page)).convert(s, block=False)


# ------------------------------------------------------------------ solutions
solutions = {}        # ex:label -> LaTeX of the solution (from solutions.nw)
solution_html = {}


def sol_placeholder(lab):
    return '\x07%s\x07' % lab


# Each exercise carries its solution, folded under it, and a link to its entry in the
# appendix. The appendix once wrote some solutions as \\item[\\ref{ex:...}] of a description
# list, which a reader of \\paragraph{Exercise~\\ref{ex:...}} alone passed over, so that 25
# exercises silently lost theirs: both forms are read, and an exercise without a solution
# is a warning, which fails the build.
SOLUTION_HEAD = re.compile(r'\\paragraph\*?\{(Exercises?~(?:[^{}]|\{[^{}]*\})*)\}'
                           r'|\\item\[((?:[^\]{}]|\{[^{}]*\})*\\ref\{ex:[^\]]*)\]')
# where a solution ends: at the next solution's heading, section or chapter; a list's item
# also at the list's end
SOLUTION_END = {'paragraph': re.compile(r'\\paragraph\*?\{Exercise|\\(sub)*section\b|\\chapter\b'),
                'item': re.compile(r'\\item\[[^\]]*\\ref\{ex:|\\end\{(description|enumerate|itemize)\}'
                                   r'|\\(sub)*section\b|\\chapter\b')}
solution_anchor = {}  # ex:label -> id of its entry in the appendix


def collect_solutions(text):
    for m in SOLUTION_HEAD.finditer(text):
        end = SOLUTION_END['paragraph' if m.group(1) else 'item'].search(text, m.end())
        body = text[m.end():end.start() if end else len(text)]
        labs = re.findall(r'\\ref\{(ex:[^}]*)\}', m.group(1) or m.group(2))
        for lab in labs:
            solutions[lab] = body
            solution_anchor[lab] = 'sol-' + labs[0]


def solution_entry_id(title):
    """The id of a solution's entry in the appendix, from its heading's LaTeX (or None)."""
    labs = re.findall(r'\\ref\{(ex:[^}]*)\}', title or '')
    return solution_anchor.get(labs[0]) if labs else None


sol_file = [f for f in files if stem(f[0]) == 'solutions']
if sol_file:
    collect_solutions(''.join(it if kind == 'docs' else '' for kind, it in sol_file[0][1]))

# ------------------------------------------------------------------ the chapters
page_by_stem = {}
chapter_no = 0
appendix_no = 0
in_appendix = False
fig_serial = 0
pending_part = None
file_page = {}
for fname, items in files:
    st = stem(fname)
    docs_all = ''.join(it for kind, it in items if kind == 'docs')
    has_chapter = re.search(r'\\chapter(?![A-Za-z])', docs_all)
    if re.search(r'^\\part\{', docs_all, re.M) and not has_chapter:
        pending_part = st
        page = {'stem': st, 'kind': 'part', 'number': ROMAN[len(parts)], 'sections': [], 'chunks': [],
                'counters': {'section': 0, 'subsection': 0, 'figure': 0, 'table': 0, 'equation': 0, 'exercise': 0}}
        ctx = Ctx(page)
        conv = Converter(ctx)
        conv.convert(expand(docs_all))
        parts[-1][2] = re.search(r'\\label\{([^}]*)\}', docs_all).group(1) if re.search(r'\\label\{', docs_all) else None
        if parts[-1][2]:
            labels[parts[-1][2]] = (parts[-1][0], None, None)
        continue
    if not has_chapter and pages:
        # a file without a chapter of its own continues the chapter before it
        page = pages[-1]
        page['items'].extend(items)
        file_page[st] = page['stem']
    else:
        if '\\appendix' in docs_all:
            in_appendix = True
        if in_appendix:
            appendix_no += 1
            number = alpha(appendix_no)
        else:
            chapter_no += 1
            number = str(chapter_no)
        page = {'stem': st, 'kind': 'appendix' if in_appendix else 'chapter', 'number': number,
                'sections': [], 'chunks': [], 'part': len(parts) - 1, 'title': st, 'items': list(items),
                'serial': 0,
                'counters': {'section': 0, 'subsection': 0, 'figure': 0, 'table': 0, 'equation': 0, 'exercise': 0}}
        page_by_stem[st] = page
        pages.append(page)
        file_page[st] = st
    for kind, it in items:
        if kind == 'code':
            page['serial'] += 1
            chunk_serial[it.label] = '%s.%d' % (page['number'], page['serial'])
for fname, items in files:
    for kind, it in items:
        if kind == 'code':
            label_page[it.label] = file_page[stem(fname)]

for page in pages:
    st = page['stem']
    items = page['items']
    text = []
    for kind, it in items:
        if kind == 'docs':
            text.append(it)
        else:
            page['chunks'].append(chunk_html(it, st))
            text.append('\n\n\x02%d\x02\n\n' % (len(page['chunks']) - 1))
    text = ''.join(text)

    # the figures: their bodies go to LaTeX, their captions stay here
    def fig(m):
        global fig_serial
        body = m.group(1)
        cap = re.search(r'\\caption(\[[^\]]*\])?\{', body)
        ctext, e = read_group(body, cap.end() - 1)
        labs = re.findall(r'\\label\{[^}]*\}', body)
        settings = re.findall(r'\\input\{[^}]*-settings\.tex\}', body)
        drawing = body[:cap.start()] + body[e:]
        drawing = re.sub(r'\\label\{[^}]*\}', '', drawing)
        short = cap.group(1)[1:-1] if cap.group(1) else ctext
        figures.append({'page': st, 'body': drawing, 'number': None, 'short': short,
                        'anchor': labs[0][7:-1] if labs else ''})
        fig_serial += 1
        return '\\begin{webfigure}{%d}%s\\caption{%s}%s\\end{webfigure}' % (
            fig_serial - 1, ''.join(settings), ctext, ''.join(labs))
    text = re.sub(r'\\begin\{figure\}(?:\[[^\]]*\])?(.*?)\\end\{figure\}', fig, text, flags=re.S)
    text = expand(text)
    ctx = Ctx(page)
    conv = Converter(ctx)
    try:
        page['html'] = conv.convert(text)
    except Exception as ex:
        raise SystemExit('weave.py: %s: %s' % (st, ex))
    page['parttitle'] = parts[page['part']][1] if page['part'] >= 0 else ''

# the solutions folded under the exercises: converted in the solutions page's context
sol_page = page_by_stem.get('solutions')
for lab, tex in solutions.items():
    ctx = Ctx(sol_page)
    conv = Converter(ctx)
    saved = dict(labels)
    h = conv.convert(expand(tex))
    labels.clear()
    labels.update(saved)
    # ids belong to the solutions page's copy
    solution_html[lab] = re.sub(r' id="[^"]*"', '', h)
    solution_html[lab] = re.sub(r'href="#', 'href="solutions.html#', solution_html[lab])


def resolve(h, here):
    def ref(m):
        lab = m.group(1)
        if lab not in labels:
            warn('undefined reference ' + lab)
            return '#'
        num, pg, anchor = labels[lab]
        if pg is None:
            return 'index.html#part-' + num
        return ('' if pg == here else pg + '.html') + '#' + anchor

    def txt(m):
        lab = m.group(1)
        return labels[lab][0] if lab in labels else '??'
    h = re.sub('\x07([^\x07]*)\x07', lambda m: solution_html.get(m.group(1), ''), h)
    h = re.sub('\x03([^\x03]*)\x03', ref, h)
    h = re.sub('\x04([^\x04]*)\x04', txt, h)
    return h


# ------------------------------------------------------------------ writing the site
TITLE = 'The Annotated Transformer in C'


def toc_html(here=None, full=True):
    # full: the contents page, every chapter with its sections. Otherwise the side bar: the
    # chapters, and only the current chapter's sections (its section list, beside the text on a
    # wide screen, in the drawer on a phone).
    out = ['<ul class="toc">']
    part = None
    for p in pages:
        if p['part'] != part and p['kind'] == 'chapter':
            if part is not None:
                out.append('</ul></li>')
            part = p['part']
            out.append('<li class="part"%s><span>Part %s: %s</span><ul>' % (
                ' id="part-%s"' % parts[part][0] if full else '', parts[part][0], parts[part][1]))
        if p['kind'] == 'appendix' and part != 'app':
            out.append('</ul></li><li class="part"><span>Appendices</span><ul>')
            part = 'app'
        cur = ' class="current"' if p['stem'] == here else ''
        aria = ' aria-current="page"' if p['stem'] == here else ''
        out.append('<li%s><a href="%s.html"%s><span class="num">%s</span> %s</a>' % (
            cur, p['stem'], aria, p['number'], p['title']))
        if (full or p['stem'] == here) and p['sections']:
            out.append('<ul%s>' % ('' if full else ' class="sections" aria-label="Sections of this chapter"'))
            for num, th, anchor in p['sections']:
                # a heading's own links (Chapter 1 in the solutions' headings) would nest
                out.append('<li><a href="%s.html#%s">%s</a></li>' % (p['stem'], anchor,
                           ('<span class="num">%s</span> ' % num if num else '') +
                           re.sub(r'</?a\b[^>]*>', '', th)))
            out.append('</ul>')
        out.append('</li>')
    out.append('</ul></li>')
    for st, t in (('bibliography', 'Bibliography'), ('chunks', 'Index of chunks'), ('identifiers', 'Index of identifiers')):
        cur = ' class="current"' if st == here else ''
        out.append('<li%s><a href="%s.html">%s</a></li>' % (cur, st, t))
    out.append('</ul>')
    return ''.join(out)


# The page's frame. A sticky bar (contents, previous, next, search) stays at the top; the side
# bar holds the search box, the contents with the current chapter's sections and the links to
# the PDF and its sources (tools/html/build copies both into the site). On a phone the side bar
# is a drawer that the bar's Contents button opens (book.js); without JavaScript that button is
# a link to the contents page. A skip link leads past the frame to the text. The search box
# (search.js) shows only where the script runs.
def write_page(st, title, body, prev=None, nxt=None):
    bar = ['<a class="menu" href="index.html" aria-controls="side" aria-expanded="false">'
           '<span aria-hidden="true">&#x2630;</span> Contents</a>']
    bar.append('<a rel="prev" href="%s.html" title="%s">&#x2190; <span class="lbl">Previous</span></a>' % (prev[0], prev[1].replace('"', '&quot;'))
               if prev else '<span class="nolink"></span>')
    bar.append('<a rel="next" href="%s.html" title="%s"><span class="lbl">Next</span> &#x2192;</a>' % (nxt[0], nxt[1].replace('"', '&quot;'))
               if nxt else '<span class="nolink"></span>')
    barh = '<header class="bar">%s</header>' % ''.join(bar)
    nav = ['<a href="index.html">Contents</a>']
    if prev:
        nav.insert(0, '<a rel="prev" href="%s.html">&#x2190; %s</a>' % prev)
    if nxt:
        nav.append('<a rel="next" href="%s.html">%s &#x2192;</a>' % nxt)
    navh = '<nav class="pn" aria-label="Previous and next">%s</nav>' % ' <span class="sep">|</span> '.join(nav)
    search = ('<form class="search" role="search" hidden>'
              '<input type="search" name="q" id="search-q" placeholder="Search the book" '
              'aria-label="Search the book (text, chunk names, identifiers)" autocomplete="off">'
              '<div class="results" id="search-results" aria-live="polite"></div></form>')
    files = ('<p class="files"><a href="transformer.pdf">The book as PDF</a> '
             '<a href="sources.tar.gz">Its sources (tar.gz)</a></p>')
    doc = '''<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s &#x2014; %s</title>
<link rel="icon" href="favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="katex/katex.min.css">
<link rel="stylesheet" href="style.css">
<script defer src="book.js"></script>
<script defer src="search.js"></script>
</head>
<body>
<a class="skip" href="#text">Skip to the text</a>
%s
<nav class="side" id="side" aria-label="Contents"><a class="home" href="index.html">%s</a>%s%s%s</nav>
<main id="text" tabindex="-1">
%s
%s
%s
</main>
<a class="totop" href="#" aria-label="Back to the top">&#x2191; Top</a>
</body>
</html>
''' % (re.sub('<[^>]*>', '', title), TITLE, barh, TITLE, search, toc_html(st, full=False), files,
       navh, body, navh)
    with open(os.path.join(OUT, st + '.html'), 'w', encoding='utf-8') as fh:
        fh.write(resolve(doc, st))


os.makedirs(OUT, exist_ok=True)
seq = [(p['stem'], '%s %s' % (p['number'], re.sub('<[^>]*>', '', p['title']))) for p in pages] + \
      [('bibliography', 'Bibliography'), ('chunks', 'Index of chunks'), ('identifiers', 'Index of identifiers')]
for n, p in enumerate(pages):
    prev = seq[n - 1] if n > 0 else ('index', 'Contents')
    write_page(p['stem'], p['title'], p['html'], prev, seq[n + 1])

# bibliography
ctx = Ctx({'stem': 'bibliography', 'number': '', 'chunks': [], 'sections': [],
           'counters': {'section': 0, 'subsection': 0, 'figure': 0, 'table': 0, 'equation': 0, 'exercise': 0}})
page_by_stem['bibliography'] = ctx.page
items = ''.join('<li id="bib-%s" value="%d">%s</li>\n' % (attr(k), n + 1, Converter(ctx).convert(expand(t), block=False))
                for n, (k, t) in enumerate(bib))
write_page('bibliography', 'Bibliography', '<h1>Bibliography</h1>\n<ol class="bib">%s</ol>' % items,
           seq[len(pages) - 1], seq[len(pages) + 1])

# index of chunks: every chunk name, its definitions and uses
names = {}
for fname, its in files:
    for kind, it in its:
        if kind == 'code':
            names.setdefault(it.name, {'defs': [], 'uses': set()})
            names[it.name]['defs'].append(it.label)
            for seg in it.segs:
                if seg[0] == 'use':
                    names.setdefault(seg[1], {'defs': [], 'uses': set()})
                    names[seg[1]]['uses'].add(it.label)
rows = []
for name in sorted(names, key=lambda s: s.lower()):
    d = names[name]
    if not d['defs']:
        continue
    rows.append('<li>&#x27E8;<a href="%s">%s</a>&#x27E9; %s%s</li>' % (
        href(d['defs'][0], 'chunks'), chunk_name_html(name, 'chunks'),
        ', '.join('<a href="%s">%s</a>' % (href(l, 'chunks'), chunk_ref_text(l)) for l in d['defs']),
        ('; used in ' + ', '.join('<a href="%s">%s</a>' % (href(l, 'chunks'), chunk_ref_text(l)) for l in sorted(d['uses'], key=lambda l: [int(x) if x.isdigit() else x for x in re.split(r'(\d+)', chunk_ref_text(l))]))) if d['uses'] else ''))
write_page('chunks', 'Index of chunks', '<h1>Index of chunks</h1>\n<p>Each chunk with the numbers of its '
           'definitions (chapter.chunk) and of the chunks that use it.</p><ul class="index">%s</ul>' % '\n'.join(rows),
           seq[len(pages)], seq[len(pages) + 2])

# index of identifiers
idents = {}
for fname, its in files:
    for kind, it in its:
        if kind == 'code':
            for ident, uses in it.defines:
                idents.setdefault(ident, (it.label, uses))
rows = []
letters = {}   # initial (A-Z, or _ for the rest) -> id of its first identifier's row


def initial(ident):
    c = ident[:1].upper()
    return c if 'A' <= c <= 'Z' else '_'


for ident in sorted(idents, key=lambda s: s.lower()):
    lab, uses = idents[ident]
    first = initial(ident) not in letters
    if first:
        letters[initial(ident)] = 'letter-' + initial(ident)
    rows.append('<li%s><a href="%s"><code>%s</code></a> %s%s</li>' % (
        ' id="%s"' % letters[initial(ident)] if first else '',
        href(lab, 'identifiers'), esc(ident), chunk_ref_text(lab),
        ('; used in ' + ', '.join('<a href="%s">%s</a>' % (href(l, 'identifiers'), chunk_ref_text(l)) for l in dict.fromkeys(uses))) if uses else ''))
# the A-Z bar: a letter no identifier starts with is shown, not linked
az = ''.join('<a href="#%s">%s</a>' % (letters[c], c) if c in letters else '<span>%s</span>' % c
             for c in 'ABCDEFGHIJKLMNOPQRSTUVWXYZ' + ('_' if '_' in letters else ''))
write_page('identifiers', 'Index of identifiers', '<h1>Index of identifiers</h1>\n<p>Each identifier with the '
           'chunk that defines it and the chunks that use it.</p>'
           '<nav class="az" aria-label="Identifiers by initial">%s</nav><ul class="index">%s</ul>'
           % (az, '\n'.join(rows)), seq[len(pages) + 1], None)

# the index page
version = macros.get('transformerversion', (0, ''))[1]
figlist = ''.join('<li><a href="%s.html#%s"><span class="num">%s</span> %s</a></li>' % (
    file_page.get(f['page'], f['page']), attr(f['anchor']), f['number'],
    Converter(Ctx(page_by_stem[file_page.get(f['page'], f['page'])])).convert(expand(f['short']), block=False))
    for f in figures)
index = '''<h1>%s</h1>
<p class="subtitle">A literate program: the book is the trainer. Version %s.</p>
<p>This is the web edition of the book, woven from the same chapters (<code>book/*.nw</code>), figures and
bibliography as the PDF. Code chunks link to their definitions and uses, identifiers to the chunk that
defines them. Code: MIT licence; text: CC BY 4.0.</p>
<p>The live edition runs the book's own program, compiled to WebAssembly, in this browser:
<a href="live/figures.html">the figures</a> and <a href="live/lr.html">the learning-rate
schedule</a> redrawn with your settings, <a href="live/translate.html">the translator</a>
with its attention maps, and <a href="live/copy.html">the copy task</a> trained in the page
(each figure it redraws links to it from under its caption).</p>
<h2>Contents</h2>
%s
<h2>List of figures</h2>
<ul class="toc">%s</ul>''' % (TITLE, esc(version), toc_html(None, full=True), figlist)
write_page('index', 'Contents', index, None, seq[0])



def typeset_formulas():
    """Every formula of the book typeset by KaTeX in one node process (tools/html/
    katex-render.js), put in place of its placeholder in the written pages."""
    src = os.path.join(FIGWORK, 'formulas.json')
    dst = os.path.join(FIGWORK, 'formulas-html.json')
    with open(src, 'w', encoding='utf-8') as fh:
        json.dump(formulas, fh)
    subprocess.run(['node', os.path.join(ROOT, 'tools/html/katex-render.js'), src, dst], check=True)
    with open(dst, encoding='utf-8') as fh:
        typeset = json.load(fh)
    for (tex, display), h in zip(formulas, typeset):
        if 'katex-error' in h:
            warn('KaTeX cannot typeset: ' + tex)
    for name in os.listdir(OUT):
        if not name.endswith('.html'):
            continue
        path = os.path.join(OUT, name)
        with open(path, encoding='utf-8') as fh:
            doc = fh.read()
        # a title holds text only: there a formula stays TeX
        doc = re.sub(r'<title>.*?</title>', lambda m: FORMULA.sub(
            lambda f: esc(formulas[int(f.group(1))][0]), m.group(0)), doc, flags=re.S)
        doc = FORMULA.sub(lambda f: typeset[int(f.group(1))], doc)
        with open(path, 'w', encoding='utf-8') as fh:
            fh.write(doc)
    print('weave.py: %d formulas typeset by KaTeX' % len(formulas))


os.makedirs(FIGWORK, exist_ok=True)
typeset_formulas()

# the figures for LaTeX: one page each
os.makedirs(FIGWORK, exist_ok=True)
pre = PREAMBLE.replace('\\input{build/', '\\input{build/')
pre = re.sub(r'\\usepackage\[hidelinks\]\{hyperref\}', '', pre)
with open(os.path.join(FIGWORK, 'figures.tex'), 'w', encoding='utf-8') as fh:
    fh.write(pre.replace('\\documentclass[11pt,a4paper,openany]{book}', '\\documentclass[11pt]{book}'))
    fh.write('\\usepackage{varwidth}\\usepackage[active,tightpage]{preview}\n\\setlength\\PreviewBorder{4pt}\n'
             '\\input{figures/architecture.tex}\n\\begin{document}\n')
    for f in figures:
        fh.write('\\begin{preview}\\begin{varwidth}{15.5cm}%s\\end{varwidth}\\end{preview}\n' % f['body'])
    fh.write('\\end{document}\n')

# what the checks compare with the PDF
stats = {p['stem']: {'number': p['number'], 'title': re.sub('<[^>]*>', '', p['title']),
                     'sections': sum(1 for s in p['sections'] if s[0]),
                     'figures': p['counters']['figure'], 'tables': p['counters']['table'],
                     'equations': p['counters']['equation'], 'exercises': p['counters']['exercise']}
         for p in pages}
with open(os.path.join(FIGWORK, 'stats.json'), 'w') as fh:
    json.dump({'pages': stats, 'labels': {k: v[0] for k, v in labels.items()},
               'figures': len(figures), 'figure_files': figure_files}, fh, indent=1)
missing = sorted(set(LIVE_FIGURES) - set(figure_files))
if missing:
    warn('tools/live/figures.txt names figures the book does not have: ' + ' '.join(missing))
with open(os.path.join(FIGWORK, 'warnings.txt'), 'w') as fh:
    fh.write('\n'.join(sorted(set(warnings))) + '\n')
for w in sorted(set(warnings))[:20]:
    print('weave.py: warning: ' + w, file=sys.stderr)
print('weave.py: %d pages, %d figures, %d labels, %d warnings (%s)' % (
    len(pages) + 4, len(figures), len(labels), len(set(warnings)), os.path.join(FIGWORK, 'warnings.txt')))
