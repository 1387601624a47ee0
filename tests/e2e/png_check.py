#!/usr/bin/env python3
# png_check.py PNG W H [region=X0,Y0,X1,Y1 ...] [rgb=#RRGGBB ...]: assert a screenshot is a W x H
# image that is not blank: each region holds dark (ink) pixels, each colour is drawn somewhere
# (within a small tolerance). Pillow (Debian python3-pil) reads the PNG; the counting runs in its
# lookup tables, not in Python loops.
import sys
from PIL import Image, ImageChops

path, W, H = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
im = Image.open(path).convert("RGB")
assert im.size == (W, H), f"{path}: {im.size[0]}x{im.size[1]}, want {W}x{H}"
for arg in sys.argv[4:]:
    kind, val = arg.split("=", 1)
    if kind == "region":
        box = tuple(int(v) for v in val.split(","))
        ink = im.crop(box).convert("L").point(lambda v: 255 if v < 200 else 0).histogram()[255]
        assert ink > 20, f"{path}: region {val} is blank ({ink} dark pixels)"
    elif kind == "rgb":
        want = [int(val[i:i + 2], 16) for i in (1, 3, 5)]
        near = [ch.point(lambda v, w=w: 255 if abs(v - w) <= 40 else 0) for ch, w in zip(im.split(), want)]
        hits = ImageChops.multiply(ImageChops.multiply(near[0], near[1]), near[2]).histogram()[255]
        assert hits > 10, f"{path}: colour {val} is not drawn ({hits} pixels)"
    else:
        sys.exit(f"png_check.py: unknown check '{arg}'")
print(f"{path}: {W}x{H} ok")
