# SPDX-License-Identifier: BSD-3-Clause
"""The no-hang bound of the bad-input tests (conftest.assert_ended_quickly)
widens with the machine's load, measured beside the test, but still fails
a job that waited for a timeout."""

import time

import pytest
from conftest import assert_ended_quickly


def test_a_job_that_ended_at_once_passes():
    assert_ended_quickly(time.monotonic(), 2, 10)


def test_a_job_that_waited_a_minute_fails_even_with_the_load_allowance():
    # the wrong case, built: a job that took 100 s against a 10 s bound; an
    # empty 2-rank job here takes a few seconds even under load, so the
    # widened bound stays far below 100 s
    with pytest.raises(AssertionError, match=r"took 100\.\d s: more than 10 s \+ 3 x"):
        assert_ended_quickly(time.monotonic() - 100, 2, 10)
