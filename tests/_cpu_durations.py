"""`--cpu-durations=N`: the N tests that used the most CPU, printed at the end
beside pytest's `--durations` (wall time).

On a 2-core CI machine running two jobs of two workers each, every phase of
a test waits on the others, so wall time says little about what a test
costs: a build that takes 400 s of wall may be 300 s of CPU or 600. The CPU
seconds here are the test's process and the processes it waited for (builds,
compilers, qemu guests: RUSAGE_CHILDREN counts each child once it is
reaped, with the children it reaped), user plus system, per phase (setup,
call, teardown) as --durations gives them. Under pytest-xdist each worker
measures its own tests and sends the figures with the test's report
(user_properties), and the controller prints them.

A daemon the test started and stopped (distccd) counts where it is reaped;
one that outlives the session is not counted.
"""

from __future__ import annotations

import resource

import pytest

KEY = "cpu_seconds"


def _cpu_now() -> float:
    own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# A plugin of its own (`-p _cpu_durations`), whose two hooks tests/conftest.py
# calls from its own.
def pytest_addoption(parser) -> None:
    parser.addoption("--cpu-durations", type=int, default=None, metavar="N",
                     help="print the N tests (phases) that used the most CPU: this process "
                          "and the processes it waited for (0: all)")


def pytest_configure(config) -> None:
    count = config.getoption("cpu_durations")
    if count is not None:
        config.pluginmanager.register(CpuDurations(count), "cpu_durations")


class CpuDurations:
    def __init__(self, count: int):
        self.count = count
        self.rows: list[tuple[float, str, str]] = []

    # In the process that runs the test (a worker, or the only process).
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        item._cpu_mark = _cpu_now()
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        now = _cpu_now()
        outcome.get_result().user_properties.append((KEY, now - item._cpu_mark))
        item._cpu_mark = now  # the next phase starts here

    # In the process that reports (the controller under xdist).
    def pytest_runtest_logreport(self, report):
        spent = [v for k, v in report.user_properties if k == KEY]
        if spent:
            self.rows.append((spent[-1], report.when, report.nodeid))

    def pytest_terminal_summary(self, terminalreporter):
        rows = sorted(self.rows, reverse=True)
        shown = rows if self.count == 0 else rows[:self.count]
        tr = terminalreporter
        tr.write_sep("=", f"most CPU {len(shown)} (user+sys: the test's process and the "
                          f"processes it waited for)")
        for seconds, when, nodeid in shown:
            tr.write_line(f"{seconds:8.2f}s {when:<8} {nodeid}")
        tr.write_line(f"{sum(r[0] for r in rows):8.2f}s of CPU in all {len(rows)} phases")
