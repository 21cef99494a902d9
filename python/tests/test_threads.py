"""Several Python threads may call one model at once (long calls release the
GIL): each gets the bits that one thread gets."""

import threading

import numpy as np

import octet


def run_in_threads(call, inputs):
    """Runs call(x) for every x of `inputs`, each in its own thread, all at once."""
    results, errors = [None] * len(inputs), []
    start = threading.Barrier(len(inputs))

    def worker(i):
        try:
            start.wait()
            results[i] = call(inputs[i])
        except BaseException as e:  # re-raised in the test's thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def test_int8_predict_from_several_threads_gives_the_bits_of_one(quantized, test_images):
    images, _ = test_images
    batches = [images[i * 60:(i + 1) * 60] for i in range(4)] * 2
    model = quantized.model
    expected = [model.predict(x, dequantize=False) for x in batches]
    for got, want in zip(run_in_threads(lambda x: model.predict(x, dequantize=False), batches), expected):
        assert np.array_equal(got, want)


def test_int8_activations_from_several_threads_give_the_bits_of_one(quantized, test_images):
    images, _ = test_images
    batches = [images[i * 20:(i + 1) * 20] for i in range(4)]
    model = quantized.model
    expected = [model.activations(x) for x in batches]
    for got, want in zip(run_in_threads(model.activations, batches), expected):
        assert got.keys() == want.keys()
        for name in want:
            assert np.array_equal(got[name], want[name]), name
