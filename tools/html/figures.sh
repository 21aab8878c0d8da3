#!/bin/sh
# The web edition's figures: LaTeX draws every figure of the book (the gnuplot drawings of
# figures/*.tex, the TikZ pictures) from build/html-fig/figures.tex, which weave.py wrote
# with one figure a page; mutool (mupdf-tools) turns each page into an SVG.
#   mutool's text=text keeps the labels as <text> (selectable, searchable, a fifth of the
#   size of outlined glyphs; each glyph keeps its printed x position, so a fallback font
#   only changes the letters' shapes). pdftocairo -svg, pdf2svg (cairo) and dvisvgm --pdf
#   all outline the glyphs.
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
import glob, os, re, sys
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
# and draws its bar as a rule) and prime (a superscript-sized glyph). A figure with any of
# them keeps mutool's outlines instead.
FALLBACK = re.compile('[\ufffd\u221a\u2032]|&#x(fffd|221a|2032);', re.I)

sizes, rasters, outlined = {}, [], []
files = sorted(glob.glob(os.path.join(work, 'fig-*.svg')), key=lambda f: int(re.findall(r'\d+', f)[-1]))
for f in files:
    name = os.path.basename(f)
    svg = open(f, encoding='utf-8').read()
    if any(FALLBACK.search(t) for t in re.findall(r'<text\b.*?</text>', svg, re.S)):
        outlined.append(name)
        svg = open(f.replace('/fig-', '/path-'), encoding='utf-8').read()
        svg = svg.replace('<defs>', '<!-- figures.sh: text outlined, math a text font cannot draw -->\n<defs>', 1)
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
    new = re.sub(r'<img src="fig/(fig-\d+\.svg)"',
                 lambda m: '<img src="fig/%s" width="%d" height="%d"' % ((m.group(1),) + sizes[m.group(1)]),
                 text)
    if new != text:
        open(page, 'w', encoding='utf-8').write(new)
print('figures.sh: %d figures in %s/fig, %d with their text as text (outlined: %s); '
      'rasters marked pixelated: %s' % (len(files), out, len(files) - len(outlined),
      ', '.join(outlined) or 'none', ', '.join(rasters) or 'none'))
EOF
