"""Writes the seed corpus of fuzz_npy (tests/fuzz/corpus/npy): small arrays as
numpy.save writes them, the kinds the user's data comes in (float32 images,
int64 and int32 labels, a segmentation's uint8 masks) and a few it refuses. Run with Debian's python3
(numpy): /usr/bin/python3 tests/fuzz/make_npy_seeds.py"""

import pathlib

import numpy as np

OUT = pathlib.Path(__file__).resolve().parent / "corpus" / "npy"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    seeds = {
        "images_2x3x2x2.npy": rng.normal(size=(2, 3, 2, 2)).astype(np.float32),
        "images_1x1x3x3.npy": rng.normal(size=(1, 1, 3, 3)).astype(np.float32),
        "labels_int64.npy": np.array([3, 0, 9], dtype=np.int64),
        "labels_int32.npy": np.array([1, 2], dtype=np.int32),
        "float64.npy": np.zeros((1, 3, 2, 2)),
        "fortran.npy": np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)),
        "scalar.npy": np.float32(1.5),
        "masks_uint8.npy": np.array([[[0, 1, 255], [9, 2, 3]], [[255, 255, 4], [5, 6, 7]]], dtype=np.uint8),
    }
    for name, array in seeds.items():
        np.save(OUT / name, array)
    # Format 2.0 (a 4-byte header length), as numpy writes for long headers.
    with open(OUT / "images_v2.npy", "wb") as f:
        np.lib.format.write_array(f, seeds["images_2x3x2x2.npy"], version=(2, 0))


if __name__ == "__main__":
    main()
