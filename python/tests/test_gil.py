"""Long calls release the GIL: Python threads keep running while octet works."""

import threading
import time

import pytest

import octet


def longest_python_pause_during(call):
    """Runs `call` in a thread while this thread counts in Python. Returns the
    longest time this thread could not run during the call, and the call's duration."""
    done = threading.Event()
    span, errors = {}, []

    def worker():
        try:
            span["start"] = time.perf_counter()
            call()
            span["end"] = time.perf_counter()
        except BaseException as e:  # re-raised in the test's thread
            errors.append(e)
        finally:
            done.set()

    pauses = []
    thread = threading.Thread(target=worker)
    last = time.perf_counter()
    thread.start()
    while not done.is_set():
        now = time.perf_counter()
        if now - last > 0.002:
            pauses.append((last, now))
        last = now
    thread.join()
    if errors:
        raise errors[0]
    start, end = span["start"], span["end"]
    longest = max((min(b, end) - max(a, start) for a, b in pauses), default=0.0)
    return longest, end - start


@pytest.fixture(scope="module")
def all_test_images(lenet, fmnist_test):
    images, _ = fmnist_test
    return octet.normalize(images, lenet.mean, lenet.std)


CALLS = {
    "int8 predict": lambda lenet, q, x: q.model.predict(x),
    "float predict": lambda lenet, q, x: lenet.predict(x),
    "quantize": lambda lenet, q, x: octet.quantize(lenet, method="max", weight_rounding="gptq", calib_samples=512),
    "evaluate": lambda lenet, q, x: octet.evaluate(lenet, q.model),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_long_calls_let_other_python_threads_run(name, lenet, quantized, all_test_images):
    call = CALLS[name]
    longest, duration = longest_python_pause_during(lambda: call(lenet, quantized, all_test_images))
    # Holding the GIL would stop this thread for the whole call; released, it
    # pauses only when the (2-core, busy) machine does not schedule it.
    assert duration > 0.05, f"{name} took {duration:.3f} s: too short to tell"
    assert longest < 0.75 * duration, f"{name}: Python stopped for {longest:.3f} s of a {duration:.3f} s call"
