// plot.js -- the live edition's drawing module: line charts and heat maps as SVG, small
// enough to read.
//   LivePlot.lines(svg, {series: [{label, points: [[x, y], ...]}], xLabel, yLabel, width, height,
//                        xLog2, levels: [{label, y}]})
// draws axes with a few round ticks, one polyline per series (its points in data-x/data-y
// of the line, so a test can read back what was drawn) and a key below the chart; with
// xLog2 the x axis is logarithmic, ticked at powers of two; each level is a dashed
// horizontal line (a bound, not data: class level).
//   LivePlot.heatmap(svg, {values: [[v, ...], ...], rowLabels, columnLabels, xLabel, yLabel, width})
// draws one rect per value (row 0 at the top; the value in the rect's data-v, so a test can
// read back what was drawn where), labelled rows and columns, and a colour scale.
// width and height are the viewBox's: a narrow one keeps the text legible on a phone.
//   LivePlot.coalesced(draw) is draw called once for a burst of inputs: a control held down
// or typed into fires input events faster than the program computes a figure, and each
// would otherwise be computed and drawn in turn; draw runs after the events already queued.
'use strict';
(function () {
    const NS = 'http://www.w3.org/2000/svg';
    const COLOURS = ['#1f5fa8', '#c0392b', '#2e8b57', '#8e44ad', '#d35400', '#16a085', '#7f8c8d', '#b7950b'];
    const FONT = 13, KEY_ROW = 18;

    function element(name, attributes, parent) {
        const e = document.createElementNS(NS, name);
        for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
        if (parent) parent.appendChild(e);
        return e;
    }

    function text(parent, x, y, content, attributes = {}) {
        element('text', {x, y, stroke: 'none', fill: '#222', 'font-size': FONT, ...attributes},
                parent).textContent = content;
    }

    function clear(svg, width, height) {
        while (svg.firstChild) svg.removeChild(svg.firstChild);
        svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
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

    // lo and hi widened to the round values of their ticks (-0.9999..1 to -1..1), so the
    // ends of the value axis are labelled.
    function rounded(lo, hi) {
        if (!(hi > lo)) return [lo, hi];
        const list = ticks(lo, hi), step = list.length > 1 ? list[1] - list[0] : hi - lo;
        // a value within a quarter step of the next round value out is widened to it
        const widen = (v, round) => {
            const edge = Number((round(v / step) * step).toPrecision(12));
            return Math.abs(edge - v) < step / 4 ? edge : v;
        };
        return [widen(lo, Math.floor), widen(hi, Math.ceil)];
    }

    // A tick's label: plain when the axis's numbers are of ordinary size, else 2e-4.
    function formatter(list) {
        const big = Math.max(...list.map(Math.abs));
        return big !== 0 && (big < 0.01 || big >= 1e5) ? t => (t === 0 ? '0' : t.toExponential(0))
                                                       : t => String(t);
    }

    // The ticks of a logarithmic axis from 2^lo to 2^hi: powers of two, as 1/4, 1, 4.
    function powersOfTwo(lo, hi) {
        const list = [], step = Math.max(1, Math.ceil((hi - lo) / 6));
        for (let k = Math.ceil(lo); k <= hi + 1e-9; k += step) list.push(k);
        return list;
    }
    const powerLabel = k => (k >= 0 ? String(2 ** k) : '1/' + 2 ** -k);

    function lines(svg, {series, xLabel, yLabel, width = 640, height = 360, xLog2 = false,
                         levels = []}) {
        const keys = series.length + levels.length;
        const margin = {left: 62, right: 22, top: 12, bottom: 44 + KEY_ROW * keys};
        clear(svg, width, height + KEY_ROW * keys);
        const all = series.flatMap(s => s.points), u = v => (xLog2 ? Math.log2(v) : v);
        const xs = all.map(p => u(p[0])), ys = [...all.map(p => p[1]), ...levels.map(l => l.y)];
        const xMin = xLog2 ? Math.min(...xs) : Math.min(0, ...xs), xMax = Math.max(...xs);
        const [yMin, yMax] = rounded(Math.min(0, ...ys), Math.max(...ys));
        const w = width - margin.left - margin.right;
        const h = height + KEY_ROW * keys - margin.top - margin.bottom;
        const at = t => margin.left + w * (t - xMin) / ((xMax - xMin) || 1);   // t on the axis
        const x = v => at(u(v));
        const y = v => margin.top + h * (1 - (v - yMin) / ((yMax - yMin) || 1));
        const axes = element('g', {class: 'axes', stroke: '#444'}, svg);
        element('line', {x1: at(xMin), y1: y(yMin), x2: at(xMax), y2: y(yMin)}, axes);
        element('line', {x1: at(xMin), y1: y(yMin), x2: at(xMin), y2: y(yMax)}, axes);
        if (yMin < 0)
            element('line', {x1: at(xMin), y1: y(0), x2: at(xMax), y2: y(0), stroke: '#bbb'}, axes);
        const xTicks = xLog2 ? powersOfTwo(xMin, xMax) : ticks(xMin, xMax), yTicks = ticks(yMin, yMax);
        const xFormat = xLog2 ? powerLabel : formatter(xTicks), yFormat = formatter(yTicks);
        for (const t of xTicks)
            text(axes, at(t), y(yMin) + 16, xFormat(t), {'text-anchor': 'middle'});
        for (const t of yTicks)
            text(axes, at(xMin) - 5, y(t) + 4, yFormat(t), {'text-anchor': 'end'});
        text(axes, at((xMin + xMax) / 2), y(yMin) + 34, xLabel, {'text-anchor': 'middle'});
        text(axes, 13, y((yMin + yMax) / 2), yLabel,
             {'text-anchor': 'middle', transform: `rotate(-90 13 ${y((yMin + yMax) / 2)})`});
        const key = (i, colour, label, dashed) => {   // the key: one row per line, below
            const keyY = y(yMin) + 44 + KEY_ROW * i + 4;
            element('line', {x1: margin.left, y1: keyY - 4, x2: margin.left + 24, y2: keyY - 4,
                             stroke: colour, 'stroke-width': 3,
                             ...(dashed ? {'stroke-dasharray': '5 3'} : {})}, svg);
            text(svg, margin.left + 30, keyY, label, {class: 'key'});
        };
        levels.forEach((l, i) => {
            element('line', {class: 'level', x1: at(xMin), y1: y(l.y), x2: at(xMax), y2: y(l.y),
                             stroke: '#777', 'stroke-dasharray': '5 3'}, svg);
            key(series.length + i, '#777', l.label, true);
        });
        series.forEach((s, i) => {
            const colour = COLOURS[i % COLOURS.length];
            element('polyline', {
                class: 'series', fill: 'none', stroke: colour, 'stroke-width': 2,
                points: s.points.map(p => `${x(p[0]).toFixed(2)},${y(p[1]).toFixed(2)}`).join(' '),
                'data-x': s.points.map(p => p[0]).join(' '),
                'data-y': s.points.map(p => p[1]).join(' '),
            }, svg);
            key(i, colour, s.label, false);
        });
    }

    // The colour of t in [0, 1]: white to blue, or blue to white to red when diverging.
    function colour(t, diverging) {
        const mix = (a, b, s) => a.map((c, i) => Math.round(c + (b[i] - c) * s));
        const white = [255, 255, 255], blue = [31, 95, 168], red = [192, 57, 43];
        const rgb = diverging ? (t < 0.5 ? mix(blue, white, t * 2) : mix(white, red, t * 2 - 1))
                              : mix(white, blue, t);
        return `rgb(${rgb.join(',')})`;
    }

    // The longest label's width in the font's units, roughly (0.6 em a character).
    const labelWidth = labels => Math.max(0, ...(labels || []).map(l => String(l).length)) * FONT * 0.6;

    function heatmap(svg, {values, rowLabels, columnLabels, xLabel, yLabel, width = 640}) {
        const rows = values.length, columns = rows ? values[0].length : 0;
        const flat = values.flat(), low = Math.min(0, ...flat), high = Math.max(...flat);
        // negative values: a scale symmetric about 0, white at 0
        const diverging = low < 0, bound = Math.max(-low, high);
        const min = diverging ? -bound : low, max = diverging ? bound : high;
        const left = 26 + labelWidth(rowLabels) + 6, scaleWidth = 72;
        const cell = Math.max(1, (width - left - scaleWidth - 8) / columns);
        // column labels are turned only when they are wider than a column
        const turned = columnLabels && labelWidth(columnLabels) > cell * 0.9;
        const top = 22 + (turned ? labelWidth(columnLabels) * 0.75 + 6 : columnLabels ? FONT + 6 : 0);
        // square cells, but a map of few rows and many columns (the positional encoding's)
        // gets rows up to 40 units high
        const cellH = Math.max(cell, Math.min(40, 240 / rows));
        const height = top + rows * cellH + 30;
        clear(svg, width, height);
        const cells = element('g', {class: 'cells', 'shape-rendering': 'crispEdges'}, svg);
        values.forEach((row, i) => row.forEach((v, j) => {
            const t = (v - min) / ((max - min) || 1);
            element('rect', {x: (left + j * cell).toFixed(2), y: (top + i * cellH).toFixed(2),
                             width: cell.toFixed(2), height: cellH.toFixed(2),
                             fill: colour(t, diverging), 'data-v': v}, cells);
        }));
        element('rect', {x: left, y: top, width: (columns * cell).toFixed(2),   // the map's outline
                         height: (rows * cellH).toFixed(2), fill: 'none', stroke: '#888'}, svg);
        labelAxes(svg, {rows, columns, rowLabels, columnLabels, turned, left, top, cell, cellH, xLabel, yLabel});
        scale(svg, {x: left + columns * cell + 14, top, height: rows * cellH, min, max, diverging});
    }

    // Every how many cells of this size a label of this size fits: 1, 2, 5, 10, 20, 50...
    function every(label, size) {
        const need = label / size;
        if (need <= 1) return 1;
        const power = Math.pow(10, Math.floor(Math.log10(need)));
        return [1, 2, 5, 10].map(m => m * power).find(s => s >= need);
    }

    // Row and column labels (every label when there is room, else a few numbers) and the titles.
    function labelAxes(svg, {rows, columns, rowLabels, columnLabels, turned, left, top, cell, cellH, xLabel, yLabel}) {
        const g = element('g', {class: 'labels'}, svg);
        const rowStep = every(FONT * 1.1, cellH);
        const columnStep = columnLabels ? every(FONT * 1.1, cell)
                                        : every(String(columns).length * FONT * 0.6 + 6, cell);
        for (let i = 0; i < rows; i += rowStep)
            text(g, left - 4, top + (i + 0.5) * cellH + 4, rowLabels ? rowLabels[i] : i, {'text-anchor': 'end'});
        for (let j = 0; j < columns; j += columnStep) {
            const cx = left + (j + 0.5) * cell, label = columnLabels ? columnLabels[j] : j;
            if (turned)
                text(g, cx + 4, top - 4, label, {transform: `rotate(-50 ${cx + 4} ${top - 4})`});
            else if (columnLabels)
                text(g, cx, top - 5, label, {'text-anchor': 'middle'});
            else
                text(g, cx, top + rows * cellH + 14, label, {'text-anchor': 'middle'});
        }
        text(g, left + columns * cell / 2, columnLabels ? 14 : top + rows * cellH + 28, xLabel,
             {'text-anchor': 'middle', 'font-weight': 'bold'});
        const my = top + rows * cellH / 2;
        text(g, 13, my, yLabel, {'text-anchor': 'middle', 'font-weight': 'bold', transform: `rotate(-90 13 ${my})`});
    }

    // The colour scale: a bar of 20 steps from max (top) to min, its ends and middle labelled.
    function scale(svg, {x, top, height, min, max, diverging}) {
        const g = element('g', {class: 'scale'}, svg), steps = 20;
        for (let k = 0; k < steps; k++)
            element('rect', {x, y: (top + height * k / steps).toFixed(2), width: 12,
                             height: (height / steps + 0.5).toFixed(2),
                             fill: colour(1 - (k + 0.5) / steps, diverging)}, g);
        element('rect', {x, y: top, width: 12, height, fill: 'none', stroke: '#444'}, g);
        const label = v => Number(v.toPrecision(3));
        text(g, x + 15, top + 9, label(max));
        text(g, x + 15, top + height / 2 + 4, label((min + max) / 2));
        text(g, x + 15, top + height, label(min));
    }

    function coalesced(draw) {
        let pending = false;
        return (...args) => {
            if (pending) return;
            pending = true;
            setTimeout(() => { pending = false; draw(...args); }, 0);
        };
    }

    globalThis.LivePlot = {lines, heatmap, ticks, coalesced};
})();
