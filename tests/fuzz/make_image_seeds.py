"""Writes the seed corpus of fuzz_image (tests/fuzz/corpus/image): tiny JPEG
and PNG files of the kinds image folders hold (RGB, grey, progressive and
CMYK JPEGs; RGB, RGBA, palette with transparency, 16-bit, 1-bit and grey
with alpha PNGs; PIL writes no interlaced PNG), and segmentation masks (an
8-bit palette PNG as Pascal VOC's, with 255 on the objects' borders, and an
8-bit grey one). Run with Debian's python3
(PIL, which torchvision needs): /usr/bin/python3 tests/fuzz/make_image_seeds.py"""

import pathlib

from PIL import Image

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "image"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rgb = Image.new("RGB", (7, 5))
    rgb.putdata([(x * 36, y * 60, (x + y) * 20) for y in range(5) for x in range(7)])
    rgb.save(OUT / "rgb.jpg", quality=90)
    rgb.convert("L").save(OUT / "grey.jpg")
    rgb.save(OUT / "progressive.jpg", progressive=True)
    rgb.convert("CMYK").save(OUT / "cmyk.jpg")
    rgb.save(OUT / "rgb.png")
    rgb.convert("RGBA").save(OUT / "rgba.png")
    palette = rgb.convert("P", palette=Image.ADAPTIVE, colors=4)
    palette.save(OUT / "palette_transparency.png", transparency=0)
    rgb.convert("L").convert("I").point(lambda v: v * 257).convert("I;16").save(OUT / "grey16.png")
    rgb.convert("1").save(OUT / "grey1.png")
    rgb.convert("LA").save(OUT / "grey_alpha.png")
    classes = [0 if x < 2 else 255 if x == 2 else 15 if y < 3 else 7 for y in range(5) for x in range(7)]
    mask = Image.new("P", (7, 5))
    mask.putpalette([v for c in range(256) for v in ((c * 37) % 256, (c * 91) % 256, (c * 53) % 256)])
    mask.putdata(classes)
    mask.save(OUT / "mask_palette.png")
    grey_mask = Image.new("L", (7, 5))
    grey_mask.putdata(classes)
    grey_mask.save(OUT / "mask_grey.png")


if __name__ == "__main__":
    main()
