#!/bin/sh
# The web edition's figures: LaTeX draws every figure of the book (the gnuplot drawings of
# figures/*.tex, the TikZ pictures) from build/html-fig/figures.tex, which weave.py wrote
# with one figure a page; mutool (mupdf-tools) turns each page into an SVG.
#   mutool's text=text keeps the labels as <text> (selectable, searchable, a fraction of the
#   size of outlined glyphs; each glyph keeps its printed x position, so a fallback font
#   only changes the letters' shapes); the few math glyphs a text font cannot draw are
#   taken from its text=path drawing (BAD below). pdftocairo -svg, pdf2svg (cairo) and
#   dvisvgm --pdf all outline every glyph.
# Then, for the web only (the PDF's figures are untouched):
#   - the SVG drawn 1.3 times the printed size (the page's text is larger than the PDF's 11 pt);
#   - the Latin Modern font names get a fallback stack (an SVG shown by <img> loads no fonts);
#   - the heat maps' rasters (gnuplot `with image`, 5x5 to 20x20 px scaled up) are marked
#     image-rendering: pixelated, or the browser smooths the cells into blobs;
#   - each page's <img> of the figure gets its width and height (no layout shift).
# Usage: tools/html/figures.sh OUTDIR   (run from the repository's top directory)
set -eu
out=$1
work=build/html-fig
mkdir -p "$out/fig"
pdflatex -interaction=nonstopmode -halt-on-error -output-directory=$work $work/figures.tex \
  > $work/figures.out 2>&1 || { tail -30 $work/figures.out; exit 1; }
rm -f $work/fig-*.svg $work/path-*.svg
# mutool warns "ICC support is not available" on Debian's build: harmless, not shown.
# Both ways: the text kept as text, and outlined (path-N.svg) for the figures whose math a
# text font cannot draw (see FALLBACK below).
mutool convert -F svg -O text=text -o $work/fig-%d.svg $work/figures.pdf 2>&1 \
  | { grep -v 'ICC support' || true; }
mutool convert -F svg -O text=path -o $work/path-%d.svg $work/figures.pdf 2>&1 \
  | { grep -v 'ICC support' || true; }
/usr/bin/python3 - "$work" "$out" <<'EOF'
import glob, html, os, re, sys
work, out = sys.argv[1], sys.argv[2]
SCALE = 1.3
FONTS = [('LMSans', "'Latin Modern Sans', 'LM Sans 10', sans-serif"),
         ('LMMono', "'Latin Modern Mono', 'LM Mono 10', monospace"),
         ('LM', "'Latin Modern Roman', 'LM Roman 10', 'Times New Roman', serif")]

def fonts(m):
    return 'font-family="%s"' % next(stack for pre, stack in FONTS if m.group(1).startswith(pre))

def scale(m):
    return '%s="%.3fpt"' % (m.group(1), float(m.group(2)) * SCALE)

# Glyphs that a text font cannot put where TeX put them: U+FFFD, what mutool writes for
# cmex's big delimiters and radicals; cmsy's radical sign (TeX hangs it below the baseline
# and draws its bar as a rule) and prime (a superscript-sized glyph). Those glyphs alone are
# taken outlined from path-N.svg; the rest of the figure's text stays text.
BAD = re.compile('[\ufffd\u221a\u2032]')
MARK_SOME = '<!-- figures.sh: some glyphs outlined, math a text font cannot draw -->'
MARK_ALL = '<!-- figures.sh: text outlined, math a text font cannot draw -->'


