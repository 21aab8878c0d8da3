// plot.js -- the live edition's drawing module: line charts as SVG, small enough to read.
//   LivePlot.lines(svgElement, {series: [{label, points: [[x, y], ...]}], xLabel, yLabel})
// draws axes with a few round ticks, one polyline per series (its points in data-x/data-y
// of the line, so a test can read back what was drawn) and a legend.
'use strict';
(function () {
    const NS = 'http://www.w3.org/2000/svg';
    const WIDTH = 640, HEIGHT = 360, MARGIN = {left: 70, right: 20, top: 20, bottom: 45};
    const COLOURS = ['#1f5fa8', '#c0392b', '#2e8b57', '#8e44ad'];

    function element(name, attributes, parent) {
        const e = document.createElementNS(NS, name);
        for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
        if (parent) parent.appendChild(e);
        return e;
    }

    // About five round values from lo to hi: steps of 1, 2 or 5 times a power of ten.
    function ticks(lo, hi) {
        const raw = (hi - lo) / 5, power = Math.pow(10, Math.floor(Math.log10(raw)));
        const step = [1, 2, 5, 10].map(m => m * power).find(s => s >= raw);
        const list = [];
        for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
            list.push(Number(t.toPrecision(12)));
        return list;
    }

    function lines(svg, {series, xLabel, yLabel}) {
        while (svg.firstChild) svg.removeChild(svg.firstChild);
        svg.setAttribute('viewBox', `0 0 ${WIDTH} ${HEIGHT}`);
        const all = series.flatMap(s => s.points);
        const xMax = Math.max(...all.map(p => p[0])), yMax = Math.max(...all.map(p => p[1]));
        const w = WIDTH - MARGIN.left - MARGIN.right, h = HEIGHT - MARGIN.top - MARGIN.bottom;
        const x = v => MARGIN.left + w * v / xMax, y = v => MARGIN.top + h * (1 - v / yMax);
        const axes = element('g', {class: 'axes', stroke: '#444', 'font-size': 12}, svg);
        element('line', {x1: x(0), y1: y(0), x2: x(xMax), y2: y(0)}, axes);
        element('line', {x1: x(0), y1: y(0), x2: x(0), y2: y(yMax)}, axes);
        for (const t of ticks(0, xMax))
            element('text', {x: x(t), y: y(0) + 16, 'text-anchor': 'middle', stroke: 'none'},
                    axes).textContent = t;
        for (const t of ticks(0, yMax))
            element('text', {x: x(0) - 6, y: y(t) + 4, 'text-anchor': 'end', stroke: 'none'},
                    axes).textContent = t.toExponential(0);
        element('text', {x: x(xMax / 2), y: HEIGHT - 8, 'text-anchor': 'middle', stroke: 'none'},
                axes).textContent = xLabel;
        element('text', {x: 14, y: y(yMax / 2), 'text-anchor': 'middle', stroke: 'none',
                         transform: `rotate(-90 14 ${y(yMax / 2)})`}, axes).textContent = yLabel;
        series.forEach((s, i) => {
            const colour = COLOURS[i % COLOURS.length];
            element('polyline', {
                class: 'series', fill: 'none', stroke: colour, 'stroke-width': 2,
                points: s.points.map(p => `${x(p[0]).toFixed(2)},${y(p[1]).toFixed(2)}`).join(' '),
                'data-x': s.points.map(p => p[0]).join(' '),
                'data-y': s.points.map(p => p[1]).join(' '),
            }, svg);
            element('text', {x: WIDTH - MARGIN.right, y: MARGIN.top + 16 * (i + 1),
                             'text-anchor': 'end', fill: colour, 'font-size': 13}, svg)
                .textContent = s.label;
        });
    }

    globalThis.LivePlot = {lines, ticks};
})();
