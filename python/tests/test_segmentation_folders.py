"""A segmentation's test set as files, as Pascal VOC ships it: a folder of images (JPEG and PNG, of several sizes)
and a folder of their masks (IMAGE.png: palette PNGs of class indices, or 8-bit grey, 255 where a pixel has no
label), --eval-data IMAGES --eval-labels MASKS with --resize/--crop. Checked against torchvision's own transforms
of the same files (Resize and CenterCrop on PIL images; masks resized by nearest neighbour): octet eval, octet
predict and octet.evaluate give exactly what they give for those arrays as .npy files, and octet quantize
calibrates on the folder of images alone as on their .npy. Masks that cannot be a folder's labels are refused by
name, and nothing is written."""

import json
import shutil
import subprocess

import numpy as np
import octet
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
Image = pytest.importorskip("PIL.Image")
transforms = pytest.importorskip("torchvision.transforms")
from test_onnx_import_dense_output import UNet  # noqa: E402
from test_onnx_import import seeded  # noqa: E402
from unlabelled_import import export_image_model, imported, randomise_batch_norms  # noqa: E402

CLASSES, SIDE = 5, 16
# (height, width) of the files: larger, smaller and equal to the input, both orientations, odd steps.
SIZES = [(24, 30), (30, 24), (21, 33), (40, 40), (16, 16), (13, 19), (35, 22), (18, 27)] * 3
PALETTE = [v for c in range(256) for v in ((c * 37) % 256, (c * 91) % 256, (c * 53) % 256)]


