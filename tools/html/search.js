// The web edition's search: the box in the side bar looks up search-index.js (built by
// tools/html/search-index.py) for sections (by heading and words of their text), chunk names
// and identifiers, and lists the matches as links. The index (about half a megabyte) loads the
// first time the box gets the focus, not with every page.
(function () {
  var KIND = {s: 'section', c: 'chunk', i: 'identifier'};
  var MAX = 30;

  function load(done) {
    if (window.SEARCH_INDEX) return done();
    var s = document.createElement('script');
    s.src = 'search-index.js';
    s.onload = done;
    document.head.appendChild(s);
  }

  // A score for one entry, 0 when some term does not match: an identifier or a chunk name
  // that is the query itself first, then names and headings holding every term, then
  // sections whose words begin with every term.
  function score(e, terms, q) {
    var label = e[1].toLowerCase();
    if (e[0] !== 's' && label.replace(/[\u27e8\u27e9]/g, '') === q) return 100;
    var total = 0;
    for (var i = 0; i < terms.length; i++) {
      var t = terms[i];
      if (label.indexOf(t) >= 0) total += e[0] === 'i' ? 30 : 20;
      else if (e[0] === 's' && (' ' + e[3]).indexOf(' ' + t) >= 0) total += 5;
      else return 0;
    }
    return total;
  }

  function search(q) {
    q = q.trim().toLowerCase();
    var terms = q.split(/\s+/).filter(function (t) { return t.length > 0; });
    if (!terms.length) return [];
    var hits = [];
    var idx = window.SEARCH_INDEX;
    for (var i = 0; i < idx.length; i++) {
      var s = score(idx[i], terms, q);
      if (s) hits.push([s, i]);
    }
    hits.sort(function (a, b) { return b[0] - a[0] || a[1] - b[1]; });
    return hits.slice(0, MAX).map(function (h) { return idx[h[1]]; });
  }

  function show(box, out) {
    var hits = search(box.value);
    out.textContent = '';
    if (!box.value.trim()) return;
    if (!hits.length) {
      var p = document.createElement('p');
      p.textContent = 'Nothing found.';
      out.appendChild(p);
      return;
    }
    var ol = document.createElement('ol');
    hits.forEach(function (e) {
      var li = document.createElement('li');
      var a = document.createElement('a');
      a.href = e[2];
      a.textContent = e[1];
      var k = document.createElement('span');
      k.className = 'kind';
      k.textContent = KIND[e[0]];
      a.appendChild(k);
      li.appendChild(a);
      ol.appendChild(li);
    });
    out.appendChild(ol);
  }

  document.addEventListener('DOMContentLoaded', function () {
    var form = document.querySelector('form.search');
    var box = document.getElementById('search-q');
    var out = document.getElementById('search-results');
    if (!form || !box || !out) return;
    form.hidden = false;
    var update = function () { load(function () { show(box, out); }); };
    box.addEventListener('focus', function () { load(function () {}); });
    box.addEventListener('input', update);
    form.addEventListener('submit', function (ev) {
      ev.preventDefault();
      update();
      var first = out.querySelector('a');
      if (first) window.location.href = first.href;
    });
  });
})();
