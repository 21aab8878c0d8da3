// make html: typeset every formula of the web edition once, when the site is built, so that
// a page reads without JavaScript. One node process for the whole book (weave.py writes the
// formulas as JSON, this renders them all, weave.py puts them in place).
// KaTeX is Debian's libjs-katex; 'htmlAndMathml' gives the visible HTML and, for screen
// readers, MathML. A formula KaTeX cannot parse comes back as a katex-error span (TeX shown
// in red), which weave.py reports and tools/html/check-content.py fails on.
// Usage: node katex-render.js IN.json OUT.json   (IN: [[tex, display], ...]; OUT: [html, ...])
'use strict';
const fs = require('fs');
const katex = require('/usr/share/javascript/katex/katex.min.js');

const [input, output] = process.argv.slice(2);
const formulas = JSON.parse(fs.readFileSync(input, 'utf8'));
const html = formulas.map(([tex, display]) => katex.renderToString(tex, {
  displayMode: display, throwOnError: false, strict: 'ignore', output: 'htmlAndMathml',
}));
fs.writeFileSync(output, JSON.stringify(html));
