#!/usr/bin/python3
"""The web edition's search index, built from the built pages (run by tools/html/build after
weave.py): every section (its heading and the words of its text), every chunk name (linking
to its first part) and every identifier (linking to its definition). Written as
search-index.js, a script that sets window.SEARCH_INDEX, so that search.js can load it over
file:// as well as http:// (a fetch() of a JSON file is refused over file://).

Usage: search-index.py SITE
Entry: [kind, label, href, words]; kind s(ection), c(hunk), i(dentifier); words only for s.
"""
import glob
import html
import json
import os
import re
import sys

SITE = sys.argv[1]
SKIP = {'index.html', 'search.html'}
WORD = re.compile(r"[a-z0-9_][a-z0-9_'\-]*[a-z0-9_]|[a-z0-9]", re.I)


def text(fragment):
    """The visible text of an HTML fragment, TeX sources of math included (they are words)."""
    fragment = re.sub(r'<(script|style)\b.*?</\1>', ' ', fragment, flags=re.S)
    return html.unescape(re.sub(r'<[^>]+>', ' ', fragment))


def words(fragment):
    return sorted({w.lower() for w in WORD.findall(text(fragment)) if len(w) > 2})


def page_entries(name, src):
    main = src[src.find('<main'):src.rfind('</main>')]
    title = re.search(r'<h1[^>]*>(.*?)</h1>', main, re.S)
    out = []
    # sections: the text from a heading to the next h1/h2/h3
    heads = list(re.finditer(r'<h([123])(?: id="([^"]*)")?[^>]*>(.*?)</h\1>', main, re.S))
    for n, m in enumerate(heads):
        end = heads[n + 1].start() if n + 1 < len(heads) else len(main)
        href = name + ('#' + m.group(2) if m.group(2) else '')
        label = ' '.join(text(m.group(3)).split())
        if m.group(1) != '1' and title:
            label += ' \u2014 ' + ' '.join(text(title.group(1)).split())
        out.append(['s', label, href, ' '.join(words(main[m.end():end]))])
    for m in re.finditer(r'<div class="chunk"[^>]*? id="([^"]+)"[^>]*>(.{0,800}?)class="chunkname"[^>]*>(.*?)</a>',
                         main, re.S):
        out.append(['c', ' '.join(text(m.group(3)).split()), name + '#' + m.group(1), ''])
    for m in re.finditer(r'<code id="(def-[^"]+)"[^>]*>(.*?)</code>', main, re.S):
        out.append(['i', text(m.group(2)).strip(), name + '#' + m.group(1), ''])
    return out


def main():
    entries = []
    seen = set()   # a chunk name once: its first part, in reading order
    order = re.findall(r'<li[^>]*><a href="([^"#]+\.html)"', open(os.path.join(SITE, 'index.html')).read())
    pages = sorted((os.path.basename(p) for p in glob.glob(os.path.join(SITE, '*.html'))),
                   key=lambda p: order.index(p) if p in order else len(order))
    for page in pages:
        if page in SKIP:
            continue
        with open(os.path.join(SITE, page), encoding='utf-8') as fh:
            for e in page_entries(page, fh.read()):
                if e[0] in 'ci' and (e[0], e[1]) in seen:
                    continue
                seen.add((e[0], e[1]))
                entries.append(e)
    data = json.dumps(entries, ensure_ascii=False, separators=(',', ':'))
    with open(os.path.join(SITE, 'search-index.js'), 'w', encoding='utf-8') as fh:
        fh.write('window.SEARCH_INDEX=%s;\n' % data)
    kinds = {k: sum(1 for e in entries if e[0] == k) for k in 'sci'}
    print('search-index.py: %d sections, %d chunk names, %d identifiers, %d KB' % (
        kinds['s'], kinds['c'], kinds['i'], len(data.encode()) // 1024))


if __name__ == '__main__':
    main()
