// The web edition's script: the phone's contents drawer and the back-to-top link. (The math
// is typeset when the site is built: a page reads without any script.)
// The bar's Contents button is a link to the contents page; on a narrow screen (where the side
// bar is hidden) it opens the side bar as a drawer instead. Escape or a link inside closes it.
document.addEventListener('DOMContentLoaded', function () {
  var menu = document.querySelector('header.bar a.menu');
  var side = document.getElementById('side');
  if (menu && side) {
    var setOpen = function (open) {
      document.body.classList.toggle('drawer', open);
      menu.setAttribute('aria-expanded', open ? 'true' : 'false');
    };
    menu.addEventListener('click', function (ev) {
      if (getComputedStyle(side).display === 'none' || document.body.classList.contains('drawer')) {
        ev.preventDefault();
        setOpen(!document.body.classList.contains('drawer'));
        if (document.body.classList.contains('drawer')) {
          var cur = side.querySelector('li.current');
          if (cur) cur.scrollIntoView({block: 'center'});
        }
      }
    });
    side.addEventListener('click', function (ev) {
      if (ev.target.closest('a')) setOpen(false);
    });
    document.addEventListener('keydown', function (ev) {
      if (ev.key === 'Escape') setOpen(false);
    });
  }
  var scrolled = function () {
    document.body.classList.toggle('scrolled', window.scrollY > window.innerHeight);
  };
  window.addEventListener('scroll', scrolled, {passive: true});
  scrolled();
});
