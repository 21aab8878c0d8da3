// The web edition's math: every span.math holds TeX that KaTeX (Debian's libjs-katex, copied
// into katex/) typesets in place. An equation KaTeX cannot parse keeps its TeX, marked
// katex-error, which make check-html reports.
document.addEventListener('DOMContentLoaded', function () {
  var spans = document.querySelectorAll('span.math');
  for (var i = 0; i < spans.length; i++) {
    var el = spans[i];
    katex.render(el.textContent, el, {
      displayMode: el.classList.contains('display'),
      throwOnError: false, strict: 'ignore', output: 'html'
    });
  }
  document.documentElement.setAttribute('data-math', 'done');
});
