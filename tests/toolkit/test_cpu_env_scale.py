"""The C runtime's <PREFIX>_ENABLE/DISABLE_CPU_FEATURES parsing costs time
linear in the value (issue 45): a value of a million tokens is refused, in
one line naming the variable and the limit, within a bound a quadratic scan
of it cannot meet; a value at the limit, of as many tokens as fit, is parsed.

An exec'd program's environment string is at most 128 KiB on Linux, so the
program sets the value itself (setenv) and times dispatch_cpu_init().
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _cpu_program import CC, compile_program, write_headers  # noqa: E402

ENV_MAX = 1023  # DISPATCH_CPU_ENV_MAX in include/dispatch/cpu_runtime.h

MAIN = r"""
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dispatch/cpu_features.h"

/* argv: VARIABLE TOKEN COUNT. Sets VARIABLE to COUNT copies of TOKEN, each
 * followed by a space, runs the detection, prints its error (or "ok") and
 * the seconds it took. */
int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    size_t n = strtoul(argv[3], NULL, 10), k = strlen(argv[2]);
    char *value = malloc(n * (k + 1) + 1);
    if (!value) return 2;
    for (size_t i = 0; i < n; ++i) {
        memcpy(value + i * (k + 1), argv[2], k);
        value[i * (k + 1) + k] = ' ';
    }
    value[n * (k + 1)] = '\0';
    setenv(argv[1], value, 1);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = dispatch_cpu_init();
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%s\n%.6f\n", rc ? dispatch_cpu_error() : "ok",
           (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9);
    return rc ? 1 : 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    if CC is None:
        pytest.skip("no C compiler found")
    work = tmp_path_factory.mktemp("cpu-env-scale")
    (work / "main.c").write_text(MAIN)
    return compile_program(CC, write_headers(work), work / "main.c", work / "env_scale", "-O1")


def run(program: Path, var: str, token: str, count: int):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISPATCH_")}
    proc = subprocess.run([str(program), var, token, str(count)], env=env,
                          capture_output=True, text=True, timeout=60)
    message, seconds = proc.stdout.splitlines()
    return proc.returncode, message, float(seconds)


@pytest.mark.parametrize("var", ["DISPATCH_ENABLE_CPU_FEATURES",
                                 "DISPATCH_DISABLE_CPU_FEATURES"])
def test_a_million_tokens_are_refused_in_one_line_in_linear_time(program, var):
    rc, message, seconds = run(program, var, "avx2", 1_000_000)
    assert rc == 1
    assert message == (f"{var} is 5000000 characters long; at most {ENV_MAX} are accepted")
    # a scan quadratic in 5,000,000 characters is 2.5e13 steps: hours, not this
    assert seconds < 1.0, seconds


def test_a_value_at_the_limit_of_many_tokens_is_parsed(program):
    # `baseline ` 113 times: 1017 characters, 113 tokens, every one read
    rc, message, seconds = run(program, "DISPATCH_ENABLE_CPU_FEATURES", "baseline", 113)
    assert (rc, message) == (0, "ok")
    assert seconds < 1.0, seconds
    rc, message, _ = run(program, "DISPATCH_ENABLE_CPU_FEATURES", "x", ENV_MAX // 2)  # 1022 characters
    assert rc == 1 and "names 'x', which is not a CPU feature" in message