def outline_glyphs(svg, path_svg):
    """The figure with its text as text, but for the glyphs BAD matches: those come from
    mutool's outlined drawing of the same page (text=path), matched by their origin. None if
    one cannot be matched (the caller then outlines the whole figure)."""
    uses = {}
    for m in re.finditer(r'<use data-text="[^"]*" xlink:href="#([^"]+)" transform="matrix\(([^)]*)\)"/>', path_svg):
        v = [float(x) for x in m.group(2).split(',')]
        uses.setdefault((round(v[4], 1), round(v[5], 1)), []).append(m.group(0))
    needed, missing = set(), []

    def one_text(m):
        e = float(m.group(1)) if m.group(1) else 0.0
        f = float(m.group(2))
        extra = []

        def one_tspan(t):
            y, xs, chars = float(t.group(1)), t.group(2).split(), html.unescape(t.group(3))
            if len(xs) != len(chars):
                missing.append(chars); return t.group(0)
            keep_x, keep_c = [], []
            for x, c in zip(xs, chars):
                if BAD.match(c):
                    key = (round(float(x) + e, 1), round(y + f, 1))
                    if key not in uses:
                        missing.append(c); continue
                    extra.extend(uses[key])
                    needed.update(re.findall(r'xlink:href="#([^"]+)"', ''.join(uses[key])))
                else:
                    keep_x.append(x); keep_c.append(c)
            if not keep_c:
                return ''
            return '<tspan y="%s" x="%s">%s</tspan>' % (t.group(1), ' '.join(keep_x), html.escape(''.join(keep_c), quote=False))
        body = re.sub(r'<tspan y="([^"]*)" x="([^"]*)">(.*?)</tspan>', one_tspan, m.group(0))
        return body + ''.join(extra)
    if not re.search(r'<text\b', svg):
        return None
    out = re.sub(r'<text xml:space="preserve" transform="matrix\(1 0 -?0 1 ([-\d.e]+) ([-\d.e]+)\)"[^>]*>.*?</text>',
                 lambda m: one_text(m) if BAD.search(html.unescape(m.group(0))) else m.group(0), svg, flags=re.S)
    if missing or BAD.search(html.unescape(''.join(re.findall(r'<text\b.*?</text>', out, re.S)))):
        return None
    defs = ''.join(re.findall(r'<path id="(?:%s)" [^>]*/>' % '|'.join(map(re.escape, needed)), path_svg))
    i = out.index('>', out.index('<svg')) + 1   # the glyphs' outlines first thing in the SVG
    return out[:i] + '\n<defs>\n' + defs + '\n</defs>' + out[i:]



sizes, rasters, outlined, some = {}, [], [], []
files = sorted(glob.glob(os.path.join(work, 'fig-*.svg')), key=lambda f: int(re.findall(r'\d+', f)[-1]))
for f in files:
    name = os.path.basename(f)
    svg = open(f, encoding='utf-8').read()
    if any(BAD.search(html.unescape(t)) for t in re.findall(r'<text\b.*?</text>', svg, re.S)):
        path_svg = open(f.replace('/fig-', '/path-'), encoding='utf-8').read()
        mixed = outline_glyphs(svg, path_svg)
        if mixed is None:   # a glyph not found in the outlined drawing: outline it all
            outlined.append(name)
            svg = path_svg.replace('<defs>', MARK_ALL + '\n<defs>', 1)
        else:
            some.append(name)
            svg = mixed.replace('<defs>', MARK_SOME + '\n<defs>', 1)
    head, rest = svg.split('>', 1)[0], svg.split('>', 1)[1]
    if not head.startswith('<svg'):   # an XML declaration first
        i = svg.index('<svg'); head, rest = svg[:svg.index('>', i)], svg[svg.index('>', i) + 1:]
    head = re.sub(r'\b(width|height)="([\d.]+)pt"', scale, head)
    w, h = (float(re.search(r'\b%s="([\d.]+)pt"' % k, head).group(1)) for k in ('width', 'height'))
    sizes[name] = (round(w * 4 / 3), round(h * 4 / 3))   # CSS px: 96 a 72 pt
    rest = re.sub(r'font-family="([^"]*)"', fonts, rest)
    n = len(re.findall(r'<image\b', rest))
    rest = re.sub(r'<image\b', '<image style="image-rendering: crisp-edges; image-rendering: pixelated"'
                  ' image-rendering="optimizeSpeed"', rest)
    if n:
        rasters.append('%s (%d)' % (name, n))
    with open(os.path.join(out, 'fig', name), 'w', encoding='utf-8') as fh:
        fh.write(head + '>' + rest)

# the pages' <img src="fig/fig-N.svg" ...>: width and height in CSS px
for page in glob.glob(os.path.join(out, '*.html')):
    text = open(page, encoding='utf-8').read()
    new = re.sub(r'<img src="fig/(fig-\d+\.svg)"(?: width="\d+" height="\d+")?',
                 lambda m: '<img src="fig/%s" width="%d" height="%d"' % ((m.group(1),) + sizes[m.group(1)]),
                 text)
    if new != text:
        open(page, 'w', encoding='utf-8').write(new)
print('figures.sh: %d figures in %s/fig, %d with their text as text (some glyphs outlined: %s; '
      'all outlined: %s); rasters marked pixelated: %s' % (len(files), out, len(files) - len(outlined),
      ', '.join(some) or 'none', ', '.join(outlined) or 'none', ', '.join(rasters) or 'none'))
EOF
