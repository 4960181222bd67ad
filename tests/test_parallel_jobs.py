"""Jobs in worker processes (studies.parallel.run_jobs): the same results in any number of
processes, every job's progress, and a failing job raised as it is."""

import statistics

import pytest

from netsim.errors import NetsimError
from studies.parallel import run_jobs


def test_results_do_not_depend_on_the_processes():
    work = [(("mean", i), statistics.fmean, {"data": range(i + 1)}) for i in range(7)]
    seen = []
    out = run_jobs(work, 3, progress=lambda done, total: seen.append((done, total)))
    assert out == run_jobs(work, 1) == {("mean", i): i / 2 for i in range(7)}
    assert seen == [(k, 7) for k in range(1, 8)]  # one call per finished job, in any order


def test_a_failing_job_is_raised_as_it_is():
    work = [("ok", pow, {"base": 2, "exp": 3}), ("bad", statistics.fmean, {"data": []}),
            ("ok2", pow, {"base": 3, "exp": 2})]
    with pytest.raises(statistics.StatisticsError, match="at least one data point"):
        run_jobs(work, 2)
    with pytest.raises(NetsimError, match="processes must be an integer >= 1"):
        run_jobs(work, 0)
    assert run_jobs([], 2) == {}


def _sleep_then_mark(path, seconds):
    import time

    time.sleep(seconds)
    open(path, "w").close()
    return path


def test_a_ctrl_c_caught_by_another_thread_still_stops_the_jobs(tmp_path):
    # The kernel may hand a terminal's SIGINT to any thread not blocking it (a BLAS or numba
    # thread): Python's flag is set there and the main thread, waiting for a result, is not
    # woken. raise_signal from a helper thread does just that. The parent must stop the
    # workers before either job ends (neither marks its file), not when the first result
    # comes in 20 s later.
    import signal
    import threading

    paths = [str(tmp_path / f"job{i}") for i in range(2)]
    timer = threading.Timer(1.0, signal.raise_signal, (signal.SIGINT,))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        run_jobs([(p, _sleep_then_mark, {"path": p, "seconds": 20}) for p in paths], 2)
    timer.join()
    assert not any((tmp_path / f"job{i}").exists() for i in range(2))


def test_a_ctrl_c_while_the_interpreter_joins_threads_is_one_line():
    # After the command returns, the interpreter joins the threads left running (a Dask
    # cluster's) in threading._shutdown; a Ctrl-C there printed that function's traceback.
    import os
    import signal
    import subprocess
    import sys

    script = ("import threading, time\n"
              "from studies.cli import entry\n"
              "entry._exit_on_ctrl_c()\n"
              "threading.Thread(target=time.sleep, args=(30,)).start()\n"
              "print('ready', flush=True)\n")
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert p.stdout.readline() == "ready\n"
    import time

    time.sleep(0.3)   # past the script's end: in threading._shutdown
    os.kill(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=20)
    assert p.returncode == 130 and err == "netsim: interrupted\n", err


def test_a_ctrl_c_during_a_failed_start_is_the_interruption_not_the_failure():
    # A spawned Dask worker that the Ctrl-C reaches before its first import dies, and the
    # start raises "Nanny failed to start": the noted Ctrl-C is raised instead.
    import signal

    from studies.parallel import ctrl_c_deferred

    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_deferred():
            signal.raise_signal(signal.SIGINT)   # blocked here: noted when the mask lifts
            raise RuntimeError("Nanny failed to start.")