def blocky(rng, height, width, values, block):
    """A random map of `values` in blocks of about `block` pixels, so that resizing keeps some of its shapes."""
    coarse = rng.choice(values, size=(height // block + 1, width // block + 1))
    return np.kron(coarse, np.ones((block, block), coarse.dtype))[:height, :width]


def run(octet_bin, *args):
    return subprocess.run([octet_bin, *map(str, args)], capture_output=True, text=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory, octet_bin):
    """The files, the model, and torchvision's arrays of them (x.npy, y.npy) beside a model quantized on x.npy."""
    tmp = tmp_path_factory.mktemp("segmentation_folders")
    model = randomise_batch_norms(seeded(UNet, 313, scale=10))
    model.fc.bias.data.zero_()
    export_image_model(model, tmp / "m.onnx", (3, SIDE, SIDE))
    imported(octet_bin, tmp / "m.onnx", tmp / "m.octet")
    rng = np.random.default_rng(314)
    (tmp / "images").mkdir()
    (tmp / "masks").mkdir()
    image_steps = transforms.Compose([transforms.Resize(SIDE), transforms.CenterCrop(SIDE), transforms.ToTensor()])
    mask_steps = transforms.Compose([transforms.Resize(SIDE, interpolation=transforms.InterpolationMode.NEAREST),
                                     transforms.CenterCrop(SIDE)])
    inputs, masks = [], []
    for i, (height, width) in enumerate(SIZES):
        pixels = (blocky(rng, height, width, np.arange(256), 3)[..., None] * rng.uniform(0.3, 1, 3) +
                  rng.integers(0, 60, (height, width, 3))).clip(0, 255).astype(np.uint8)
        image = Image.fromarray(pixels, "RGB")
        name = f"{i:03d}_scene"
        image.save(tmp / "images" / (name + (".jpg" if i % 3 == 0 else ".png")))
        classes = blocky(rng, height, width, np.array([0, 1, 2, 3, 4, 255], np.uint8), 2 + i % 4)
        mask = Image.fromarray(classes, "L")
        if i % 2 == 0:
            mask = mask.convert("P")
            mask.putpalette(PALETTE)
        mask.save(tmp / "masks" / (name + ".png"))
        inputs.append(image_steps(Image.open(tmp / "images" / (name + (".jpg" if i % 3 == 0 else ".png")))).numpy())
        masks.append(np.array(mask_steps(Image.open(tmp / "masks" / (name + ".png")))))
    np.save(tmp / "x.npy", np.stack(inputs))
    np.save(tmp / "y.npy", np.stack(masks))
    quantized = run(octet_bin, "quantize", "--checkpoint", tmp / "m.octet", "--calib-data", tmp / "x.npy", "--method",
                    "max", "-o", tmp / "m.int8")
    assert quantized.returncode == 0, quantized.stderr
    return tmp


def scores(report):
    return {k: report[k] for k in ("images", "labelled_pixels", "float_top1", "int8_top1", "float_mean_iou",
                                   "int8_mean_iou", "agreement")}


def test_eval_and_predict_read_masks_as_torchvision_transforms_them(octet_bin, files):
    tmp = files
    model = ["--checkpoint", tmp / "m.octet", "--quantized", tmp / "m.int8"]
    folder = run(octet_bin, "eval", *model, "--eval-data", tmp / "images", "--eval-labels", tmp / "masks",
                 "--resize", SIDE, "--crop", SIDE, "--json", "-")
    arrays = run(octet_bin, "eval", *model, "--eval-data", tmp / "x.npy", "--eval-labels", tmp / "y.npy", "--json", "-")
    assert folder.returncode == 0 and arrays.returncode == 0, folder.stderr + arrays.stderr
    from_folder, from_arrays = scores(json.loads(folder.stdout)), scores(json.loads(arrays.stdout))
    assert from_folder == from_arrays
    masks = np.load(tmp / "y.npy")
    pixels, read, classes = octet.load_image_folder(str(tmp / "images"), resize=SIDE, crop=SIDE,
                                                    masks=str(tmp / "masks"))
    assert read.dtype == np.int64 and np.array_equal(read, masks) and classes == []
    assert np.array_equal(pixels, (np.load(tmp / "x.npy") * 255).round())
    assert from_folder["images"] == len(SIZES) and from_folder["labelled_pixels"] == np.sum(masks != 255)
    assert 0 < from_folder["float_mean_iou"] < 100 and 0 < np.sum(masks == 255) < masks.size

    maps = {}
    for name, data in (("folder", [tmp / "images", "--eval-labels", tmp / "masks", "--resize", SIDE, "--crop", SIDE]),
                       ("arrays", [tmp / "x.npy", "--eval-labels", tmp / "y.npy"])):
        result = run(octet_bin, "predict", "--quantized", tmp / "m.int8", "--eval-data", *data, "--class-map",
                     tmp / f"{name}.npy", "--json", "-")
        assert result.returncode == 0, result.stderr
        maps[name] = np.load(tmp / f"{name}.npy")
        predictions = json.loads(result.stdout)
        assert predictions["int8_top1"] == pytest.approx(from_arrays["int8_top1"], abs=1e-9)
        files = sorted(str(f) for f in (tmp / "images").iterdir()) if name == "folder" else None
        assert predictions["files"] == files  # which class map is which image's
    assert np.array_equal(maps["folder"], maps["arrays"]) and len(np.unique(maps["folder"])) > 1

    module = octet.evaluate(octet.load_checkpoint(str(tmp / "m.octet")), octet.load_quantized(str(tmp / "m.int8")),
                            eval_data=str(tmp / "images"), eval_labels=str(tmp / "masks"), resize=SIDE, crop=SIDE,
                            layers=False)
    assert scores(module) == from_arrays


def test_a_folder_of_images_alone_calibrates_as_its_arrays(octet_bin, files):
    tmp = files
    folder = run(octet_bin, "quantize", "--checkpoint", tmp / "m.octet", "--calib-data", tmp / "images", "--resize",
                 SIDE, "--crop", SIDE, "--method", "max", "-o", tmp / "folder.int8")
    assert folder.returncode == 0, folder.stderr
    x = np.load(tmp / "x.npy")
    ours, theirs = (octet.load_quantized(str(tmp / name)).predict(x) for name in ("folder.int8", "m.int8"))
    assert np.array_equal(ours, theirs)
    unlabelled = run(octet_bin, "eval", "--checkpoint", tmp / "m.octet", "--quantized", tmp / "m.int8", "--eval-data",
                     tmp / "images", "--resize", SIDE, "--crop", SIDE, "--json", "-")
    assert unlabelled.returncode == 0, unlabelled.stderr
    report = json.loads(unlabelled.stdout)
    assert report["int8_top1"] is None and report["images"] == len(SIZES) and report["agreement"] > 50
    pixels, labels, classes = octet.load_image_folder(str(tmp / "images"), resize=SIDE, crop=SIDE)
    assert labels is None and classes == [] and pixels.shape == (len(SIZES), 3, SIDE, SIDE)
    assert np.array_equal(pixels, (x * 255).round())


def test_masks_that_cannot_be_labels_are_refused(octet_bin, files, tmp_path):
    tmp = files
    first = "000_scene"

    def masks_with(change):
        folder = tmp_path / "masks"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(tmp / "masks", folder)
        change(folder)
        return folder

    def save(image, fmt="PNG"):
        return lambda folder: image.save(folder / (first + ".png"), fmt)

    colour = Image.new("RGB", SIZES[0][::-1])
    grey16 = Image.new("I;16", SIZES[0][::-1])
    out_of_range = np.zeros(SIZES[0], np.uint8)
    out_of_range[5:, :] = 7
    cases = [
        (save(colour), f"{first}.png: a colour mask; masks are class indices"),
        (save(Image.new("L", SIZES[0][::-1]), "JPEG"), f"{first}.png: a JPEG mask"),
        (save(grey16), f"{first}.png: a 16-bit mask"),
        (lambda folder: (folder / (first + ".png")).unlink(), f"{first}.jpg: no mask {tmp_path}/masks/{first}.png"),
        (save(Image.new("L", SIZES[0])), f"{first}.png: a mask of 24x30 pixels for {tmp}/images/{first}.jpg, an "
                                         "image of 30x24 (width x height)"),
        (save(Image.fromarray(out_of_range, "L")), f"{first}.png: pixel (row 3, column 0, after --resize/--crop) is 7 "
                                                   "(the model has classes 0..4; 255 marks a pixel without a label)"),
    ]
    for change, message in cases:
        masks = masks_with(change)
        for command in (["eval", "--checkpoint", tmp / "m.octet", "--quantized", tmp / "m.int8"],
                        ["predict", "--quantized", tmp / "m.int8", "--class-map", tmp_path / "maps.npy"]):
            result = run(octet_bin, *command, "--eval-data", tmp / "images", "--eval-labels", masks, "--resize", SIDE,
                         "--crop", SIDE)
            assert result.returncode == 1 and message in result.stderr, (message, result.stderr)
            assert not (tmp_path / "maps.npy").exists()

    (tmp_path / "classes" / "a").mkdir(parents=True)
    shutil.copy(tmp / "images" / (first + ".jpg"), tmp_path / "classes" / "a")
    mismatched = [
        (tmp / "images", tmp / "y.npy", "with a folder of images, --eval-labels is a folder of PNG masks"),
        (tmp / "x.npy", tmp / "masks", "a folder of masks goes with a folder of images; a .npy of images takes a .npy"),
        (tmp_path / "classes", tmp / "masks", f"{first}.jpg: no mask {tmp}/masks/a/{first}.png"),
    ]
    for images, labels, message in mismatched:
        result = run(octet_bin, "eval", "--checkpoint", tmp / "m.octet", "--eval-data", images, "--eval-labels",
                     labels, *(["--resize", SIDE, "--crop", SIDE] if images.suffix != ".npy" else []))
        assert result.returncode == 1 and message in result.stderr, (message, result.stderr)


def test_a_list_file_picks_the_images_as_pascal_voc_names_them(octet_bin, files, tmp_path):
    """Pascal VOC's layout as it ships: JPEGImages holds images without masks too, and ImageSets/Segmentation/val.txt
    names the test images (without extensions; here out of order, with a Windows line, a blank line and a name with
    its extension). --eval-list (octet.evaluate's eval_list, load_image_folder's names) reads those, in its order,
    as the .npy of the same images; --calib-list (octet.quantize's calib_list) calibrates on them as on that .npy."""
    tmp = files
    voc = tmp_path / "VOC2012"
    shutil.copytree(tmp / "images", voc / "JPEGImages")
    shutil.copytree(tmp / "masks", voc / "SegmentationClass")
    Image.new("RGB", (7, 9)).save(voc / "JPEGImages" / "unlabelled.jpg")  # no mask, not listed; another size
    picked = [5, 0, 17, 9, 12, 3, 22]
    names = [sorted((tmp / "images").iterdir())[i].name for i in picked]
    listed = [n.rsplit(".", 1)[0] for n in names[:-1]] + [names[-1]]
    (voc / "ImageSets" / "Segmentation").mkdir(parents=True)
    val = voc / "ImageSets" / "Segmentation" / "val.txt"
    val.write_bytes(("\n".join(listed[:3]) + "\r\n\n" + "\n".join(listed[3:]) + "\n").encode())
    np.save(tmp_path / "x.npy", np.load(tmp / "x.npy")[picked])
    np.save(tmp_path / "y.npy", np.load(tmp / "y.npy")[picked])
    model = ["--checkpoint", tmp / "m.octet", "--quantized", tmp / "m.int8"]
    voc_data = ["--eval-data", voc / "JPEGImages", "--eval-labels", voc / "SegmentationClass", "--eval-list", val,
                "--resize", SIDE, "--crop", SIDE]
    folder = run(octet_bin, "eval", *model, *voc_data, "--json", "-")
    arrays = run(octet_bin, "eval", *model, "--eval-data", tmp_path / "x.npy", "--eval-labels", tmp_path / "y.npy",
                 "--json", "-")
    assert folder.returncode == 0 and arrays.returncode == 0, folder.stderr + arrays.stderr
    from_arrays = scores(json.loads(arrays.stdout))
    assert scores(json.loads(folder.stdout)) == from_arrays and from_arrays["images"] == len(picked)

    for name, data in (("listed", voc_data), ("arrays", ["--eval-data", tmp_path / "x.npy"])):
        result = run(octet_bin, "predict", "--quantized", tmp / "m.int8", *data, "--class-map",
                     tmp_path / f"{name}.npy", "--json", "-")
        assert result.returncode == 0, result.stderr
        if name == "listed":
            assert json.loads(result.stdout)["files"] == [str(voc / "JPEGImages" / n) for n in names]
    assert np.array_equal(np.load(tmp_path / "listed.npy"), np.load(tmp_path / "arrays.npy"))

    pixels, masks, _ = octet.load_image_folder(str(voc / "JPEGImages"), resize=SIDE, crop=SIDE,
                                               masks=str(voc / "SegmentationClass"), names=str(val))
    assert np.array_equal(masks, np.load(tmp_path / "y.npy"))
    assert np.array_equal(pixels, (np.load(tmp_path / "x.npy") * 255).round())
    module = octet.evaluate(octet.load_checkpoint(str(tmp / "m.octet")), octet.load_quantized(str(tmp / "m.int8")),
                            eval_data=voc / "JPEGImages", eval_labels=voc / "SegmentationClass", eval_list=val,
                            resize=SIDE, crop=SIDE, layers=False)
    assert scores(module) == from_arrays

    # Calibration's float arithmetic from the inputs octet normalises (torchvision's x / 255 may differ by an ulp).
    checkpoint = octet.load_checkpoint(str(tmp / "m.octet"))
    np.save(tmp_path / "normalised.npy", octet.normalize(pixels.astype(np.uint8), checkpoint.mean, checkpoint.std))
    quantize = ["quantize", "--checkpoint", tmp / "m.octet", "--method", "max", "-o"]
    for name, data in (("listed", ["--calib-data", voc / "JPEGImages", "--calib-list", val, "--resize", SIDE,
                                   "--crop", SIDE]),
                       ("arrays", ["--calib-data", tmp_path / "normalised.npy"])):
        result = run(octet_bin, *quantize, tmp_path / f"{name}.int8", *data)
        assert result.returncode == 0, result.stderr
    x = np.load(tmp / "x.npy")
    listed_int8, arrays_int8 = (octet.load_quantized(str(tmp_path / f"{n}.int8")) for n in ("listed", "arrays"))
    assert np.array_equal(listed_int8.predict(x), arrays_int8.predict(x))
    assert not np.array_equal(listed_int8.predict(x), octet.load_quantized(str(tmp / "m.int8")).predict(x))
    module_int8 = octet.quantize(checkpoint, calib_data=voc / "JPEGImages", calib_list=val, resize=SIDE, crop=SIDE,
                                 method="max").model
    assert np.array_equal(module_int8.predict(x), listed_int8.predict(x))
    with pytest.raises(Exception, match="calib_list goes with calib_data"):
        octet.quantize(checkpoint, calib_list=val, method="max")


def test_lists_that_name_no_image_of_the_folder_are_refused(octet_bin, files, tmp_path):
    tmp = files
    images = tmp / "images"
    bad = [
        ("000_scene\nnot_there\n", "list.txt line 2: no image 'not_there' in " + str(images)),
        ("\n \r\n", "list.txt: names no image (one image name per line"),
        ("000_scene\n/etc/passwd\n", "list.txt line 2: '/etc/passwd' is an absolute path: names are relative"),
        ("000_scene\x00.jpg\n", "list.txt line 1: a NUL byte"),
    ]
    for text, message in bad:
        (tmp_path / "list.txt").write_bytes(text.encode())
        result = run(octet_bin, "eval", "--checkpoint", tmp / "m.octet", "--eval-data", images, "--eval-list",
                     tmp_path / "list.txt", "--resize", SIDE, "--crop", SIDE)
        assert result.returncode == 1 and message in result.stderr, (message, result.stderr)
    (tmp_path / "list.txt").write_text("000_scene\n")
    mismatched = [
        (["--eval-list", tmp_path / "list.txt"], "--eval-list goes with --eval-data"),
        (["--eval-data", tmp / "x.npy", "--eval-list", tmp_path / "list.txt"],
         "list.txt: a list of image names picks images of a folder, and " + str(tmp / "x.npy") + " is a .npy"),
        (["--eval-data", images, "--eval-list", tmp_path / "none.txt", "--resize", SIDE, "--crop", SIDE],
         "no list file '" + str(tmp_path / "none.txt") + "'"),
    ]
    for options, message in mismatched:
        result = run(octet_bin, "eval", "--checkpoint", tmp / "m.octet", *options)
        assert result.returncode == 1 and message in result.stderr, (message, result.stderr)
    result = run(octet_bin, "quantize", "--checkpoint", tmp / "m.octet", "--calib-list", tmp_path / "list.txt", "-o",
                 tmp_path / "q.int8")
    assert result.returncode == 1 and "--calib-list goes with --calib-data" in result.stderr, result.stderr
    assert not (tmp_path / "q.int8").exists()


def test_cityscapes_names_masks_by_suffix_in_city_subfolders(octet_bin, files, tmp_path):
    """Cityscapes' layout: leftImg8bit/val/CITY/NAME_leftImg8bit.png and gtFine/val/CITY/NAME_gtFine_labelTrainIds.png
    beside the other annotations of each image (_gtFine_color.png, colour; _gtFine_labelIds.png). --image-suffix and
    --mask-suffix (octet.evaluate's and load_image_folder's image_suffix, mask_suffix) read every image under the
    folder whose name ends with the one, sorted by path, and its mask named with the other, as the .npy of the same
    images in that order."""
    tmp = files
    images, masks = tmp_path / "leftImg8bit" / "val", tmp_path / "gtFine" / "val"
    originals = sorted((tmp / "images").iterdir())
    order = []
    for i, original in enumerate(originals[:9]):
        city = ("bonn", "aachen", "frankfurt")[i % 3]
        name = f"{city}_{i:06d}_000019"
        (images / city).mkdir(parents=True, exist_ok=True)
        (masks / city).mkdir(parents=True, exist_ok=True)
        Image.open(original).convert("RGB").save(images / city / f"{name}_leftImg8bit.png")
        shutil.copy(tmp / "masks" / (original.stem + ".png"), masks / city / f"{name}_gtFine_labelTrainIds.png")
        Image.new("RGB", (4, 4)).save(masks / city / f"{name}_gtFine_color.png")
        Image.new("L", Image.open(original).size, 33).save(masks / city / f"{name}_gtFine_labelIds.png")
        order.append((f"{city}/{name}", i))
    Image.new("RGB", (5, 5)).save(images / "bonn" / "notes.png")  # no suffix: not read
    picked = [i for _, i in sorted(order)]
    np.save(tmp_path / "x.npy", np.load(tmp / "x.npy")[picked])
    np.save(tmp_path / "y.npy", np.load(tmp / "y.npy")[picked])
    model = ["--checkpoint", tmp / "m.octet", "--quantized", tmp / "m.int8"]
    suffixes = ["--image-suffix", "_leftImg8bit.png", "--mask-suffix", "_gtFine_labelTrainIds.png"]
    folder = run(octet_bin, "eval", *model, "--eval-data", images, "--eval-labels", masks, *suffixes, "--resize", SIDE,
                 "--crop", SIDE, "--json", "-")
    arrays = run(octet_bin, "eval", *model, "--eval-data", tmp_path / "x.npy", "--eval-labels", tmp_path / "y.npy",
                 "--json", "-")
    assert folder.returncode == 0 and arrays.returncode == 0, folder.stderr + arrays.stderr
    from_arrays = scores(json.loads(arrays.stdout))
    assert scores(json.loads(folder.stdout)) == from_arrays and from_arrays["images"] == 9
    pixels, read, _ = octet.load_image_folder(str(images), resize=SIDE, crop=SIDE, masks=str(masks),
                                              image_suffix="_leftImg8bit.png", mask_suffix="_gtFine_labelTrainIds.png")
    assert np.array_equal(read, np.load(tmp_path / "y.npy"))
    module = octet.evaluate(octet.load_checkpoint(str(tmp / "m.octet")), octet.load_quantized(str(tmp / "m.int8")),
                            eval_data=images, eval_labels=masks, image_suffix="_leftImg8bit.png",
                            mask_suffix="_gtFine_labelTrainIds.png", resize=SIDE, crop=SIDE, layers=False)
    assert scores(module) == from_arrays

    refusals = [
        (["--eval-labels", masks, "--mask-suffix", "_gtFine_labelIds.png", "--image-suffix", "_leftImg8bit.png"],
         "aachen_000001_000019_gtFine_labelIds.png: pixel (row 0, column 0, after --resize/--crop) is 33"),
        (["--eval-labels", masks, "--image-suffix", "_leftImg8bit.png"],
         f"no mask {masks}/aachen/aachen_000001_000019.png"),
        (["--mask-suffix", "_gtFine_labelTrainIds.png"], "--image-suffix and --mask-suffix say how --eval-data's"),
    ]
    for options, message in refusals:
        result = run(octet_bin, "eval", *model, "--eval-data", images, *options, "--resize", SIDE, "--crop", SIDE)
        assert result.returncode == 1 and message in result.stderr, (message, result.stderr)
