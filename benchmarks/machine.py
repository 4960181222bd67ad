"""The machine and moment a benchmark ran on, printed at the head of its table."""

import datetime
import os
import platform
import subprocess


def describe():
    """One line: UTC date and time, CPU model, cores, memory, load average, Python, commit."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError):
        mem = float("nan")
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                                timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.TimeoutExpired):
        commit = "unknown"
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"{now}; {cpu}, {os.cpu_count()} cores, {mem:.0f} GiB; load average {load}; "
            f"Python {platform.python_version()}; commit {commit}")
