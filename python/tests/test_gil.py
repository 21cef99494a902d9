"""Long calls release the GIL: Python threads keep running while octet works.

Checked without clocks: with time-based switching turned off (a switch
interval far longer than any call), a thread that holds the GIL keeps it until
it blocks or gives it up. This thread then runs Python while octet's call is
still in flight only if octet gave the GIL up; holding it, octet would finish
first, however fast or loaded the machine. (The calls are long, a second or so,
so that this thread is scheduled at all while one runs.)"""

import sys
import threading

import pytest

import octet

NO_TIME_SWITCHING = 1000.0  # seconds: longer than any call here


def python_ran_during(call):
    """Runs `call` in a worker thread. Returns how many times this thread ran
    Python (counting, each time giving the GIL up again) while the call was in
    flight, and re-raises the call's error."""
    entered, finished = threading.Event(), threading.Event()
    errors = []

    def worker():
        try:
            entered.set()
            call()
        except BaseException as e:  # re-raised in the test's thread
            errors.append(e)
        finally:
            finished.set()

    previous = sys.getswitchinterval()
    sys.setswitchinterval(NO_TIME_SWITCHING)
    try:
        thread = threading.Thread(target=worker)
        thread.start()
        entered.wait()
        counted = 0
        while not finished.is_set():
            counted += 1
            finished.wait(0.001)  # blocks: gives the GIL back to octet's thread if it wants it
        thread.join()
    finally:
        sys.setswitchinterval(previous)
    if errors:
        raise errors[0]
    return counted


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
    counted = python_ran_during(lambda: call(lenet, quantized, all_test_images))
    assert counted > 0, f"{name} kept the GIL: no other Python thread ran while it worked"


def test_a_call_that_keeps_the_gil_is_caught():
    """The check itself: pure Python never gives the GIL up on its own here."""

    def busy_python():
        total = 0
        for i in range(2_000_000):
            total += i
        return total

    assert python_ran_during(busy_python) == 0
