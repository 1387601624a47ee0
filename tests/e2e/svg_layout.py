#!/usr/bin/env python3
# svg_layout.py REPORT.html: the charts of tipc's HTML report are laid out so a person can read
# them: every text inside its chart, no two texts overlapping (boxes estimated from an 11 px sans
# font), numeric tick labels evenly spaced at 1, 2 or 5 x 10^k, and each training's loss chart drawing
# one line per rank its summary names ("2 ranks"). Prints what is wrong, exits 1.
import math, re, sys, xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
CHAR_W, FONT = 6.6, 11.0     # a generous average glyph width of an 11 px sans-serif font
doc = open(sys.argv[1], encoding="utf-8").read()
problems = []

def boxes(svg):
    out = []
    for t in svg.iter(SVG + "text"):
        s, x, y = (t.text or ""), float(t.get("x")), float(t.get("y"))
        w = len(s) * CHAR_W * (1.1 if t.get("class") == "charttitle" else 1.0)
        a = t.get("text-anchor") or "start"
        x0 = x if a == "start" else x - w / 2 if a == "middle" else x - w
        box = (x0, y - FONT, x0 + w, y + 2)
        m = re.match(r"rotate\(-90 ([\d.]+) ([\d.]+)\)", t.get("transform") or "")
        if m:   # turned on its side around (cx, cy): width becomes height
            cx, cy = float(m.group(1)), float(m.group(2))
            box = (cx - FONT, cy - w / 2, cx + 2, cy + w / 2)
        out.append((s, box))
    return out

def overlap(a, b):
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

def nice(step):
    k = 10 ** math.floor(math.log10(step))
    return any(abs(step - m * k) < 1e-6 * step for m in (1, 2, 5, 10))

svgs = re.findall(r"<svg .*?</svg>", doc, re.S)
for n, text in enumerate(svgs):
    svg = ET.fromstring(text)
    name, W, H = svg.get("class"), float(svg.get("width")), float(svg.get("height"))
    bx = boxes(svg)
    for s, b in bx:
        if b[0] < 0 or b[1] < 0 or b[2] > W or b[3] > H:
            problems.append(f"svg {n} ({name}): '{s}' leaves the chart: {tuple(round(v) for v in b)} in {W:.0f}x{H:.0f}")
    for i in range(len(bx)):
        for j in range(i + 1, len(bx)):
            if overlap(bx[i][1], bx[j][1]):
                problems.append(f"svg {n} ({name}): '{bx[i][0]}' overlaps '{bx[j][0]}'")
    # numeric labels in a row (x axis: same y) or a column (y axis: same x, anchored at the end)
    axes = {}
    for t in svg.iter(SVG + "text"):
        if re.fullmatch(r"-?\d+(\.\d+)?", t.text or ""):
            key = ("x", t.get("y")) if t.get("text-anchor") == "middle" else ("y", t.get("x"))
            axes.setdefault(key, []).append(float(t.text))
    for key, vals in axes.items():
        if len(vals) < 3:
            continue
        vals.sort()
        steps = {round(b - a, 9) for a, b in zip(vals, vals[1:])}
        if len(steps) != 1 or not nice(steps.pop()):
            problems.append(f"svg {n} ({name}): {key[0]} ticks {vals} are not evenly spaced at 1, 2 or 5 x 10^k")

# one loss line per rank: each training section's summary says how many ranks
for sec in re.split(r"<h2>", doc)[1:]:
    m = re.search(r"; (\d+) ranks?, ", sec)
    loss = re.search(r'<svg [^>]*class="loss".*?</svg>', sec, re.S)
    if m and loss:
        lines = len(re.findall(r"<polyline ", loss.group(0)))
        if lines != int(m.group(1)):
            problems.append(f"section '{sec[:60]}...': {m.group(1)} ranks but {lines} loss lines")

for p in problems:
    print(p)
print(f"{sys.argv[1]}: {len(svgs)} charts, {len(problems)} layout problems")
sys.exit(1 if problems else 0)
